"""How the Rockchip compiler holds tensors on its NPU, for the reshape rules (rules/reshape.py): the 4-D form of a
tensor of lower rank, the reshapes it merges or cancels, and the 4-D form it gives each input of a Concat.

Its NPU keeps every feature map as [N, C, H, W]; a reshape it cannot do by moving whole H x W planes (or whole
1 x 1 channels) falls back to the CPU. No constraints here.
"""

from __future__ import annotations

import math

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict
from edgepipe.rules.dense import matmul_columns
from edgepipe.rules.neighbours import RESHAPES, readers_through_no_ops, static_dims, writer

#: Ops whose 3-D output [N, C, W] the NPU holds as [N, C, 1, W] (a 1-D convolution or pooling).
SPATIAL_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool")
#: Ops the compiler rewrites to 4-D around a 3-D input (its unsqueeze_to_4d_add and _relu): a Squeeze of a
#: spatial op's [N, C, 1, W] before them cancels against that reshape back (bypass_two_reshape).
FOUR_D_AGAIN = ("Add", "Relu")
#: Ops whose 3-D input or output [N, C, W] the NPU holds as [N, C, W, 1].
_COLUMN_OPS = ("HardSigmoid", "HardSwish")
#: A Transpose of a one-row NHWC map to NCHW ([1, 1, W, C] -> [1, C, 1, W]) runs on the NPU only while C is a
#: multiple of this, or W is at most :data:`ROW_WIDTH_MAX` (row_transpose_aligned).
ROW_CHANNEL_ALIGN = 16
ROW_WIDTH_MAX = 1024


def row_transpose_spills(node: OpNode) -> bool:
    """Whether ``node`` is a Transpose of a one-row NHWC map [1, 1, W, C] to [1, C, 1, W] that the NPU leaves to
    the CPU: C not a multiple of :data:`ROW_CHANNEL_ALIGN` and W above :data:`ROW_WIDTH_MAX`."""
    if node.op != "Transpose" or not node.inputs:
        return False
    shape = static_dims(node.inputs[0].shape)
    if shape is None or len(shape) != 4 or shape[1] != 1 or list(node.attrs.get("perm") or ()) != [0, 3, 1, 2]:
        return False
    return shape[3] % ROW_CHANNEL_ALIGN != 0 and shape[2] > ROW_WIDTH_MAX


def plane_reshape_verdict(shape: list[int], out: list[int], multiple: int) -> Verdict:
    """Whether the NPU reshapes a 4-D [N, C, H, W] tensor into ``out``: it keeps W last, moves only axes of size 1,
    or reads an H x W plane of a multiple of ``multiple`` elements (or 1 x 1 planes of whole channels)."""
    channels, plane, four_d = shape[1], shape[2] * shape[3], len(out) == 4
    if four_d and out[-1] == shape[-1]:
        return True, "keeps the last axis"
    if four_d and [d for d in out if d != 1] == [d for d in shape if d != 1]:
        return True, "moves only axes of size 1"
    if plane % multiple == 0:
        return True, f"reads an H x W plane of {plane} elements"
    if plane == 1 and (channels % multiple == 0 or (four_d and out[1] == 1)):
        return True, f"reads {channels} channels of a 1 x 1 plane"
    return False, f"reads {shape} (H x W = {plane}, not a multiple of {multiple}) into {out}"


def as_four_d(shape: list[int]) -> list[int]:
    """How the NPU holds a 2-D [N, C] or a 1-D convolution's 3-D [N, C, W]: [N, C, 1, 1] or [N, C, 1, W] (so a
    flatten of [N, C, W] reads a plane of W elements; a 3-D tensor squeezed from a 4-D one is still held as that
    4-D tensor)."""
    return [shape[0], shape[1], 1, shape[2]] if len(shape) == 3 else [shape[0], shape[1], 1, 1]


def column_side(node: OpNode, graph: OpGraph, shape: list[int], out: list[int]) -> tuple[list[int], list[int]] | None:
    """(the 3-D side, the 4-D side) of a reshape between [N, C, W] and 4-D when a HardSigmoid or HardSwish reads its
    3-D output or wrote its 3-D input (alone or as the Mul of x * HardSigmoid(x)); None otherwise."""
    if len(shape) == 4 and len(out) == 3:
        return (out, shape) if any(r.op in _COLUMN_OPS for r in readers_through_no_ops(node, graph)) else None
    source = writer(node, graph, 0)
    if len(shape) != 3 or len(out) != 4 or source is None:
        return None
    gates = [w for w in (writer(source, graph, 0), writer(source, graph, 1)) if w is not None]
    if source.op in _COLUMN_OPS or source.op == "Mul" and any(w.op == "HardSigmoid" for w in gates):
        return shape, out
    return None


