"""The division rule of the Rockchip profiles (edgepipe/rules/division.py), on the probe graphs the
toolkit placed (tests/verify/test_rknn.py compiles the same graphs)."""

from __future__ import annotations

from pathlib import Path

from edgepipe.rules import load_constraints
from edgepipe.support import read_graph
from tests.verify.models import l2_norm_onnx, min_max_front_onnx, run_time_divisions_onnx


def _verdicts(path: Path) -> dict[str, tuple[bool, str]]:
    graph = read_graph(path)
    rule = load_constraints()["divides_by_constant_or_norm"]
    return {n.name: rule(n, graph, True) for n in graph.nodes if n.op == "Div"}


def test_divides_by_constant_or_norm(tmp_path: Path) -> None:
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
    """RIANN (held-out batch 18): its quaternion normalization sums without keeping the axis and unsqueezes the
    root back; the toolkit does not fuse it, and the Div runs on the CPU. Kept, the Sqrt and the Div fuse."""
    assert _verdicts(l2_norm_onnx(tmp_path / "dropped.onnx", "sqrt", keep_axes=False)) == {
        "div": (False, "Div divides by a norm whose ReduceSum 'sum' drops its axes")}
    kept = l2_norm_onnx(tmp_path / "kept.onnx", "sqrt", keep_axes=True)
    assert _verdicts(kept) == {"div": (True, "ends a normalization (ReduceSum of a square)")}
    graph = read_graph(kept)
    root = next(n for n in graph.nodes if n.op == "Sqrt")
    assert load_constraints()["in_layer_norm_pattern"](root, graph, True) == (True, "inside an L2 normalization")
