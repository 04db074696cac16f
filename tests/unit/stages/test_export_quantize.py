"""Export and PTQ on the reference model, checked with the real runtimes against Keras."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from edgepipe.data.dataset import load_dataset
from edgepipe.export.tf_function import build_tf_graph
from edgepipe.export.to_onnx import export_onnx
from edgepipe.export.to_tflite import export_tflite
from edgepipe.load import load_model
from edgepipe.metrics.accuracy import evaluate_top1, predict_logits
from edgepipe.quantize.onnx_qdq import quantize_onnx
from edgepipe.quantize.recipe import DEFAULT_RECIPE
from edgepipe.quantize.tflite_int8 import quantize_tflite
from edgepipe.runtimes import open_runner


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, reference_model: Path, reference_data: Path) -> dict:
    folder = tmp_path_factory.mktemp("export")
    model = load_model(reference_model)
    graph = build_tf_graph(model, folder)
    calib = load_dataset(reference_data / "calibration.npz", model.signature, role="calibration")
    evaluation = load_dataset(reference_data / "evaluation.npz", model.signature, role="evaluation",
                              need_labels=True)
    return {
        "model": model, "calib": calib, "eval": evaluation,
        "onnx": export_onnx(graph, folder / "model.onnx"),
        "tflite": export_tflite(graph, folder / "model.tflite"),
        "onnx_int8": quantize_onnx(folder / "model.onnx", folder / "model_int8.onnx", calib, DEFAULT_RECIPE, folder),
        "tflite_int8": quantize_tflite(graph, folder / "model_int8.tflite", calib, DEFAULT_RECIPE),
    }


def test_float_exports_match_keras(exported: dict) -> None:
    x = exported["eval"].inputs[0][:20]
    expected = exported["model"].handle(x).numpy()
    for key in ("onnx", "tflite"):
        got = predict_logits(exported[key], exported["eval"])[:20]
        np.testing.assert_allclose(got, expected, atol=1e-4, err_msg=key)


def test_exports_have_fixed_batch_and_no_shape_ops(exported: dict) -> None:
    graph = onnx.load(str(exported["onnx"])).graph
    assert [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim] == [1, 8, 8, 1]
    assert not {"Shape", "StridedSlice", "Pack"} & {n.op_type for n in graph.node}
    with open_runner(exported["tflite"]) as runner:
        assert runner.signature.inputs[0].shape == (1, 8, 8, 1)


def test_onnx_int8_is_qdq_with_per_channel_weights(exported: dict) -> None:
    graph = onnx.load(str(exported["onnx_int8"])).graph
    ops = [n.op_type for n in graph.node]
    assert ops.count("QuantizeLinear") >= 3 and ops.count("DequantizeLinear") >= 6
    per_channel = [n for n in graph.node if n.op_type == "DequantizeLinear"
                   and any(a.name == "axis" for a in n.attribute)]
    assert per_channel, "weights should carry per-channel scales (axis attribute)"


def test_tflite_int8_has_int8_io_and_is_small(exported: dict) -> None:
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(exported["tflite_int8"]))
    assert interp.get_input_details()[0]["dtype"] == np.int8
    assert interp.get_output_details()[0]["dtype"] == np.int8
    assert exported["tflite_int8"].stat().st_size <= 0.35 * exported["tflite"].stat().st_size


def test_int8_accuracy_within_one_point(exported: dict) -> None:
    float_acc = evaluate_top1(exported["onnx"], exported["eval"])
    assert float_acc >= 0.95
    for key in ("onnx_int8", "tflite_int8"):
        assert float_acc - evaluate_top1(exported[key], exported["eval"]) <= 0.01, key


def test_runner_rejects_wrong_input_shape(exported: dict) -> None:
    with open_runner(exported["onnx"]) as runner, pytest.raises(ValueError, match="shape"):
        runner.infer([np.zeros((1, 4, 4, 1), np.float32)])