def _covered_dims(source: list[int], flat: list[int], axis: int) -> list[int] | None:
    """The axes of the 4-D ``source`` that axis ``axis`` of its reshape ``flat`` covers, matching sizes from the
    right (size-1 axes of ``flat`` cover nothing); None where the sizes do not line up."""
    groups: list[list[int]] = []
    j = len(source) - 1
    for size in reversed(flat):
        group: list[int] = []
        product = 1
        while size != 1 and product < size and j >= 0:
            product, group = product * source[j], [j, *group]
            j -= 1
        if product != size:
            return None
        groups.insert(0, group)
    return groups[axis] or None


def concat_form(node: OpNode, graph: OpGraph, concat: OpNode) -> list[int] | None:
    """The 4-D shape the compiler's unsqueeze_to_4d_concat reshapes ``node``'s output into as an input of
    ``concat``: the 4-D tensor the Concat's first input was reshaped from, resized along the concatenated axis
    ([1, 864, 1] next to [1, 1152, 1] from [1, 24, 24, 2] becomes [1, 18, 24, 2]). None for the first input
    itself, whose reshape the compiler removes, and where the sizes do not divide (then it leaves the input as
    it is)."""
    first = writer(concat, graph, 0)
    if first is None or first is node or first.op not in RESHAPES or not first.inputs or not first.outputs:
        return None
    source, flat = static_dims(first.inputs[0].shape), static_dims(first.outputs[0].shape)
    out = static_dims(node.outputs[0].shape)
    if source is None or flat is None or out is None or len(source) != 4 or len(flat) != len(out):
        return None
    axis = int(concat.attrs.get("axis", 0)) % len(flat)
    covered = _covered_dims(source, flat, axis)
    if covered is None or any(o != f for k, (o, f) in enumerate(zip(out, flat)) if k != axis):
        return None
    inner = math.prod(source[k] for k in covered[1:])
    if out[axis] % inner:
        return None
    form = list(source)
    form[covered[0]] = out[axis] // inner
    return form


def single_column_head(node: OpNode, graph: OpGraph) -> int | None:
    """The rows M of the [M, 1] product of a MatMul with constant weights (with its bias and activation) that
    ``node`` reshapes; the compiler runs the product as a 1 x 1 Conv and holds it as [1, 1, 1, M]. None for
    any other input."""
    source = writer(node, graph, 0)
    found = matmul_columns(source, graph) if source is not None else None
    shape = static_dims(node.inputs[0].shape) if node.inputs else None
    if found is None or found[1] != 1 or shape is None or len(shape) != 2:
        return None
    return shape[0]


def drops_reduced_axes(reduction: OpNode, shape: list[int], out: list[int]) -> bool:
    """Whether a reshape of ``shape`` into ``out`` drops exactly the axes that ``reduction``, a ReduceMean keeping
    them, reduced: the compiler turns such a mean into a matrix product followed by a reshape of its own, which
    the reshape cancels."""
    if reduction.op != "ReduceMean" or not int(reduction.attrs.get("keepdims", 1)) or not reduction.inputs:
        return False
    rank = len(shape)
    axes = {int(a) % rank for a in (reduction.attrs.get("axes") or range(rank))}
    return [d for k, d in enumerate(shape) if k not in axes] == out and all(shape[k] == 1 for k in axes)


def merged_reshape_output(readers: list[OpNode], graph: OpGraph) -> tuple[list[int], list[OpNode]] | None:
    """(the static shape a chain of reshapes ends with, the ops reading it) when ``readers`` is one reshape and each
    reshape after it has one reshape reader or none (the compiler merges such a chain into one Reshape layer);
    None otherwise."""
    current = readers
    for _ in range(len(graph.nodes)):
        if len(current) != 1 or current[0].op not in RESHAPES or not current[0].outputs:
            return None
        after = readers_through_no_ops(current[0], graph)
        if not after or not all(r.op in RESHAPES for r in after):
            final = static_dims(current[0].outputs[0].shape)
            return (final, after) if final is not None else None
        current = after
    return None
