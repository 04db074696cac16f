"""Which format a model path is, from its name and its first bytes (never from executing it)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from edgepipe.errors import ModelLoadError

ModelFormat = Literal["keras", "savedmodel", "onnx", "tflite", "pytorch"]

#: Keras 2 saved whole models as HDF5 (``.h5``/``.hdf5``); Keras 3 still loads them, so they are Keras models here.
_SUFFIXES: dict[str, ModelFormat] = {".keras": "keras", ".h5": "keras", ".hdf5": "keras", ".onnx": "onnx",
                                     ".tflite": "tflite", ".pt2": "pytorch"}
_FIX = "Give a .keras or Keras .h5 file, a SavedModel folder, an .onnx, a .tflite or a torch.export .pt2 file"


def detect_format(path: Path) -> ModelFormat:
    """The model format of ``path``; a user error when it is missing or not a model."""
    if str(path).startswith("python:"):  # a PyTorch factory the user names (edgepipe.load.torch_loader)
        return "pytorch"
    if not path.exists():
        raise ModelLoadError("model not found", path=path, fix="Check the --model path or `model` in the config")
    if path.is_dir():
        if (path / "saved_model.pb").is_file():
            return "savedmodel"
        raise ModelLoadError("folder is not a SavedModel (no saved_model.pb)", path=path, fix=_FIX)
    fmt = _SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ModelLoadError(f"unknown model file type '{path.suffix}'", path=path, fix=_FIX)
    return fmt
