"""The loaded source model: format, content hash, signature and the in-memory handle."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.hashing import sha256_of
from edgepipe.load.detect import ModelFormat, detect_format
from edgepipe.tensors import Signature

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SourceModel:
    """A model as the user gave it.

    ``handle`` is the framework object: a ``keras.Model``, a loaded SavedModel,
    an ``onnx.ModelProto`` or the TFLite flatbuffer bytes.
    """

    path: Path
    format: ModelFormat
    sha256: str
    signature: Signature
    handle: Any

    @property
    def name(self) -> str:
        """The model's name in output folders: the file's stem (or the SavedModel folder's name)."""
        return self.path.name if self.path.is_dir() else self.path.stem

    @property
    def is_trainable(self) -> bool:
        """True when the model carries its training graph (Keras), so QAT can fine-tune it."""
        return self.format == "keras"


def load_model(path: Path, input_shapes: dict[str, list[int]] | None = None) -> SourceModel:
    """Load ``path`` without executing any code it contains; user errors for anything unreadable."""
    fmt = detect_format(path)
    if fmt == "pytorch":
        return _load_torch(path)
    if fmt == "keras":
        from edgepipe.load import keras_loader as loader
    elif fmt == "savedmodel":
        from edgepipe.load import savedmodel_loader as loader  # type: ignore[no-redef]
    elif fmt == "onnx":
        from edgepipe.load import onnx_loader as loader  # type: ignore[no-redef]
    else:
        from edgepipe.load import tflite_loader as loader  # type: ignore[no-redef]
    # ONNX inputs with dynamic dimensions are fixed on load (config `input_shapes`, else batch size 1).
    if input_shapes and fmt != "onnx":
        log.warning("input_shapes (%s) is ignored: it applies to ONNX models only; this %s model keeps the "
                    "shapes it declares, with batch size 1", ", ".join(input_shapes), fmt)
    handle, signature = loader.load(path, input_shapes) if fmt == "onnx" else loader.load(path)  # type: ignore[call-arg]
    log.info("loaded %s model %s: inputs %s", fmt, path,
             ", ".join(spec.describe() for spec in signature.inputs))
    return SourceModel(path=path, format=fmt, sha256=sha256_of(path), signature=signature, handle=handle)


def _load_torch(path: Path) -> SourceModel:
    """A ``.pt2`` archive (checked, no code run) or a ``python:`` factory (the user's code, run on request)."""
    from edgepipe.load import torch_loader

    if torch_loader.is_factory(path):
        handle, signature, digest = torch_loader.load_factory(str(path))
    else:
        (handle, signature), digest = torch_loader.load_pt2(path), sha256_of(path)
    log.info("loaded pytorch model %s: inputs %s", path, ", ".join(spec.describe() for spec in signature.inputs))
    return SourceModel(path=path, format="pytorch", sha256=digest, signature=signature, handle=handle)
