"""One test per constraint of edgepipe/rules/sequence.py: a graph that fails it and one that passes.

The placements these rules predict are checked against rknn-toolkit2 in tests/verify/test_rknn_sequence.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import load_constraints
from tests.support.graphs import onnx_graph

FLOAT = TensorProto.FLOAT


def verdict(name: str, node: OpNode, graph: OpGraph, param: Any) -> tuple[bool, str]:
    return load_constraints()[name](node, graph, param)


def reverse(tmp: Path, shape: list[int], axis: int, step: int = -1) -> tuple[OpNode, OpGraph]:
    consts = {"starts": np.array([-1 if step < 0 else 0], np.int64), "ends": np.array([-(2**62) if step < 0 else
                                                                                         2**62], np.int64),
              "axes": np.array([axis], np.int64), "steps": np.array([step], np.int64)}
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="slice")
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (shape, FLOAT)}, consts)
    return graph.nodes[0], graph


def pad(tmp: Path, shape: list[int], pads: list[int]) -> tuple[OpNode, OpGraph]:
    out = [d + pads[i] + pads[i + len(shape)] for i, d in enumerate(shape)]
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="constant")
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (out, FLOAT)}, {"pads": np.array(pads, np.int64)})
    return graph.nodes[0], graph


def test_steps_forward(tmp_path: Path) -> None:
    ok, detail = verdict("steps_forward", *reverse(tmp_path, [1, 8, 16, 16], 3), True)
    assert not ok and "axis [3]" in detail
    assert verdict("steps_forward", *reverse(tmp_path, [100, 64], 0, step=1), True)[0]


def test_steps_backwards_on_last_axis_only(tmp_path: Path) -> None:
    ok, detail = verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [100, 64], 0), True)
    assert not ok and "axis [0] of a rank-2 tensor" in detail
    assert verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [100, 64], -1), True)[0]
    assert verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [1, 8, 16, 16], 3), True)[0]
    assert not verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [1, 8, 16, 16], 2), True)[0]


def test_matrix_pad_axes_max(tmp_path: Path) -> None:
    ok, detail = verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105], [2, 2, 2, 2]), 1)
    assert not ok and "axes [0, 1]" in detail
    assert verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105], [0, 2, 0, 2]), 1)[0]
    assert verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105, 24], [2, 2, 0, 2, 2, 0]), 1)[0]  # rank 3


def test_no_peepholes(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.sequence_models import peephole_lstm_onnx

    with_p = read_graph(peephole_lstm_onnx(tmp_path / "p.onnx"))
    lstm = next(n for n in with_p.nodes if n.op == "LSTM")
    assert verdict("no_peepholes", lstm, with_p, True) == (False, "has peephole weights (input P)")
    without = read_graph(peephole_lstm_onnx(tmp_path / "plain.onnx", peepholes=False))
    assert verdict("no_peepholes", next(n for n in without.nodes if n.op == "LSTM"), without, True)[0]


def test_sequence_concat_reshape_aligned(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.sequence_models import bidirectional_layers_onnx

    graph = read_graph(bidirectional_layers_onnx(tmp_path / "brnn.onnx", [25, 8]))
    nodes = {n.name: n for n in graph.nodes}
    ok, detail = verdict("sequence_concat_reshape_aligned", nodes["next_batch0"], graph, 16)
    assert not ok and "'concat0'" in detail and "50 wide" in detail
    assert verdict("sequence_concat_reshape_aligned", nodes["next_batch1"], graph, 16)[0]  # 16 wide
    assert verdict("sequence_concat_reshape_aligned", nodes["batch0"], graph, 16)[0]  # of the graph input


def test_reshape_layout_aligned_of_a_one_column_head(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.sequence_models import one_column_heads_onnx

    graph = read_graph(one_column_heads_onnx(tmp_path / "heads.onnx", [100, 96]))
    nodes = {n.name: n for n in graph.nodes}
    ok, detail = verdict("reshape_layout_aligned", nodes["squeeze0"], graph, 16)
    assert not ok and "H x W = 100" in detail
    assert verdict("reshape_layout_aligned", nodes["squeeze1"], graph, 16)[0]


def test_reshape_layout_aligned_of_a_recurrent_state(tmp_path: Path) -> None:
    """The 4-element state of an RNN, unsqueezed from a graph input and squeezed from its last state, is reshaped
    on the NPU: no 'fewer than 16 elements' fallback for it."""
    from edgepipe.support import read_graph
    from tests.verify.sequence_models import recurrent_states_onnx

    graph = read_graph(recurrent_states_onnx(tmp_path / "states.onnx", "RNN", 4))
    nodes = {n.name: n for n in graph.nodes}
    for name in ("state_batch", "state_squeeze"):
        ok, detail = verdict("reshape_layout_aligned", nodes[name], graph, 16)
        assert ok and "recurrent op's state" in detail


def reduce_max(tmp: Path, shape: list[int], axes: list[int], keepdims: int = 1) -> tuple[OpNode, OpGraph]:
    """A ReduceMax at opset 18, its axes as a constant second input."""
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else \
        [d for i, d in enumerate(shape) if i not in axes]
    node = helper.make_node("ReduceMax", ["x", "axes"], ["y"], name="rmax", keepdims=keepdims)
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (out, FLOAT)}, {"axes": np.array(axes, np.int64)},
                       opset=18)
    return graph.nodes[0], graph


def test_reduce_axes_are_read_from_the_opset_18_input(tmp_path: Path) -> None:
    node, _ = reduce_max(tmp_path, [1, 112, 20, 64], [1, 2], keepdims=0)
    assert node.attrs["axes"] == (1, 2)


def test_reduces_only_axes(tmp_path: Path) -> None:
    """DNSMOS's global max pooling over axes 1 and 2: CPU on RK3576; a channel max: NPU; RK3588: CPU always."""
    node, graph = reduce_max(tmp_path, [1, 112, 20, 64], [1, 2], keepdims=0)
    ok, detail = verdict("reduces_only_axes", node, graph, [1])
    assert not ok and "reduces axis 2 of [1, 112, 20, 64]" in detail
    node, graph = reduce_max(tmp_path, [1, 112, 20, 64], [1])
    assert verdict("reduces_only_axes", node, graph, [1])[0]
    assert not verdict("reduces_only_axes", node, graph, [])[0]
    node, graph = reduce_max(tmp_path, [1, 32, 128], [-2])
    assert verdict("reduces_only_axes", node, graph, [1])[0], "a negative axis is counted from the back"


