"""TensorFlow SavedModel folders, through their ``serving_default`` signature."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.load.rejections import rejected_by
from edgepipe.tensors import Signature, TensorSpec

SIGNATURE_KEY = "serving_default"


def _specs(specs: dict[str, Any]) -> tuple[TensorSpec, ...]:
    return tuple(
        TensorSpec(name=name, shape=tuple(spec.shape.as_list()), dtype=np.dtype(spec.dtype.as_numpy_dtype))
        for name, spec in sorted(specs.items())
    )


def load(path: Path) -> tuple[Any, Signature]:
    """The loaded SavedModel object and the signature of its ``serving_default`` function."""
    from edgepipe.frameworks import import_tensorflow
    from edgepipe.limits import check_model_file

    check_model_file(path)
    tf = import_tensorflow()
    from google.protobuf.message import DecodeError

    errors = (tf.errors.OpError, DecodeError, ValueError, TypeError, KeyError, AttributeError, OSError)
    with rejected_by("tensorflow", ("tensorflow", "keras", "google"), errors, "cannot load SavedModel", path,
                     "Export it again with tf.saved_model.save or model.export"):
        loaded = tf.saved_model.load(str(path))
    if SIGNATURE_KEY not in loaded.signatures:
        raise ModelLoadError(f"SavedModel has no '{SIGNATURE_KEY}' signature", path=path,
                             fix="Export it with a serving signature")
    function = loaded.signatures[SIGNATURE_KEY]
    inputs = _specs(function.structured_input_signature[1])
    outputs = _specs(function.structured_outputs)
    return loaded, Signature(inputs=inputs, outputs=outputs)
