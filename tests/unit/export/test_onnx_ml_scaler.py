"""An ONNX-ML Scaler becomes Sub and Mul before onnx2tf (edgepipe.export.onnx_ml_scaler): onnx2tf 1.28.8 stops at
"Scaler OP is not yet implemented" (a tabular surrogate network standardizes its features with one; tests/realmodels
has the real one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from tests.models.probes.onnx_files import ort_outputs

FEATURES = 5


def _scaled_onnx(path: Path, elem_type: int, offsets: list[float], scales: list[float]) -> Path:
    """x [1, 5] (``elem_type``) -> Scaler(offsets, scales) -> MatMul -> Relu: y [1, 3]."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(0, 1, (FEATURES, 3)).astype(np.float32)
    nodes = [helper.make_node("Scaler", ["x"], ["z"], name="standardize", domain="ai.onnx.ml", offset=offsets,
                              scale=scales),
             helper.make_node("MatMul", ["z", "w"], ["h"], name="dense"),
             helper.make_node("Relu", ["h"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "scaled", [helper.make_tensor_value_info("x", elem_type, [1, FEATURES])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3])],
                              [numpy_helper.from_array(weights, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _inputs(count: int = 8) -> np.ndarray:
    return np.random.default_rng(1).normal(40, 20, (count, 1, FEATURES)).astype(np.float32)


@pytest.mark.parametrize(("elem", "offsets", "scales", "cast"), [
    (1, [62.3, 1.5, 1.1, 5.2, 0.6], [0.024, 0.89, 0.97, 0.32, 3.2], False),  # per feature, float in
    (1, [10.0], [0.5], False),  # one value for every feature
    (7, [62.3, 1.5, 1.1, 5.2, 0.6], [0.024, 0.89, 0.97, 0.32, 3.2], True)])  # int64 in: cast to float first
def test_a_scaler_becomes_sub_and_mul_and_computes_the_same(tmp_path: Path, elem: int, offsets: list[float],
                                                            scales: list[float], cast: bool) -> None:
    import onnx

    from edgepipe.export.onnx_ml_scaler import scalers_as_arithmetic

    model = onnx.load(str(_scaled_onnx(tmp_path / "s.onnx", elem, offsets, scales)))
    xs = _inputs().astype(np.int64 if elem == 7 else np.float32)
    want = [ort_outputs(model, {"x": x})[0] for x in xs]
    assert scalers_as_arithmetic(model) == 1
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops == [*(["Cast"] if cast else []), "Sub", "Mul", "MatMul", "Relu"]
    for x, expected in zip(xs, want, strict=True):
        np.testing.assert_allclose(ort_outputs(model, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)


def test_a_standardized_model_converts_and_computes_the_same(tmp_path: Path) -> None:
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = _scaled_onnx(tmp_path / "s.onnx", 1, [62.3, 1.5, 1.1, 5.2, 0.6], [0.024, 0.89, 0.97, 0.32, 3.2])
    data = Dataset(path=tmp_path / "calib.npz", inputs=(_inputs(),), labels=None, sha256="", whole=(True,))
    converted = convert_onnx_to_tflite(source, tmp_path / "s.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
