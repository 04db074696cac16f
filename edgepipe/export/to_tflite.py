"""Float TFLite through the TFLite converter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from edgepipe.export.tf_function import SERVING_ENDPOINT, TFGraph


def tflite_converter(graph: TFGraph) -> Any:
    """A fresh ``TFLiteConverter`` over the batch-1 SavedModel of ``graph`` (a converter is single-use)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    return tf.lite.TFLiteConverter.from_saved_model(str(graph.saved_model), signature_keys=[SERVING_ENDPOINT])


def export_tflite(graph: TFGraph, path: Path) -> Path:
    """Write the float TFLite of ``graph`` to ``path``."""
    from edgepipe.native_logs import native_stderr_to_log

    with native_stderr_to_log():
        path.write_bytes(tflite_converter(graph).convert())
    return path
