"""Which format a model path is, from its name and its first bytes (never from executing it)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from edgepipe.errors import ModelLoadError

ModelFormat = Literal["keras", "savedmodel", "onnx", "tflite"]

_SUFFIXES: dict[str, ModelFormat] = {".keras": "keras", ".onnx": "onnx", ".tflite": "tflite"}
_FIX = "Give a .keras file, a SavedModel folder, an .onnx or a .tflite file"


def detect_format(path: Path) -> ModelFormat:
    """The model format of ``path``; a user error when it is missing or not a model."""
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
