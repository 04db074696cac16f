"""One test per constraint of edgepipe/rules/control_flow.py (If and Loop): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

from onnx import TensorProto

from tests.models.graphs import single
from tests.unit.rules.graphs import squeeze_if_graph, verdict


def test_branch_ops_in(tmp_path: Path) -> None:
    """An If whose condition comes from static shapes takes its Squeeze branch; its output shape is known.

    PyTorch writes such an If for a ``squeeze`` of a dimension it cannot see.
    """
    graph = squeeze_if_graph(tmp_path)
    node = next(n for n in graph.nodes if n.op == "If")
    assert node.attrs["branch_ops"] == ("Squeeze",) and node.outputs[0].shape == (1, 8, 16)
    assert verdict("branch_ops_in", node, graph, ["Squeeze", "Identity"]) == (True, "branch of Squeeze")
    assert verdict("branch_ops_in", node, graph, ["Identity"]) == (False, "If takes a branch with Squeeze")
    unknown, graph = single(tmp_path, "If", [[1]], [1], dtype=TensorProto.BOOL)
    assert verdict("branch_ops_in", unknown, graph, ["Squeeze"]) == (
        False, "If 'if' has a condition only known at run time")


def test_static_control_flow(tmp_path: Path) -> None:
    """rknn-toolkit2 refuses any Loop and an If known only at run time; an If whose condition the static input
    shapes decide is replaced by its branch, and passes.

    rknn-toolkit2 2.5.0 refuses the whole graph ("will cause the graph to be a dynamic graph! Remove it manually"),
    a Loop even of a constant trip count and condition (probed with one and three iterations; SLANet's table-
    structure decoder).
    """
    from edgepipe.support import read_graph
    from tests.models.graphs import loop_onnx, squeeze_if_onnx
    from tests.models.probes.inputs import runtime_if_onnx

    cases = {"loop": (loop_onnx(tmp_path / "loop.onnx"), "Loop"),
             "runtime_if": (runtime_if_onnx(tmp_path / "if.onnx"), "If"),
             "static_if": (squeeze_if_onnx(tmp_path / "squeeze.onnx"), "If")}
    verdicts = {}
    for name, (path, op) in cases.items():
        graph = read_graph(path)
        node = next(n for n in graph.nodes if n.op == op)
        verdicts[name] = verdict("static_control_flow", node, graph, True)
        assert verdict("static_control_flow", node, graph, False) == (True, "not required")
    assert verdicts == {
        "loop": (False, "Loop 'loop' runs its body at run time; the compiler does not unroll it"),
        "runtime_if": (False, "If 'verify' has a condition only known at run time"),
        "static_if": (True, "static")}
