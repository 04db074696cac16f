"""Constraints on reshapes and layout transposes on the Rockchip NPU, which keeps every feature map 4-D.

A reshape runs there when the compiler can do it by moving whole H x W planes of its 4-D form; what that form is,
and which reshapes it merges or cancels, is in rules/npu_layouts.py. ``reshape_layout_aligned`` walks the cases
in the order the compiler settles them: the first case that applies decides.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.dense import fully_connected
from edgepipe.rules.neighbours import RESHAPES, layout_source, readers_through_no_ops, static_dims, writer
from edgepipe.rules.npu_layouts import (
    FOUR_D_AGAIN,
    ROW_CHANNEL_ALIGN,
    ROW_WIDTH_MAX,
    SPATIAL_OPS,
    as_four_d,
    column_side,
    concat_form,
    drops_reduced_axes,
    merged_reshape_output,
    plane_reshape_verdict,
    row_transpose_spills,
    single_column_head,
)
from edgepipe.rules.sequence import RECURRENT_OPS


@dataclass
class _Reshape:
    """One reshape with static shapes: ``shape`` in, ``out`` written, and the ops around it."""

    node: OpNode
    graph: OpGraph
    multiple: int
    data: TensorInfo
    written: TensorInfo
    shape: list[int]
    out: list[int]
    readers: list[OpNode]
    source: OpNode | None

    @cached_property
    def to_output(self) -> bool:
        """Whether the reshape writes a graph output."""
        return self.written.name in self.graph.output_names()

    @cached_property
    def held(self) -> OpNode | None:
        """The op whose layout the reshape's input keeps (through element-wise and Q/DQ ops), if any."""
        return layout_source(self.source, self.graph) if self.source is not None else None

    def small(self) -> Verdict:
        return False, f"{self.node.op} writes '{self.written.name}' of {self.written.elements} elements < " \
                      f"{self.multiple}"

    def plane_area(self, four_d: list[int], what: str) -> Verdict:
        """The verdict on giving the 3-D input the 4-D form ``four_d``: its H x W plane must be aligned."""
        area = four_d[2] * four_d[3]
        return area % self.multiple == 0, (f"gives {self.shape} a fourth axis{what}: an H x W plane of {area} "
                                           "elements" + ("" if area % self.multiple == 0 else
                                                         f", not a multiple of {self.multiple}"))


def _merged_with_next(r: _Reshape) -> Verdict | None:
    """Only reshapes read it: the compiler merges the chain into one reshape, judged here when it gives a 3-D
    tensor a fourth axis (unless the input keeps another op's layout or Transposes read the result)."""
    if not r.readers or not all(x.op in RESHAPES for x in r.readers):
        return None
    final = merged_reshape_output(r.readers, r.graph)
    if len(r.shape) == 3 and final is not None and len(final[0]) == 4 and r.held is None and \
            not all(x.op == "Transpose" for x in final[1]):
        return r.plane_area(final[0], " with the reshape after it")
    return True, "merged with the reshape after it"


def _cancels_squeeze(r: _Reshape) -> Verdict | None:
    """A 1-D convolution's or pooling's [N, C, 1, W] squeezed to 3-D for an Add or a Relu, which the compiler
    gives a 4-D input again: the two reshapes cancel."""
    if len(r.shape) == 4 and len(r.out) == 3 and r.shape == as_four_d(r.out) and r.readers and \
            all(x.op in FOUR_D_AGAIN for x in r.readers) and not r.to_output:
        if r.held is not None and r.held.op in SPATIAL_OPS:
            return True, (f"drops the axis {r.held.op} '{r.held.name}' holds {r.out} with, for ops the toolkit "
                          "gives it back to (the two reshapes cancel)")
    return None


