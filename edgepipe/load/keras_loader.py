"""Keras 3 ``.keras`` files, loaded with ``safe_mode=True`` so no embedded code (Lambda) ever runs."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.tensors import Signature, TensorSpec


def _spec(tensor: Any) -> TensorSpec:
    return TensorSpec(name=tensor.name, shape=tuple(tensor.shape), dtype=np.dtype(tensor.dtype))


def load(path: Path) -> tuple[Any, Signature]:
    """The ``keras.Model`` in ``path`` and its signature."""
    if not zipfile.is_zipfile(path):
        raise ModelLoadError("not a Keras 3 model (a .keras file is a zip archive)", path=path,
                             fix="Save the model with model.save('name.keras')")
    from edgepipe.frameworks import import_keras

    keras = import_keras()
    try:
        model = keras.saving.load_model(path, compile=False, safe_mode=True)
    except Exception as exc:  # noqa: BLE001 - any failure to parse a user's file is a user error
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelLoadError(f"cannot load Keras model ({reason})", path=path,
                             fix="Check the file is a Keras 3 model without Lambda layers") from None
    signature = Signature(inputs=tuple(_spec(t) for t in model.inputs),
                          outputs=tuple(_spec(t) for t in model.outputs))
    return model, signature
