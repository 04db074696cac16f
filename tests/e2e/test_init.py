"""``edgepipe init MODEL``: a commented config from the model's inputs, valid as written, never overwriting."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.cli.init_config import describe_inputs, suggested_shapes
from edgepipe.config import load_config
from edgepipe.errors import ExitCode
from edgepipe.load import load_model
from tests.models.formats import nchw_cnn, two_in_two_out
from tests.realmodels import fetch


def test_nchw_image_model_gets_shapes_preprocess_and_a_loadable_config(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    model = nchw_cnn(tmp_path / "cnn.onnx")
    config = tmp_path / "edgepipe.toml"
    assert main(["init", str(model), "--output", str(config)]) == ExitCode.OK
    assert "wrote" in capsys.readouterr().out
    text = config.read_text()
    assert "#   image  [N, 3, 64, 64]  float32  -> image-NCHW" in text
    assert 'layout = "NCHW"' in text and "size = [64, 64]" in text
    cfg = load_config(config)  # strict validation: every key init writes exists
    assert cfg.model == model.resolve() and cfg.input_shapes == {"image": [1, 3, 64, 64]}
    assert cfg.preprocess.layout == "NCHW" and cfg.data.calibration == tmp_path / "calib"
    assert load_model(cfg.model, input_shapes=cfg.input_shapes).signature.inputs[0].shape == (1, 3, 64, 64)


def test_shared_dimension_names_get_one_size(tmp_path: Path) -> None:
    inputs = describe_inputs(two_in_two_out(tmp_path / "two.onnx"))
    assert [(i.name, i.dims, i.kind()) for i in inputs] == [("frames", ("batch", "seq"), "audio"),
                                                           ("state", ("batch", 8), "tensor")]
    assert suggested_shapes(inputs) == {"frames": [1, 16000], "state": [1, 8]}


def test_paddle_question_marks_are_not_one_shared_dimension() -> None:
    """PaddlePaddle exports write ``-1`` and ``?`` for dims that are unrelated (the OCR classifier's H and W)."""
    model = fetch.model_file(fetch.RAPIDOCR, "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx")
    (info,) = describe_inputs(model)
    assert info.dims == (None, 3, None, None) and info.kind() == "image-NCHW"
    assert suggested_shapes([info]) == {"x": [1, 3, 224, 224]}


def test_real_tflite_and_recurrent_onnx(tmp_path: Path) -> None:
    face = describe_inputs(fetch.mediapipe("face_detection/face_detection_short_range.tflite"))
    assert [(i.dims, i.kind()) for i in face] == [((1, 128, 128, 3), "image-NHWC")]
    assert suggested_shapes(face) == {}
    config = tmp_path / "vad.toml"
    assert main(["init", str(fetch.silero()), "-o", str(config)]) == ExitCode.OK
    text = config.read_text()
    assert "#   state  [2, 1, 128]  float32  -> state" in text and "#   input  [1, 576]  float32  -> audio" in text
    assert "\ninput_shapes" not in text and "\n[preprocess]" not in text  # static shapes; two inputs: a .npz
    assert load_config(config).data.calibration == tmp_path / "calibration.npz"


def test_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "edgepipe.toml"
    config.write_text("# mine\n")
    assert main(["init", str(nchw_cnn(tmp_path / "cnn.onnx")), "-o", str(config)]) == ExitCode.USER_ERROR
    assert config.read_text() == "# mine\n"
    err = capsys.readouterr().err
    assert "already exists" in err and "Traceback" not in err


def test_missing_model_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "e.toml")]) == ExitCode.USER_ERROR
    assert "model not found" in capsys.readouterr().err and not (tmp_path / "e.toml").exists()


def _identity_model(path: Path, inputs: dict[str, tuple[list[int | str], int]]) -> Path:
    """An ONNX model passing each input through (``name: (dims, onnx elem type)``): only the declared inputs matter."""
    import onnx
    from onnx import helper

    values = [helper.make_tensor_value_info(name, elem, dims) for name, (dims, elem) in inputs.items()]
    outputs = [helper.make_tensor_value_info(f"{name}_out", elem, dims) for name, (dims, elem) in inputs.items()]
    nodes = [helper.make_node("Identity", [name], [f"{name}_out"]) for name in inputs]
    graph = helper.make_graph(nodes, "g", values, outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_mono_audio_with_a_channel_axis_is_audio(tmp_path: Path) -> None:
    """Keras exports take raw audio as (N, samples, 1), PyTorch ones as (N, 1, samples): a .wav folder feeds both."""
    keras = _identity_model(tmp_path / "keras.onnx", {"serving_default_input_2:0": (["unk__1", 43844, 1], 1)})
    (info,) = describe_inputs(keras)
    assert info.kind() == "audio" and suggested_shapes([info]) == {"serving_default_input_2:0": [1, 43844, 1]}
    config = tmp_path / "keras.toml"
    assert main(["init", str(keras), "-o", str(config)]) == ExitCode.OK
    assert "\n[preprocess]\nsample_rate" in config.read_text()
    assert load_config(config).data.calibration == tmp_path / "calib"
    torch_like = _identity_model(tmp_path / "torch.onnx", {"wave": ([1, 1, "samples"], 1)})
    assert [i.kind() for i in describe_inputs(torch_like)] == ["audio"]


def test_a_float_attention_mask_is_not_an_image(tmp_path: Path) -> None:
    """A (1, 1, 1, 64) additive mask beside token ids is a tensor for a .npz, not a 1x64-pixel image."""
    model = _identity_model(tmp_path / "enc.onnx", {"input_ids": ([1, 64], 7), "attention_mask": ([1, 1, 1, 64], 1),
                                                    "pixels": ([1, 3, 32, 32], 1), "tiny": ([1, 4, 4, 3], 1)})
    assert [i.kind() for i in describe_inputs(model)] == ["tokens", "tensor", "image-NCHW", "tensor"]


def test_a_tflite_model_gets_no_input_shapes_it_would_ignore(tmp_path: Path) -> None:
    """The TFLite loader takes no input_shapes (its batch is one): init says so instead of writing a key that does
    nothing."""
    import tensorflow as tf  # heavy optional dependency

    inputs = tf.keras.Input(shape=(400, 1), batch_size=None)
    model = tf.keras.Model(inputs, tf.keras.layers.Conv1D(2, 3)(inputs))
    path = tmp_path / "audio.tflite"
    path.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    (info,) = describe_inputs(path)
    assert info.dims[0] is None and info.kind() == "audio"
    config = tmp_path / "audio.toml"
    assert main(["init", str(path), "-o", str(config)]) == ExitCode.OK
    text = config.read_text()
    assert "\ninput_shapes" not in text and "input_shapes applies to ONNX models only" in text
    assert load_config(config).input_shapes == {}
