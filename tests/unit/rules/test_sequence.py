"""One test per constraint of edgepipe/rules/sequence.py (recurrent ops and sequence tensors): a graph that fails
it and one that passes.

The placements these rules predict are checked against rknn-toolkit2 in tests/vendors/rknn/test_sequences.py and against
the QNN HTP emulator in tests/vendors/qnn/test_emulator.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT
LSTM_DEFAULTS, GRU_DEFAULTS = ["sigmoid", "tanh", "tanh"], ["sigmoid", "tanh"]


def recurrent(tmp: Path, op: str, lengths: str | None = None, directions: int = 1,
              **attrs: Any) -> tuple[OpNode, OpGraph]:
    """One LSTM or GRU (4 units, 3 steps of 2 features, a batch of 2); ``lengths``: no sequence_lens (None), a graph
    input ("input") or a constant ("constant")."""
    gates = 4 if op == "LSTM" else 3
    consts = {"W": np.zeros((directions, gates * 4, 2), np.float32),
              "R": np.zeros((directions, gates * 4, 4), np.float32)}
    inputs: dict[str, tuple[list[Any], int]] = {"x": ([3, 2, 2], FLOAT)}
    if lengths == "input":
        inputs["lengths"] = ([2], TensorProto.INT32)
    elif lengths == "constant":
        consts["lengths"] = np.array([3, 3], np.int32)
    node = helper.make_node(op, ["x", "W", "R", "", "lengths" if lengths else "", "h0"], ["y"], name=op.lower(),
                            hidden_size=4, direction="bidirectional" if directions == 2 else "forward", **attrs)
    graph = onnx_graph(tmp, [node], {**inputs, "h0": ([directions, 2, 4], FLOAT)},
                       {"y": ([3, directions, 2, 4], FLOAT)}, consts, opset=14)
    return graph.nodes[0], graph


def test_recurrent_activations_spelled(tmp_path: Path) -> None:
    """madmom's LSTMs name their (default) activations as ONNX spells them: the QNN EP sends them to the CPU.

    Found with the op builders of onnxruntime-qnn 2.7.0 (probe graphs in tests/vendors/qnn/test_emulator.py).
    """
    node, graph = recurrent(tmp_path, "LSTM", activations=["Sigmoid", "Tanh", "Tanh"])
    assert verdict("recurrent_activations_spelled", node, graph, LSTM_DEFAULTS) == (
        False, "LSTM activations Sigmoid, Tanh, Tanh are not spelled sigmoid, tanh, tanh")
    node, graph = recurrent(tmp_path, "GRU", directions=2, activations=["sigmoid", "tanh", "relu", "tanh"])
    assert not verdict("recurrent_activations_spelled", node, graph, GRU_DEFAULTS)[0]
    passing = [("LSTM", 1, None), ("LSTM", 1, LSTM_DEFAULTS), ("GRU", 2, GRU_DEFAULTS * 2),
               ("LSTM", 2, [*LSTM_DEFAULTS, "sigmoid", "relu", "tanh"])]  # the EP skips the reverse cell's name
    for op, directions, names in passing:
        node, graph = recurrent(tmp_path, op, directions=directions, **({"activations": names} if names else {}))
        defaults = LSTM_DEFAULTS if op == "LSTM" else GRU_DEFAULTS
        assert verdict("recurrent_activations_spelled", node, graph, defaults)[0], (op, names)


def test_no_clip(tmp_path: Path) -> None:
    """Found with the QNN EP of onnxruntime-qnn 2.7.0 (probe graphs in tests/vendors/qnn/test_emulator.py)."""
    node, graph = recurrent(tmp_path, "GRU", clip=3.0)
    assert verdict("no_clip", node, graph, True) == (False, "GRU clips at 3")
    assert verdict("no_clip", node, graph, False)[0]
    no_clips: list[dict[str, Any]] = [{}, {"clip": 0.0}]
    for attrs in no_clips:
        node, graph = recurrent(tmp_path, "LSTM", **attrs)
        assert verdict("no_clip", node, graph, True) == (True, "no clip")


def test_constant_sequence_lens(tmp_path: Path) -> None:
    """Found with the QNN EP of onnxruntime-qnn 2.7.0 (probe graphs in tests/vendors/qnn/test_emulator.py)."""
    node, graph = recurrent(tmp_path, "GRU", lengths="input")
    assert verdict("constant_sequence_lens", node, graph, True) == (
        False, "GRU sequence_lens 'lengths' is computed at run time")
    assert verdict("constant_sequence_lens", node, graph, False)[0]
    node, graph = recurrent(tmp_path, "LSTM", lengths="constant")
    assert verdict("constant_sequence_lens", node, graph, True) == (True, "constant sequence_lens")
    node, graph = recurrent(tmp_path, "LSTM")  # absent: the reader drops the empty input, the state follows it
    assert verdict("constant_sequence_lens", node, graph, True) == (True, "no sequence_lens")


def test_no_peepholes(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0's compiler aborts ("SubGraphManager: not support yet"; with an empty optional input
    before P, "KeyError: ''"), as on every madmom LSTM; the same LSTM without P compiles."""
    from edgepipe.support import read_graph
    from tests.models.probes.sequences import peephole_lstm_onnx

    with_p = read_graph(peephole_lstm_onnx(tmp_path / "p.onnx"))
    lstm = next(n for n in with_p.nodes if n.op == "LSTM")
    assert verdict("no_peepholes", lstm, with_p, True) == (False, "has peephole weights (input P)")
    without = read_graph(peephole_lstm_onnx(tmp_path / "plain.onnx", peepholes=False))
    assert verdict("no_peepholes", next(n for n in without.nodes if n.op == "LSTM"), without, True)[0]