def _recurrent_state(r: _Reshape) -> Verdict | None:
    """A recurrent op's state (a graph input it reads) or output: reshaped on the NPU, unless it goes between 3-D
    and 4-D with an unaligned last axis and is not read by Transposes."""
    state_in = r.source is None and r.data.name in r.graph.input_names() and \
        any(x.op in RECURRENT_OPS for x in r.readers)
    if not (state_in or r.source is not None and r.source.op in RECURRENT_OPS):
        return None
    if len(r.shape) >= 3 and len(r.out) >= 3 and r.shape[-1] % r.multiple and \
            not (r.readers and all(x.op == "Transpose" for x in r.readers)):
        return False, (f"reshapes a recurrent op's state or output between {len(r.shape)}-D and {len(r.out)}-D "
                       f"with a last axis of {r.shape[-1]}, not a multiple of {r.multiple}")
    return True, "reshapes a recurrent op's state (a graph input it reads, or its output), not a feature map"


def _taken_in_by_neighbour(r: _Reshape) -> Verdict | None:
    """A reshape dropping the axes a kept ReduceMean reduced, or flattening into the one input row of dense
    layers: the mean's or the layer's own reshape takes it in (not at a graph output)."""
    outputs = r.graph.output_names()
    if r.source is not None and drops_reduced_axes(r.source, r.shape, r.out) and r.written.name not in outputs and \
            not any(t.name in outputs for x in r.readers for t in x.outputs):
        return True, f"drops the axes {r.source.op} '{r.source.name}' reduced, merged with its own reshape"
    if len(r.out) == 2 and r.out[0] == 1 and r.readers and all(fully_connected(x) for x in r.readers) and \
            not r.to_output:
        return True, f"flattens {r.shape} into the input row of a fully connected layer, which takes it in"
    return None


def _column_ops_side(r: _Reshape) -> Verdict | None:
    """A reshape between 4-D and the [N, C, W] a HardSigmoid or HardSwish reads or writes, held as [N, C, W, 1]:
    whole rows only, so W must be aligned unless the reshape only adds or drops that last axis."""
    sides = column_side(r.node, r.graph, r.shape, r.out)
    if sides is None:
        return None
    three, four = sides
    if four == [*three, 1] or three[2] % r.multiple == 0:
        return True, f"moves a HardSigmoid's {three}, held as {[*three, 1]}, in whole rows"
    return False, (f"{r.node.op} moves a HardSigmoid's {three}, held as {[*three, 1]}, to or from {four} "
                   f"(W = {three[2]}, not a multiple of {r.multiple})")


def _head_or_stack(r: _Reshape) -> Verdict | None:
    """A one-column dense head [M, 1] (held as [1, 1, 1, M]) reshaped to a graph output, judged as that plane; a
    tensor given a leading axis of size 1 for a Concat that stacks it runs on the NPU."""
    column = single_column_head(r.node, r.graph)
    if column is not None and r.to_output:
        return plane_reshape_verdict([1, 1, 1, column], r.out, r.multiple)
    if len(r.out) == len(r.shape) + 1 and r.out == [1, *r.shape] and r.readers and \
            all(x.op == "Concat" for x in r.readers):
        return True, f"stacks {r.shape} as a row of a Concat"
    return None


def _between_2d_and_3d(r: _Reshape) -> Verdict | None:
    """A reshape between 2-D and 3-D that changes the shape (not at a graph output, not for a recurrent op, not
    after a Transpose it merges with): [N, C] is read as [N, C, 1, 1], a 1-D convolution's [N, C, W] as
    [N, C, 1, W]."""
    if not (len(r.shape) in (2, 3) and len(r.out) in (2, 3) and r.shape != r.out and not r.to_output
            and not any(x.op in RECURRENT_OPS for x in r.readers) and (r.source is None or r.source.op != "Transpose")):
        return None
    if r.written.elements < r.multiple:
        return r.small()
    if len(r.shape) == 2 or (r.held is not None and r.held.op in SPATIAL_OPS):
        return plane_reshape_verdict(as_four_d(r.shape), r.out, r.multiple)
    return None


