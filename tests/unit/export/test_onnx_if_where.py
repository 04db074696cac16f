"""A data-dependent If becomes both branches and a Where before onnx2tf (edgepipe.export.onnx_if_where): onnx2tf
1.28.8 failed with ``KeyError`` at the first node of a branch reading an outer weight (openWakeWord's classifiers
gate a verifier network on their own score; tests/realmodels has the real one)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from tests.models.probes.onnx_files import ort_outputs, save_opset

FEATURES = 4


def _gated_onnx(path: Path, else_shape: list[int] | None = None, loop_in_branch: bool = False) -> Path:
    """x [1, 4] -> score = Sigmoid(ReduceSum(x @ w)); If score >= 0.5: (x @ v + b) with ``b`` the branch's own
    weight and ``v`` the outer graph's, else: x * 2 (reshaped to ``else_shape`` when given)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    outer = [numpy_helper.from_array(rng.normal(0, 1, (FEATURES, FEATURES)).astype(np.float32), n) for n in "wv"]
    outer += [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
              numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    then_nodes = [helper.make_node("MatMul", ["x", "v"], ["t0"]), helper.make_node("Add", ["t0", "b"], ["t1"])]
    if loop_in_branch:
        body = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                                 [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                  helper.make_tensor_value_info("cond_in", TensorProto.BOOL, [])],
                                 [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, [])])
        then_nodes.append(helper.make_node("Loop", ["", ""], [], body=body))
    then = helper.make_graph(then_nodes, "then", [], [helper.make_tensor_value_info("t1", TensorProto.FLOAT,
                                                                                    [1, FEATURES])],
                             [numpy_helper.from_array(np.full(FEATURES, 3.0, np.float32), "b")])
    else_nodes = [helper.make_node("Mul", ["x", "two"], ["e0"])]
    if else_shape is not None:
        outer.append(numpy_helper.from_array(np.array(else_shape, np.int64), "else_shape"))
        else_nodes.append(helper.make_node("Reshape", ["e0", "else_shape"], ["e1"]))
    other = helper.make_graph(else_nodes, "else", [], [helper.make_tensor_value_info(
        else_nodes[-1].output[0], TensorProto.FLOAT, else_shape or [1, FEATURES])])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="score_in"),
             helper.make_node("ReduceSum", ["h"], ["s"], name="sum", keepdims=0),
             helper.make_node("Sigmoid", ["s"], ["score"], name="score"),
             helper.make_node("GreaterOrEqual", ["score", "half"], ["gate"], name="gate"),
             helper.make_node("If", ["gate"], ["y"], name="verify", then_branch=then, else_branch=other)]
    graph = helper.make_graph(nodes, "gated", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, FEATURES])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, FEATURES])], outer)
    return save_opset(graph, path, 17)


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    return ort_outputs(model, {"x": x})[0]


def _inputs(count: int = 16) -> np.ndarray:
    return np.random.default_rng(1).normal(0, 2, (count, 1, FEATURES)).astype(np.float32)


def test_a_gated_branch_becomes_a_where_and_computes_the_same_on_both_sides(tmp_path: Path) -> None:
    import onnx

    from edgepipe.export.onnx_if_where import if_as_where

    model = onnx.load(str(_gated_onnx(tmp_path / "g.onnx")))
    xs = _inputs()
    want = [_run(model, x) for x in xs]
    assert if_as_where(model) == 1
    onnx.checker.check_model(model)
    assert "If" not in [n.op_type for n in model.graph.node] and "Where" in [n.op_type for n in model.graph.node]
    gates = {bool((1 / (1 + np.exp(-(x @ onnx.numpy_helper.to_array(model.graph.initializer[0])).sum()))) >= 0.5)
             for x in xs}
    assert gates == {True, False}  # both branches are taken on these inputs
    for x, expected in zip(xs, want, strict=True):
        np.testing.assert_array_equal(_run(model, x), expected)


@pytest.mark.parametrize(("else_shape", "loop"), [([FEATURES, 1], False), (None, True)])
def test_an_if_whose_branches_differ_in_shape_or_hold_control_flow_stays(tmp_path: Path, else_shape: list[int] | None,
                                                                         loop: bool) -> None:
    import onnx

    from edgepipe.export.onnx_if_where import if_as_where

    model = onnx.load(str(_gated_onnx(tmp_path / "g.onnx", else_shape, loop)))
    before = model.SerializeToString()
    assert if_as_where(model) == 0
    assert model.SerializeToString() == before


def test_an_if_with_more_outputs_than_its_branches_give_stays(tmp_path: Path) -> None:
    """Both branches give one output, the If names two: no rewrite (a chained ``!=`` once let this through)."""
    import onnx

    from edgepipe.export.onnx_if_where import if_as_where

    model = onnx.load(str(_gated_onnx(tmp_path / "g.onnx")))
    model.graph.node[-1].output.append("y_extra")
    before = model.SerializeToString()
    assert if_as_where(model) == 0
    assert model.SerializeToString() == before


def test_a_gated_model_converts_exactly(tmp_path: Path) -> None:
    """onnx2tf fails on the If itself; the rewritten copy it converts computes the same on both sides of the gate."""
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = _gated_onnx(tmp_path / "g.onnx")
    data = Dataset(path=tmp_path / "calib.npz", inputs=(_inputs(),), labels=None, sha256="", whole=(True,))
    converted = convert_onnx_to_tflite(source, tmp_path / "g.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