def test_sequence_output_read(tmp_path: Path) -> None:
    """A GRU of which only Y_h is used (PLCMOS v2's second GRU) blocks the RKNN build; one whose Y is read does not.

    rknn-toolkit2 2.5.0: "KeyError: ''" in PLCMOS v2, which pools its second GRU's states; an ONNX Runtime error in
    probes, whatever reads Y_h; an LSTM of which only the states are used builds.
    """
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


def test_state_slice_aligned(tmp_path: Path) -> None:
    """RIANN's [2, 1, 1, H] h0, indexed per layer: rknn-toolkit2 2.5.0 on RK3588 runs H = 200 on the CPU, 208 and 64
    on the NPU (probed)."""
    from edgepipe.support import read_graph
    from tests.models.probes.sequences import stacked_gru_onnx

    for hidden, ok in ((200, False), (208, True)):
        graph = read_graph(stacked_gru_onnx(tmp_path / f"gru{hidden}.onnx", hidden))
        gather = next(n for n in graph.nodes if n.op == "Gather")
        assert verdict("state_slice_aligned", gather, graph, 16)[0] is ok
    assert verdict("state_slice_aligned", gather, graph, 16)[1] == "aligned state slice"


def test_time_axis_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReverseSequence", [[98, 1, 64], [1]], [98, 1, 64], time_axis=1, batch_axis=0)
    assert verdict("time_axis_in", node, graph, [0]) == (False, "ReverseSequence time_axis 1 not in 0")
    node, graph = single(tmp_path, "ReverseSequence", [[98, 1, 64], [1]], [98, 1, 64], time_axis=0, batch_axis=1)
    assert verdict("time_axis_in", node, graph, [0])[0]


