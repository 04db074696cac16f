"""Legacy Keras HDF5 models (``.h5``/``.hdf5``, what Keras 2 saved): loaded by Keras 3 and exported like a
``.keras`` model; a weights-only file, a file that is not HDF5, or an upper-case suffix Keras would not read as HDF5,
is refused with one line naming the file and the fix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.cli import main
from edgepipe.errors import ExitCode, ModelLoadError
from edgepipe.load import load_model
from tests.models.make_models import SHAPE


def _tiny_h5(path: Path) -> Path:
    """The tiny Keras CNN of tests/models/make_models.py saved as a legacy HDF5 file."""
    from edgepipe.frameworks import import_keras

    keras = import_keras()
    keras.utils.set_random_seed(1)
    inputs = keras.Input(SHAPE, name="image")
    x = keras.layers.SeparableConv2D(8, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.BatchNormalization()(x)
    outputs = keras.layers.Dense(4, activation="softmax")(keras.layers.GlobalAveragePooling2D()(x))
    keras.Model(inputs, outputs).save(path)
    return path


def test_an_h5_model_loads_and_exports_to_onnx_that_computes_it(tmp_path: Path) -> None:
    import onnxruntime as ort

    path = _tiny_h5(tmp_path / "tiny.h5")
    model = load_model(path)
    assert model.format == "keras" and model.signature.inputs[0].shape == (None, *SHAPE)
    assert main(["export", "-q", "-m", str(path), "-o", str(tmp_path / "out")]) == ExitCode.OK
    x = np.random.default_rng(0).random((1, *SHAPE), dtype=np.float32)
    session = ort.InferenceSession(str(tmp_path / "out" / "model.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_allclose(got, np.asarray(model.handle(x)), atol=1e-5)
    assert (tmp_path / "out" / "model.tflite").is_file()


def test_a_weights_only_h5_is_refused_with_the_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from edgepipe.frameworks import import_keras

    model = import_keras().models.load_model(_tiny_h5(tmp_path / "tiny.h5"), compile=False)
    weights = tmp_path / "weights.weights.h5"
    model.save_weights(weights)
    renamed = weights.rename(tmp_path / "weights.h5")
    with pytest.raises(ModelLoadError, match="holds weights only"):
        load_model(renamed)
    assert main(["export", "-q", "-m", str(renamed), "-o", str(tmp_path / "out")]) == ExitCode.USER_ERROR
    err = capsys.readouterr().err
    assert "weights.h5" in err and "load_weights" in err and "Traceback" not in err
    assert not (tmp_path / "out" / "model.onnx").exists()


def test_a_text_file_named_h5_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "model.hdf5"
    fake.write_text("not a model")
    with pytest.raises(ModelLoadError, match="not an HDF5 file"):
        load_model(fake)


def test_an_upper_case_suffix_is_refused_with_the_rename(tmp_path: Path) -> None:
    path = _tiny_h5(tmp_path / "tiny.h5").rename(tmp_path / "tiny.H5")
    with pytest.raises(ModelLoadError, match="Rename the file to tiny.h5"):
        load_model(path)