def _given_size_one_axes(r: _Reshape) -> Verdict | None:
    """A vector given axes of size 1 (not at a graph output), or a 3-D tensor given the 4-D form it is held in,
    runs on the NPU; another 3-D tensor given a fourth axis needs an aligned H x W plane, unless every reader is a
    one-row Transpose that runs on the CPU itself."""
    if len(r.shape) == 1 and not r.to_output and [d for d in r.out if d != 1] == [d for d in r.shape if d != 1]:
        return True, f"gives the vector {r.shape} axes of size 1"
    if len(r.shape) == 3 and r.out == as_four_d(r.shape) and (r.shape[2] == 1 or r.held is not None and
                                                               r.held.op in SPATIAL_OPS):
        return True, f"gives {r.shape}, held as {r.out}, that form"
    if len(r.shape) == 3 and len(r.out) == 4 and r.held is None and \
            not (r.readers and all(row_transpose_spills(x) for x in r.readers)):
        return r.plane_area(r.out, "")
    return None


def _four_d_plane(r: _Reshape) -> Verdict:
    """The general case: a reshape of a 4-D [1, C, H, W] is judged by its plane (as the 4-D form the compiler gives
    a Concat's input, when a Concat reads it); of another rank, by the elements it writes."""
    if len(r.shape) != 4 or r.shape[0] != 1:
        return r.small() if r.written.elements < r.multiple else (True, "large enough")
    plane = plane_reshape_verdict(r.shape, r.out, r.multiple)
    if len(r.out) == 4 or r.to_output:
        return plane
    if r.written.elements < r.multiple:
        return r.small()
    forms = [f for x in r.readers if x.op == "Concat" for f in [concat_form(r.node, r.graph, x)] if f is not None]
    if forms:
        return plane_reshape_verdict(r.shape, forms[0], r.multiple)
    return plane if r.out[-1] == 1 else (True, f"flattens {r.shape} into {r.out} for the op after it")


#: The cases of :func:`reshape_layout_aligned`, in order; the first that returns a verdict decides.
_CASES: tuple[Callable[[_Reshape], Verdict | None], ...] = (
    _merged_with_next, _cancels_squeeze, _recurrent_state, _taken_in_by_neighbour, _column_ops_side, _head_or_stack,
    _between_2d_and_3d, _given_size_one_axes)


@constraint
def reshape_layout_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A reshape keeps the NPU's 4-D layout: it keeps W last, moves only axes of size 1, or reads H x W planes (or
    1 x 1 channels) of a multiple of {param} elements; one to another rank writes at least {param} elements.

    The reshape is judged as the compiler sees it: merged with the reshapes after it, taken into a dense layer or
    a mean, and a 2-D or 3-D tensor in the 4-D form the NPU holds it in.
    """
    data, written = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    shape, out = static_dims(data.shape if data else None), static_dims(written.shape if written else None)
    if data is None or written is None or shape is None or out is None:
        return True, "no static shapes"
    reshape = _Reshape(node, graph, multiple, data, written, shape, out, readers_through_no_ops(node, graph),
                       writer(node, graph, 0))
    for case in _CASES:
        found = case(reshape)
        if found is not None:
            return found
    return _four_d_plane(reshape)


@constraint
def row_transpose_aligned(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Transpose of a one-row NHWC map to NCHW ([1, 1, W, C] -> [1, C, 1, W], as before a 1-D convolution)
    keeps C a multiple of 16 or W at most 1024."""
    if required and row_transpose_spills(node):
        shape = static_dims(node.inputs[0].shape) or []
        return False, (f"moves the {shape[3]} channels of a one-row map {shape} in front: width {shape[2]} > "
                       f"{ROW_WIDTH_MAX} with channels not a multiple of {ROW_CHANNEL_ALIGN}")
    return True, "not a wide one-row map with unaligned channels"
