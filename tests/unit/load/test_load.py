"""Loading models of every format, and refusing what is not a model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.errors import ModelLoadError
from edgepipe.load import detect_format, load_model


def test_keras_reference_model(reference_model: Path) -> None:
    model = load_model(reference_model)
    assert model.format == "keras" and model.is_trainable
    assert model.signature.inputs[0].shape == (None, 8, 8, 1)
    assert model.signature.outputs[0].shape == (None, 10)
    assert len(model.sha256) == 64


def test_onnx_model(tiny: dict[str, Path]) -> None:
    model = load_model(tiny["onnx"])
    assert model.format == "onnx"
    spec = model.signature.inputs[0]
    assert (spec.name, spec.shape, spec.dtype) == ("x", (1, 2, 6, 6), np.dtype(np.float32))


def test_truncated_onnx_is_refused(tiny: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(tiny["onnx"].read_bytes()[:200])
    with pytest.raises(ModelLoadError, match="not a valid ONNX model"):
        load_model(broken)


def test_text_renamed_keras_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.keras"
    fake.write_text("this is not a model")
    with pytest.raises(ModelLoadError, match="not a Keras 3 model"):
        load_model(fake)


def test_text_renamed_tflite_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.tflite"
    fake.write_text("this is not a model")
    with pytest.raises(ModelLoadError, match="no TFL3 identifier"):
        load_model(fake)


def test_missing_model(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="model not found"):
        detect_format(tmp_path / "none.onnx")


def test_unknown_suffix(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="unknown model file type '.pt'"):
        detect_format(path)


def test_folder_without_saved_model(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not a SavedModel"):
        detect_format(tmp_path)
