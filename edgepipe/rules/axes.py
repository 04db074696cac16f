"""Constraints on the axes an op works along: its axis attribute, the axes it reduces, permutes, pads or slices."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def axis_in(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """The op's axis (negative counted from the end, normalised to the input's rank) is one of {param}."""
    axis = node.attrs.get("axis")
    if axis is None:
        return True, "no axis"
    rank = len(node.outputs[0].shape) if node.outputs and node.outputs[0].shape is not None else 0
    normal = axis + rank if axis < 0 else axis
    ok = axis in allowed or normal in allowed or (normal - rank) in allowed
    return ok, f"{node.op} axis {axis} not in {', '.join(str(a) for a in allowed)}" if not ok else f"axis {axis}"


@constraint
def reduced_axis_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every reduced axis is shorter than {param} elements."""
    shape = node.inputs[0].shape if node.inputs else None
    axes = node.attrs.get("axes") or []
    if not shape or not axes:
        return True, "no axes"
    sizes = [shape[a] for a in axes if -len(shape) <= a < len(shape) and isinstance(shape[a], int)]
    worst = max(sizes, default=0)
    return worst < limit, f"{node.op} reduced axis of {worst} >= {limit}" if worst >= limit else "axes ok"


@constraint
def reduce_keeps_batch(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A reduction never reduces over the batch (first) axis."""
    axes = node.attrs.get("axes") or []
    bad = required and 0 in axes
    return not bad, f"{node.op} reduces over the batch axis" if bad else "batch kept"


@constraint
def keeps_an_axis(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A reduction keeps at least one axis of size above 1: a reduction of the whole tensor to one value runs on
    the CPU."""
    out = node.outputs[0] if node.outputs else None
    whole = required and out is not None and out.static and out.elements == 1 and bool(node.inputs) and \
        node.inputs[0].static and node.inputs[0].elements > 1
    return not whole, f"{node.op} reduces {node.inputs[0].shape} to one value" if whole else "keeps an axis"


@constraint
def reduces_only_axes(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """Every axis the reduction reduces (all of them when it names none) is one of {param}, counted from the
    front; an empty list puts every reduction of this op on the CPU."""
    shape = node.inputs[0].shape if node.inputs else None
    if shape is None:
        return True, "unknown rank"
    rank = len(shape)
    axes = sorted({a + rank if a < 0 else a for a in (node.attrs.get("axes") or range(rank))})
    other = [a for a in axes if a not in allowed]
    if other:
        return False, f"{node.op} reduces axis {other[0]} of {list(shape)} (the NPU reduces only axes {allowed})"
    return True, f"reduces axes {axes}"


@constraint
def perm_in(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """A transpose's permutation (written like 0231) is one of {param}."""
    perm = node.attrs.get("perm")
    if perm is None:
        return False, f"{node.op} permutation is not constant"
    text = "".join(str(p) for p in perm)
    return text in allowed, f"{node.op} permutation {text} not in {', '.join(allowed)}"


@constraint
def transpose_axes_product_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """A transpose that is not the identity keeps its axes within {param}: H, W and C each when only the
    three innermost axes are larger than 1, otherwise the product of any N-2 of its N axes."""
    shape = node.inputs[0].shape if node.inputs else None
    perm = node.attrs.get("perm")
    if not shape or perm is None or list(perm) == list(range(len(shape))):
        return True, "identity"
    dims = [int(d or 0) for d in shape]
    if len(dims) <= 3 or all(d == 1 for d in dims[:-3]):
        worst = max(dims[-3:])
        return worst <= limit, f"{node.op} axis of {worst} > {limit}" if worst > limit else "axes ok"
    largest = sorted(dims, reverse=True)[: len(dims) - 2]
    product = 1
    for dim in largest:
        product *= dim
    return product <= limit, f"{node.op} product of {len(largest)} axes {product} > {limit}" if product > limit \
        else "axes ok"


@constraint
def channel_pad_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Pad that adds channels only after the last one reads a channel count that is a multiple of {param}; one
    that adds channels before the first pads no spatial axis as well."""
    pads = node.attrs.get("pads")
    shape = node.inputs[0].shape if node.inputs else None
    if not pads or len(pads) != 8 or not shape or len(shape) != 4:
        return True, "not a 4-D Pad with constant pads"
    before, after, spatial = pads[1], pads[5], any(pads[i] for i in (2, 3, 6, 7))
    channels = shape[1]
    if after and not before and isinstance(channels, int) and channels % multiple:
        return False, f"Pad adds {after} channels after {channels}, not a multiple of {multiple}"
    if before and spatial:
        return False, f"Pad adds {before} channels before the first and pads spatial axes too"
    return True, "channel pad the NPU runs" if before or after else "no channel padding"


def _strided(node: OpNode | None) -> bool:
    return node is not None and node.op == "Slice" and any(abs(s) > 1 for s in node.attrs.get("steps") or ())


@constraint
def strided_after_strided(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Slice with a step above 1 reads the output of another such Slice (a strided Slice of a graph input or of
    a Conv's output runs on the CPU; the one after it does not)."""
    if not required or not _strided(node):
        return True, "step 1" if node.attrs.get("steps") else "no constant steps"
    producers = graph.producers()
    source = node.inputs[0].name if node.inputs else ""
    before = graph.nodes[producers[source]] if source in producers else None
    if _strided(before):
        return True, "reads a strided Slice"
    return False, f"Slice of steps {list(node.attrs['steps'])} reads '{source}', not a strided Slice's output"