def test_reverse_sequence_of_run_time_lengths_is_a_cpu_op(tmp_path: Path) -> None:
    """rk3588 / rk3576: a ReverseSequence runs on the NPU with time first and constant lengths only."""
    from edgepipe.support import check_model
    from edgepipe.targets import load_profile
    from tests.models.probes.sequences import reverse_sequence_onnx

    for target in ("rk3588", "rk3576"):
        profile = load_profile(target)
        for time_axis, lengths, where in ((0, "constant", "accelerator"), (0, "input", "cpu"), (1, "constant", "cpu")):
            model = reverse_sequence_onnx(tmp_path / f"rev{time_axis}{lengths}.onnx", time_axis, lengths)
            verdict_ = next(v for v in check_model(model, profile).node_verdicts if v.op == "ReverseSequence")
            assert verdict_.placement == where, (target, time_axis, lengths, verdict_.failed)


def reverse(tmp: Path, shape: list[int], axis: int, step: int = -1) -> tuple[OpNode, OpGraph]:
    consts = {"starts": np.array([-1 if step < 0 else 0], np.int64), "ends": np.array([-(2**62) if step < 0 else
                                                                                         2**62], np.int64),
              "axes": np.array([axis], np.int64), "steps": np.array([step], np.int64)}
    node = helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="slice")
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (shape, FLOAT)}, consts)
    return graph.nodes[0], graph


def test_steps_forward(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 on RK3576, along any axis."""
    ok, detail = verdict("steps_forward", *reverse(tmp_path, [1, 8, 16, 16], 3), True)
    assert not ok and "axis [3]" in detail
    assert verdict("steps_forward", *reverse(tmp_path, [100, 64], 0, step=1), True)[0]


def test_steps_backwards_on_last_axis_only(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 on RK3588: madmom's bidirectional RNNs, built from forward RNNs over reversed sequences."""
    ok, detail = verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [100, 64], 0), True)
    assert not ok and "axis [0] of a rank-2 tensor" in detail
    assert verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [100, 64], -1), True)[0]
    assert verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [1, 8, 16, 16], 3), True)[0]
    assert not verdict("steps_backwards_on_last_axis_only", *reverse(tmp_path, [1, 8, 16, 16], 2), True)[0]


def pad(tmp: Path, shape: list[int], pads: list[int]) -> tuple[OpNode, OpGraph]:
    out = [d + pads[i] + pads[i + len(shape)] for i, d in enumerate(shape)]
    node = helper.make_node("Pad", ["x", "pads"], ["y"], name="pad", mode="constant")
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (out, FLOAT)}, {"pads": np.array(pads, np.int64)})
    return graph.nodes[0], graph


def test_matrix_pad_axes_max(tmp_path: Path) -> None:
    """madmom's key CNN pads both axes of its [T, F] spectrogram: CPU on RK3588 and RK3576 (rknn-toolkit2 2.5.0)."""
    ok, detail = verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105], [2, 2, 2, 2]), 1)
    assert not ok and "axes [0, 1]" in detail
    assert verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105], [0, 2, 0, 2]), 1)[0]
    assert verdict("matrix_pad_axes_max", *pad(tmp_path, [40, 105, 24], [2, 2, 0, 2, 2, 0]), 1)[0]  # rank 3


def test_sequence_concat_reshape_aligned(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 on RK3588 runs the Unsqueeze that feeds such a Concat to the next recurrent layer on the
    CPU (madmom's bidirectional onset RNN: 2 x 25 units); one reading a reversal, which runs on the CPU, runs on the
    NPU."""
    from edgepipe.support import read_graph
    from tests.models.probes.sequences import bidirectional_layers_onnx

    graph = read_graph(bidirectional_layers_onnx(tmp_path / "brnn.onnx", [25, 8]))
    nodes = {n.name: n for n in graph.nodes}
    ok, detail = verdict("sequence_concat_reshape_aligned", nodes["next_batch_axis_0"], graph, 16)
    assert not ok and "'concat0'" in detail and "50 wide" in detail
    assert verdict("sequence_concat_reshape_aligned", nodes["next_batch_axis_1"], graph, 16)[0]  # 16 wide
    assert verdict("sequence_concat_reshape_aligned", nodes["batch_axis_0"], graph, 16)[0]  # of the graph input
