"""One test per constraint of edgepipe/rules/elementwise.py (element-wise operands): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def test_max_inputs(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Sum", [[1, 4]] * 3, [1, 4])
    assert verdict("max_inputs", node, graph, 2) == (False, "Sum has 3 inputs > 2")
    assert verdict("max_inputs", node, graph, 3)[0]


def test_same_input_shapes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Add", [[1, 4, 4], [1, 1, 4]], [1, 4, 4])
    ok, detail = verdict("same_input_shapes", node, graph, True)
    assert not ok and detail.startswith("Add broadcasts")
    node, graph = single(tmp_path, "Add", [[1, 4, 4], [1, 4, 4]], [1, 4, 4])
    assert verdict("same_input_shapes", node, graph, True)[0]


def test_operands_rank(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs a Max of 4-D tensors, or of one and a [1, 1, 1, 1] or per-channel constant, on the
    NPU, and one with a scalar, a vector or operands of another rank on the CPU: magika's LayerNorm Maximum(eps,
    variance) over [1, 256]."""
    node, graph = single(tmp_path, "Max", [[1, 256], [1, 256]], [1, 256])
    ok, detail = verdict("operands_rank", node, graph, 4)
    assert not ok and "has rank 2, not 4" in detail
    node, graph = single(tmp_path, "Max", [[1, 8, 4, 4], [1, 8, 4, 4]], [1, 8, 4, 4])
    assert verdict("operands_rank", node, graph, 4)[0]


def sub(tmp: Path, minuend: list[int], shape: list[int], constant: bool = True) -> tuple[OpNode, OpGraph]:
    node = helper.make_node("Sub", ["c", "x"], ["y"], name="sub")
    inputs = {"x": (shape, FLOAT)} if constant else {"x": (shape, FLOAT), "c": (minuend, FLOAT)}
    consts = {"c": np.ones(minuend, np.float32)} if constant else None
    graph = onnx_graph(tmp, [node], inputs, {"y": (shape, FLOAT)}, consts)
    return graph.nodes[0], graph


def test_no_broadcast_constant_minuend(tmp_path: Path) -> None:
    """Keras LayerNorm's beta [128] - [1, 32, 128] (g2p-id's phoneme BERT): CPU on RK3588; probed forms that ran
    on the NPU pass.

    Keras LayerNorm's beta - mean * gamma / std as tf2onnx writes it; rknn-toolkit2 2.5.0 runs such a Sub on
    RK3588's CPU, and one whose minuend is a scalar, of the output's shape, a per-channel [1, C, 1, 1] or a [T, 1]
    column constant, or not a constant, on the NPU.
    """
    for minuend, shape in (([128], [1, 32, 128]), ([1, 1, 128], [1, 32, 128]), ([16], [1, 8, 16, 16])):
        ok, detail = verdict("no_broadcast_constant_minuend", *sub(tmp_path, minuend, shape), True)
        assert not ok and "broadcast to" in detail, (minuend, shape)
    for minuend, shape in (([1, 32, 128], [1, 32, 128]), ([], [1, 32, 128]), ([1, 8, 1, 1], [1, 8, 16, 16]),
                           ([32, 1], [1, 32, 128])):
        assert verdict("no_broadcast_constant_minuend", *sub(tmp_path, minuend, shape), True)[0], (minuend, shape)
    assert verdict("no_broadcast_constant_minuend", *sub(tmp_path, [128], [1, 32, 128], constant=False), True)[0]


def test_scales_no_cpu_output_for_reshape(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 keeps DNSMOS's log10 on the CPU (a Log, a Div by ln 10, an ExpandDims; probed on both
    SoCs with Div and Mul after a Log or a lone Sqrt, read by an Unsqueeze, a Reshape or an Unsqueeze and
    Transpose); it runs the scaling on the NPU when another op (a Relu) reads it."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import log10_scalings_onnx

    graph = read_graph(log10_scalings_onnx(tmp_path / "log10.onnx"))
    found = {n.name: verdict("scales_no_cpu_output_for_reshape", n, graph, ["Log"]) for n in graph.nodes
             if n.name.startswith("scale")}
    assert found == {"scale0": (False, "Mul scales Log 'log0' by a constant for a reshape, with it on the CPU"),
                     "scale1": (True, "not a lone scaling of a CPU op's output")}
    assert verdict("scales_no_cpu_output_for_reshape", graph.nodes[2], graph, ["Sqrt"])[0]
