"""Constraints on sequence models' tensors: time reversal, rank-2 and rank-3 layouts (Rockchip, found with
rknn-toolkit2 2.5.0 on probe graphs: tests/verify/test_rknn_sequence.py)."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


def _reversed_axes(node: OpNode) -> list[int] | None:
    """The axes a Slice steps backwards along (negative step), as non-negative indices; None when its steps or
    its data's rank are not known."""
    steps = node.attrs.get("steps")
    shape = node.inputs[0].shape if node.inputs else None
    if steps is None or shape is None:
        return None
    rank = len(shape)
    axes = list(node.attrs.get("axes") or range(len(steps)))
    return [int(axis) % rank for axis, step in zip(axes, steps) if step < 0]


@constraint
def steps_forward(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Slice has no negative step: a reversal (a bidirectional RNN exported as two forward ones, each reading
    and writing the sequence backwards) runs on the CPU (rknn-toolkit2 2.5.0 on RK3576, along any axis)."""
    reversed_axes = _reversed_axes(node)
    if not required or not reversed_axes:
        return True, "steps forward" if reversed_axes is not None else "no constant steps"
    return False, f"Slice steps backwards along axis {reversed_axes}"


@constraint
def steps_backwards_on_last_axis_only(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Slice with a negative step (a reversal) steps backwards along its data's last axis only; one reversing
    any other axis, e.g. the time axis of a [T, F] sequence, runs on the CPU (rknn-toolkit2 2.5.0 on RK3588:
    madmom's bidirectional RNNs, built from forward RNNs over reversed sequences)."""
    reversed_axes = _reversed_axes(node)
    if not required or not reversed_axes:
        return True, "steps forward" if reversed_axes is not None else "no constant steps"
    rank = len(node.inputs[0].shape or ())
    others = [axis for axis in reversed_axes if axis != rank - 1]
    if others:
        return False, f"Slice steps backwards along axis {others} of a rank-{rank} tensor, not its last axis"
    return True, "reverses the last axis"


@constraint
def matrix_pad_axes_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """A Pad of a 2-D tensor pads at most {param} axis; one padding both the time and the feature axis of a [T, F]
    spectrogram (madmom's key CNN) runs on the CPU (rknn-toolkit2 2.5.0, RK3588 and RK3576). Pads of other ranks
    are not limited by this rule (3-D pads of two axes run on either side, depending on the axes and on the op
    after them)."""
    pads = node.attrs.get("pads")
    shape = node.inputs[0].shape if node.inputs else None
    if not pads or shape is None or len(shape) != 2 or len(pads) != 4:
        return True, "not a constant Pad of a 2-D tensor"
    padded = [axis for axis in range(2) if pads[axis] or pads[axis + 2]]
    if len(padded) > limit:
        return False, f"Pad of a 2-D tensor pads axes {padded} (more than {limit})"
    return True, f"pads axes {padded}"


def has_peepholes(node: OpNode) -> bool:
    """An LSTM with a constant input shaped like peephole weights, [directions, 3 x hidden_size] (the reader keeps
    no empty inputs, so ``P`` is known by its shape: W, R and B have 4 or 8 x hidden_size rows)."""
    hidden = int(node.attrs.get("hidden_size") or 0)
    return node.op == "LSTM" and any(t.constant and t.shape is not None and len(t.shape) == 2 and
                                     t.shape[1] == 3 * hidden for t in node.inputs)


@constraint
def no_peepholes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """An LSTM has no peephole weights (its input P): rknn-toolkit2 2.5.0's compiler aborts on one ("SubGraphManager:
    not support yet"; with an empty optional input before P, "KeyError: ''"), as on every madmom LSTM; the same LSTM
    without P compiles."""
    if required and has_peepholes(node):
        return False, "has peephole weights (input P)"
    return True, "no peephole weights"


@constraint
def sequence_output_read(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The recurrent op's output sequence Y (its first output) is read by an op or is a graph output: rknn-toolkit2
    2.5.0 fails to build a GRU of which only the final state Y_h is used ("KeyError: ''" in PLCMOS v2, which pools
    its second GRU's states; an ONNX Runtime error in probes, whatever reads Y_h), and builds one whose Y is read
    (an LSTM of which only the states are used builds too)."""
    if not required or not node.outputs:
        return True, "not required"
    first = node.outputs[0].name
    if first and (first in graph.output_names() or graph.consumers().get(first)):
        return True, "its output sequence is used"
    return False, f"{node.op} '{node.name}': only its final state is used, its output sequence Y is read by nothing"


#: Recurrent ops: rknn-toolkit2 holds their output sequence time-major, as [T, 1, 1, hidden], and reshapes their
#: states (graph inputs they read, their Y_h) on the NPU whatever the size.
RECURRENT_OPS = ("RNN", "GRU", "LSTM")
#: Ops that pass a recurrent sequence on in that form: the Squeeze of the direction axis, reversals, Concats.
_SEQUENCE_PASSING = ("Squeeze", "Slice", "Concat", "Identity")


def _from_recurrent(node: OpNode, graph: OpGraph, depth: int = 8) -> bool:
    """Whether every data input of ``node`` comes from a recurrent op's output through sequence-passing ops."""
    producers = graph.producers()
    sources = [graph.nodes[producers[t.name]] for t in node.activations_in if t.name in producers]
    if not sources or depth == 0:
        return False
    return all(s.op in RECURRENT_OPS or (s.op in _SEQUENCE_PASSING and _from_recurrent(s, graph, depth - 1))
               for s in sources)


@constraint
def sequence_concat_reshape_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A reshape of the Concat of recurrent outputs (a bidirectional layer's forward and backward sequences,
    held as [T, 1, 1, W] on the NPU) writes W, its last axis, as a multiple of {param}: rknn-toolkit2 2.5.0 on
    RK3588 runs the Unsqueeze that feeds such a Concat to the next recurrent layer on the CPU otherwise (madmom's
    bidirectional onset RNN: 2 x 25 units); one reading a reversal, which runs on the CPU, runs on the NPU."""
    data = node.inputs[0] if node.inputs else None
    producers = graph.producers()
    writer = graph.nodes[producers[data.name]] if data is not None and data.name in producers else None
    if writer is None or writer.op != "Concat" or not _from_recurrent(writer, graph):
        return True, "not a reshape of a Concat of recurrent outputs"
    shape = data.shape if data is not None else None
    if shape is None or any(d is None for d in shape) or len(shape) < 2:
        return True, "no static shape"
    width = int(shape[-1])  # type: ignore[arg-type]
    if width % multiple == 0:
        return True, f"the sequence is {width} wide"
    return False, (f"{node.op} reshapes '{data.name}' {list(shape)}, the Concat '{writer.name}' of recurrent "  # type: ignore[union-attr]
                   f"outputs, {width} wide: not a multiple of {multiple}")
