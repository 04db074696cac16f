"""Constraints on recurrent ops and sequence tensors: LSTM and GRU attributes and states, time reversal, and the
layouts of [T, F] and recurrent sequences on the NPU."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint

#: Recurrent ops: the Rockchip compiler holds their output sequence time-major, as [T, 1, 1, hidden], and reshapes
#: their states (graph inputs they read, their Y_h) on the NPU whatever the size.
RECURRENT_OPS = ("RNN", "GRU", "LSTM")
#: Ops that pass a recurrent sequence on in that form: the Squeeze of the direction axis, reversals, Concats.
_SEQUENCE_PASSING = ("Squeeze", "Slice", "Concat", "Identity")


def _names(node: OpNode) -> list[str]:
    """The node's ``activations`` attribute as text (ONNX stores strings as bytes)."""
    return [a.decode() if isinstance(a, bytes) else str(a) for a in node.attrs.get("activations") or []]


@constraint
def recurrent_activations_spelled(node: OpNode, graph: OpGraph, defaults: list[str]) -> Verdict:
    """Its activations are not given, or each direction's are exactly {param}, in lower case: the QNN EP compares
    the names case-sensitively.

    ONNX's own spellings Sigmoid and Tanh send the op to the CPU. Of a bidirectional LSTM's second direction the EP
    compares the first and the last name only.
    """
    names = _names(node)
    if not names:
        return True, "default activations"
    checked = list(range(len(defaults)))
    if len(names) == 2 * len(defaults):
        second = [len(defaults), 2 * len(defaults) - 1] if node.op == "LSTM" else \
            list(range(len(defaults), 2 * len(defaults)))
        checked += second
    wrong = [names[i] for i in checked if i < len(names) and names[i] != defaults[i % len(defaults)]]
    if wrong or len(names) < len(defaults):
        return False, f"{node.op} activations {', '.join(names)} are not spelled {', '.join(defaults)}"
    return True, f"activations {', '.join(names)}"


@constraint
def no_clip(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Its cell clip is not set (absent or 0): the QNN EP rejects a clipped LSTM or GRU (ONNX clips the input of
    every gate's activation, QNN only the cell state)."""
    clip = float(node.attrs.get("clip") or 0.0)
    bad = required and clip != 0.0
    return not bad, f"{node.op} clips at {clip:g}" if bad else "no clip"


@constraint
def constant_sequence_lens(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Its sequence_lens input is absent or a constant: the QNN EP rejects lengths computed at run time (and
    constant lengths that differ between the batch entries, whose values edgepipe's graph does not hold)."""
    # the reader drops absent (empty) inputs, so positions shift: sequence_lens is the recurrent op's one int32 input
    lengths = next((t for t in node.inputs if t.dtype == "int32"), None)
    if not required or lengths is None:
        return True, "no sequence_lens"
    if not lengths.constant:
        return False, f"{node.op} sequence_lens '{lengths.name}' is computed at run time"
    return True, "constant sequence_lens"


def has_peepholes(node: OpNode) -> bool:
    """An LSTM with a constant input shaped like peephole weights, [directions, 3 x hidden_size] (the reader keeps
    no empty inputs, so ``P`` is known by its shape: W, R and B have 4 or 8 x hidden_size rows)."""
    hidden = int(node.attrs.get("hidden_size") or 0)
    return node.op == "LSTM" and any(t.constant and t.shape is not None and len(t.shape) == 2 and
                                     t.shape[1] == 3 * hidden for t in node.inputs)


@constraint
def no_peepholes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """An LSTM has no peephole weights (its input P): the compiler aborts on one; the same LSTM without P
    compiles."""
    if required and has_peepholes(node):
        return False, "has peephole weights (input P)"
    return True, "no peephole weights"


@constraint
def sequence_output_read(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The recurrent op's output sequence Y (its first output) is read by an op or is a graph output: the compiler
    fails to build a GRU of which only the final state Y_h is used."""
    if not required or not node.outputs:
        return True, "not required"
    first = node.outputs[0].name
    if first and (first in graph.output_names() or graph.consumers().get(first)):
        return True, "its output sequence is used"
    return False, f"{node.op} '{node.name}': only its final state is used, its output sequence Y is read by nothing"


@constraint
def state_slice_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Gather of one recurrent op's state from a graph input of stacked states ([layers, 1, 1, H] indexed per
    layer) needs H a multiple of {param}: the compiler makes it a Slice and a Reshape to [1, 1, H]."""
    data = node.inputs[0] if node.inputs else None
    out = node.outputs[0].shape if node.outputs else None
    if data is None or data.name not in graph.input_names() or not out or len(out) < 3:
        return True, "not a state slice of a graph input"
    readers = [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]
    last = out[-1]
    if not any(r.op in RECURRENT_OPS for r in readers) or not isinstance(last, int) or last % multiple == 0:
        return True, "aligned state slice"
    return False, (f"{node.op} slices a state of {last} units from graph input '{data.name}', not a multiple of "
                   f"{multiple}")


@constraint
def time_axis_in(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """The op's time_axis (a ReverseSequence's) is one of {param}."""
    axis = int(node.attrs.get("time_axis", 0) or 0)
    if axis in allowed:
        return True, f"time_axis {axis}"
    return False, f"{node.op} time_axis {axis} not in {', '.join(str(a) for a in allowed)}"


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
    """A Slice has no negative step: a reversal, along any axis, runs on the CPU (as in a bidirectional RNN
    exported as two forward ones, each reading and writing the sequence backwards)."""
    reversed_axes = _reversed_axes(node)
    if not required or not reversed_axes:
        return True, "steps forward" if reversed_axes is not None else "no constant steps"
    return False, f"Slice steps backwards along axis {reversed_axes}"


@constraint
def steps_backwards_on_last_axis_only(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Slice with a negative step (a reversal) steps backwards along its data's last axis only; one reversing
    any other axis, such as the time axis of a [T, F] sequence, runs on the CPU."""
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
    spectrogram runs on the CPU.

    Pads of other ranks are not limited by this rule (3-D pads of two axes run on either side, depending on the
    axes and on the op after them).
    """
    pads = node.attrs.get("pads")
    shape = node.inputs[0].shape if node.inputs else None
    if not pads or shape is None or len(shape) != 2 or len(pads) != 4:
        return True, "not a constant Pad of a 2-D tensor"
    padded = [axis for axis in range(2) if pads[axis] or pads[axis + 2]]
    if len(padded) > limit:
        return False, f"Pad of a 2-D tensor pads axes {padded} (more than {limit})"
    return True, f"pads axes {padded}"


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
    """A reshape of the Concat of recurrent outputs (a bidirectional layer's two sequences, held as [T, 1, 1, W]
    on the NPU) writes W, its last axis, as a multiple of {param}."""
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