def sub(tmp: Path, minuend: list[int], shape: list[int], constant: bool = True) -> tuple[OpNode, OpGraph]:
    node = helper.make_node("Sub", ["c", "x"], ["y"], name="sub")
    inputs = {"x": (shape, FLOAT)} if constant else {"x": (shape, FLOAT), "c": (minuend, FLOAT)}
    consts = {"c": np.ones(minuend, np.float32)} if constant else None
    graph = onnx_graph(tmp, [node], inputs, {"y": (shape, FLOAT)}, consts)
    return graph.nodes[0], graph


def test_no_broadcast_constant_minuend(tmp_path: Path) -> None:
    """Keras LayerNorm's beta [128] - [1, 32, 128] (g2p-id's phoneme BERT): CPU on RK3588; probed forms that ran
    on the NPU pass."""
    for minuend, shape in (([128], [1, 32, 128]), ([1, 1, 128], [1, 32, 128]), ([16], [1, 8, 16, 16])):
        ok, detail = verdict("no_broadcast_constant_minuend", *sub(tmp_path, minuend, shape), True)
        assert not ok and "broadcast to" in detail, (minuend, shape)
    for minuend, shape in (([1, 32, 128], [1, 32, 128]), ([], [1, 32, 128]), ([1, 8, 1, 1], [1, 8, 16, 16]),
                           ([32, 1], [1, 32, 128])):
        assert verdict("no_broadcast_constant_minuend", *sub(tmp_path, minuend, shape), True)[0], (minuend, shape)
    assert verdict("no_broadcast_constant_minuend", *sub(tmp_path, [128], [1, 32, 128], constant=False), True)[0]


def test_reshape_layout_aligned_between_2d_and_3d(tmp_path: Path) -> None:
    """BeatNet's flatten of [128, 2, 131] and its dense's [128, 150] to [1, 128, 150]: CPU on RK3588; the same
    reshapes of 16-aligned planes and channels: NPU."""
    def reshape(shape: list[int], out: list[int]) -> tuple[OpNode, OpGraph]:
        """A 1-D max pooling (3-D) or a dense (2-D) writes ``shape``, reshaped to ``out``, read by a Relu."""
        pooled = len(shape) == 3
        source = helper.make_node("MaxPool", ["i"], ["x"], name="pool", kernel_shape=[1]) if pooled else \
            helper.make_node("Relu", ["i"], ["x"], name="dense")
        node = helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape")
        relu = helper.make_node("Relu", ["r"], ["y"], name="relu")
        graph = onnx_graph(tmp_path, [source, node, relu], {"i": (shape, FLOAT)}, {"y": (out, FLOAT)},
                           {"s": np.array(out, np.int64)})
        return graph.nodes[1], graph

    for shape, out in (([128, 2, 131], [128, 262]), ([128, 150], [1, 128, 150]), ([16, 150], [1, 16, 150])):
        assert not verdict("reshape_layout_aligned", *reshape(shape, out), 16)[0], (shape, out)
    for shape, out in (([128, 4, 16], [128, 64]), ([128, 160], [1, 128, 160])):
        assert verdict("reshape_layout_aligned", *reshape(shape, out), 16)[0], (shape, out)


