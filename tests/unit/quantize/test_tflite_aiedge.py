"""Float TFLite → int8 through ai-edge-quantizer, float16 weights behind DEQUANTIZE included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.label_free import cosine
from edgepipe.quantize.tflite_aiedge import prepare_float_tflite, quantize_float_tflite, tflite_kind
from edgepipe.runtimes import open_runner
from tests.models import formats


@pytest.fixture(scope="module")
def fp16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return formats.fp16_tflite(tmp_path_factory.mktemp("fp16") / "fp16.tflite")


def _ops(path: Path) -> list[str]:
    from ai_edge_litert.tools import flatbuffer_utils

    model = flatbuffer_utils.read_model(str(path))
    return [str(flatbuffer_utils.opcode_to_name(model, op.opcodeIndex)) for op in model.subgraphs[0].operators]


def _outputs(path: Path, data: np.ndarray) -> np.ndarray:
    with open_runner(path) as runner:
        return np.concatenate([runner.infer([data[i:i + 1]])[0] for i in range(len(data))])


def test_fp16_weights_are_folded_into_float32(fp16: Path, tmp_path: Path) -> None:
    assert tflite_kind(fp16) == "fp16-weights"
    assert _ops(fp16).count("DEQUANTIZE") >= 3
    prepared = prepare_float_tflite(fp16, tmp_path / "prepared.tflite")
    assert "DEQUANTIZE" not in _ops(prepared) and tflite_kind(prepared) == "float"
    data = np.random.default_rng(0).random((4, 16, 16, 3), dtype=np.float32)
    np.testing.assert_allclose(_outputs(prepared, data), _outputs(fp16, data), rtol=1e-5, atol=1e-6)


def test_quantized_fp16_model_is_int8_and_agrees(fp16: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    calibration = Dataset(path=tmp_path, inputs=(rng.random((32, 1, 16, 16, 3), dtype=np.float32)[:, 0],),
                          labels=None, sha256="")
    out = quantize_float_tflite(fp16, tmp_path / "int8.tflite", calibration, tmp_path)
    assert tflite_kind(out) == "int8"
    with open_runner(out) as runner:
        assert runner._interp.get_input_details()[0]["dtype"] == np.int8  # noqa: SLF001 - the file's real I/O type
    data = rng.random((16, 16, 16, 3), dtype=np.float32)
    assert cosine(_outputs(fp16, data), _outputs(out, data)) > 0.98


@pytest.mark.slow
def test_full_int8_tflite_without_data_is_checked_and_timed(fp16: Path, tmp_path: Path) -> None:
    """A shipped full-int8 TFLite given alone: no data, yet the build runs it and times it on synthetic inputs."""
    import json

    from tests.conftest import run_cli

    rng = np.random.default_rng(2)
    calibration = Dataset(path=tmp_path, inputs=(rng.random((16, 16, 16, 3), dtype=np.float32),), labels=None,
                          sha256="")
    shipped = quantize_float_tflite(fp16, tmp_path / "wakeword_int8.tflite", calibration, tmp_path)
    proc = run_cli("build", "-q", "--model", str(shipped), "--no-cache", "-o", "out", cwd=tmp_path)
    assert proc.returncode != 3, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "out" / "wakeword_int8" / "host-cpu" / "report.json").read_text())
    assert report["latency_ms"]["model_int8.tflite"] > 0
    latency = next(s for s in report["stages"] if s["name"] == "latency")
    assert latency["status"] == "ran" and "synthetic inputs" in latency["detail"]


def test_sparse_weights_behind_densify_get_weight_scales(tmp_path: Path) -> None:
    """MediaPipe's pruned models (held-out BlazePose detector) keep sparse weights behind DENSIFY: quantized as
    activations they got zero point -128 and LiteRT refused the int8 CONV_2D. Made dense first, they load."""
    import tensorflow as tf  # heavy optional dependency
    from ai_edge_litert.interpreter import Interpreter

    inputs = tf.keras.Input(shape=(16, 16, 3), batch_size=1)
    conv = tf.keras.layers.Conv2D(16, 3, padding="same", activation="relu")
    model = tf.keras.Model(inputs, tf.keras.layers.Conv2D(8, 1)(conv(inputs)))
    weights, bias = conv.get_weights()
    weights[np.abs(weights) < np.quantile(np.abs(weights), 0.8)] = 0  # 80% zeros: the converter stores it sparse
    conv.set_weights([weights, bias])
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]
    source = tmp_path / "sparse.tflite"
    source.write_bytes(converter.convert())
    assert "DENSIFY" in _ops(source)
    prepared = prepare_float_tflite(source, tmp_path / "prepared.tflite")
    sample = np.random.default_rng(0).uniform(-1, 1, (8, 16, 16, 3)).astype(np.float32)
    outputs = []
    for path in (source, prepared):
        interpreter = Interpreter(model_path=str(path))
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], sample[:1])
        interpreter.invoke()
        outputs.append(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))
    assert np.array_equal(*outputs), "the dense constants are LiteRT's own values"
    int8 = quantize_float_tflite(source, tmp_path / "model_int8.tflite", Dataset(tmp_path / "x.npz", (sample,), None,
                                                                                  "t"), tmp_path)
    Interpreter(model_path=str(int8)).allocate_tensors()  # LiteRT's int8 kernels accept it


def _if_tflite(path: Path) -> Path:
    """A float TFLite whose output goes through an IF (openWakeWord's classifiers end in one)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    weight = tf.constant(np.random.default_rng(2).normal(0, 0.5, (8, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32, name="x")])
    def gated(x):
        hidden = tf.matmul(x, weight)
        return tf.cond(tf.reduce_sum(x) > 0, lambda: tf.nn.relu(hidden), lambda: tf.sigmoid(hidden))

    converter = tf.lite.TFLiteConverter.from_concrete_functions([gated.get_concrete_function()])
    path.write_bytes(converter.convert())
    return path


def test_control_flow_is_a_reported_quantizer_failure_naming_the_op(tmp_path: Path) -> None:
    from ai_edge_litert.tools import flatbuffer_utils

    from edgepipe.containment import AI_EDGE_QUANTIZER, contained
    from edgepipe.errors import ToolFailed
    from edgepipe.quantize.tflite_aiedge import control_flow_ops

    source = _if_tflite(tmp_path / "gated.tflite")
    assert control_flow_ops(flatbuffer_utils.read_model(str(source))) == ["IF in subgraph 0"]
    data = Dataset(tmp_path / "c.npz", (np.random.default_rng(0).normal(0, 1, (8, 1, 8)).astype(np.float32)[:, 0],),
                   None, "test")
    with pytest.raises(ToolFailed) as failed, contained(AI_EDGE_QUANTIZER):
        quantize_float_tflite(source, tmp_path / "int8.tflite", data, tmp_path)
    assert failed.value.tool == "ai-edge-quantizer" and "IF in subgraph 0" in failed.value.message
    assert "ONNX artifact" in failed.value.next_step and not (tmp_path / "int8.tflite").exists()