def test_reshape_layout_aligned_between_2d_and_3d_exemptions(tmp_path: Path) -> None:
    """What the toolkit runs on RK3588's NPU all the same: madmom's notes CNN flattens a Transpose's [40, 10, 106]
    (merged with it), its output Squeeze changes no shape, ddddocr's [32, 8210] head is unsqueezed to an output."""
    transpose = helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1])
    flatten = helper.make_node("Reshape", ["t", "s"], ["f"], name="flatten")
    relu = helper.make_node("Relu", ["f"], ["y"], name="relu")
    graph = onnx_graph(tmp_path, [transpose, flatten, relu], {"x": ([40, 106, 10], FLOAT)},
                       {"y": ([40, 1060], FLOAT)}, {"s": np.array([40, 1060], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    noop = helper.make_node("Reshape", ["x", "s"], ["y"], name="same")
    graph = onnx_graph(tmp_path, [helper.make_node("Relu", ["i"], ["x"], name="relu"), noop],
                       {"i": ([40, 88], FLOAT)}, {"y": ([40, 88], FLOAT)}, {"s": np.array([40, 88], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    squeezed = helper.make_node("Reshape", ["x", "s"], ["f"], name="flatten_squeezed")
    graph = onnx_graph(tmp_path, [helper.make_node("Elu", ["i"], ["x"], name="elu"), squeezed, relu],
                       {"i": ([40, 106, 10], FLOAT)}, {"y": ([40, 1060], FLOAT)}, {"s": np.array([40, 1060], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0], "held as the 4-D tensor it came from"
    head = helper.make_node("Reshape", ["x", "s"], ["y"], name="head")
    graph = onnx_graph(tmp_path, [helper.make_node("Relu", ["i"], ["x"], name="relu"), head],
                       {"i": ([32, 8210], FLOAT)}, {"y": ([32, 1, 8210], FLOAT)},
                       {"s": np.array([32, 1, 8210], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]


def test_sequence_output_read(tmp_path: Path) -> None:
    """A GRU of which only Y_h is used (PLCMOS v2's second GRU) blocks the RKNN build; one whose Y is read does not."""
    hidden, width, steps = 8, 4, 5
    weights = {"W": np.zeros((1, 3 * hidden, width), np.float32), "R": np.zeros((1, 3 * hidden, hidden), np.float32)}
    for reads_y in (False, True):
        nodes = [helper.make_node("GRU", ["x", "W", "R"], ["Y", "Y_h"], name="gru", hidden_size=hidden),
                 helper.make_node("Relu", ["Y_h"], ["h"], name="relu")]
        outputs = {"h": ([1, 1, hidden], FLOAT)}
        if reads_y:
            nodes.append(helper.make_node("Relu", ["Y"], ["y"], name="relu_y"))
            outputs["y"] = ([steps, 1, 1, hidden], FLOAT)
        graph = onnx_graph(tmp_path, nodes, {"x": ([steps, 1, width], FLOAT)}, outputs, weights)
        ok, detail = verdict("sequence_output_read", graph.nodes[0], graph, True)
        assert ok == reads_y and (reads_y or "read by nothing" in detail)


def test_reshape_layout_aligned_around_a_1d_hard_sigmoid(tmp_path: Path) -> None:
    """PP-OCRv6 tiny's 1-D HardSwish: RK3588 holds the [1, 16, W] a HardSigmoid reads or writes as [1, 16, W, 1]
    (the real toolkit's placement of the same graph: tests/verify/test_rknn.py)."""
    from edgepipe.support import read_graph
    from tests.verify.models import hard_swish_1d_onnx

    graph = read_graph(hard_swish_1d_onnx(tmp_path / "h.onnx", [(40, "bn_hswish"), (40, "hsig"), (48, "hsig"),
                                                                   (40, "relu")]))
    found = {n.name: verdict("reshape_layout_aligned", n, graph, 16) for n in graph.nodes
             if n.op in ("Squeeze", "Unsqueeze")}
    assert found["unsqueeze0"] == (False, "Unsqueeze moves a HardSigmoid's [1, 16, 40], held as [1, 16, 40, 1], to "
                                          "or from [1, 16, 1, 40] (W = 40, not a multiple of 16)")
    assert not found["squeeze1"][0] and not found["unsqueeze1"][0]
    assert found["squeeze2"] == (True, "moves a HardSigmoid's [1, 16, 48], held as [1, 16, 48, 1], in whole rows")
    assert found["unsqueeze2"][0] and found["squeeze0"][0] and found["squeeze3"][0] and found["unsqueeze3"][0]
