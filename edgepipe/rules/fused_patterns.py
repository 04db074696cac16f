"""Ops the compiler runs on its NPU only as part of a pattern it fuses into one layer: a softmax, a GELU, or a
layer or L2 normalization written out, and the division that ends one."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.neighbours import readers, writer

#: Steps the compiler fuses between a normalization's reduction and its Div (Add and Pow by a constant; reshapes).
_NORM_STEPS = frozenset({"Expand", "Clip", "Sqrt", "Pow", "Add", "Reshape", "Squeeze", "Unsqueeze"})


def _shape_only(tensor: TensorInfo, graph: OpGraph) -> bool:
    """A tensor computed from shapes alone (a Cast of a constant shape, as tf2onnx writes a Reshape's target)."""
    source = graph.producers().get(tensor.name)
    cast = graph.nodes[source] if source is not None else None
    return cast is not None and cast.op == "Cast" and all(t.constant for t in cast.inputs)


def _reduction_behind(divisor: OpNode, graph: OpGraph) -> OpNode | None:
    """The ReduceSum/ReduceMean/ReduceL2 the divisor is computed from through the fused steps, if any."""
    current: OpNode | None = divisor
    for _ in range(len(graph.nodes)):
        if current is None:
            return None
        if current.op in ("ReduceSum", "ReduceMean", "ReduceL2"):
            return current
        if current.op not in _NORM_STEPS or not all(t.constant or _shape_only(t, graph) for t in current.inputs[1:]):
            return None
        current = writer(current, graph)
    return None


def is_square(node: OpNode | None) -> bool:
    """``x * x``, or ``x`` to a constant scalar power (the exponent's value is not in the graph summary)."""
    if node is None:
        return False
    if node.op == "Mul":
        return len(node.inputs) == 2 and node.inputs[0].name == node.inputs[1].name
    return node.op == "Pow" and len(node.inputs) == 2 and node.inputs[1].constant and node.inputs[1].elements == 1


@constraint
def divides_by_constant_or_norm(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The divisor is a constant, or the division ends a softmax, an L2 or a layer normalization written out,
    which the compiler fuses (its reduction keeping its axes).

    A softmax written out divides an Exp by a ReduceSum of it; a normalization divides by a ReduceL2, or by a
    ReduceSum or ReduceMean of a square or a power followed by Sqrt or Pow, Add of a constant, Clip, Expand or
    reshapes. Other divisions by a tensor computed at run time, and the reciprocal of a norm, run on the CPU.
    """
    if not required or len(node.inputs) < 2 or node.inputs[1].constant:
        return True, "divides by a constant" if required else "any divisor"
    divisor = writer(node, graph, 1)
    reduction = _reduction_behind(divisor, graph) if divisor is not None else None
    if reduction is not None and not node.inputs[0].constant:
        reduced = writer(reduction, graph)
        if reduced is not None and reduced.op == "Exp" and reduced.outputs[0].name == node.inputs[0].name:
            return True, "ends a softmax written out"
        if (reduction.op == "ReduceL2" or is_square(reduced)) and not reduction.attrs.get("keepdims", 1):
            return False, f"{node.op} divides by a norm whose {reduction.op} '{reduction.name}' drops its axes"
        if reduction.op == "ReduceL2" or is_square(reduced):
            return True, f"ends a normalization ({reduction.op} of a square)"
    source = f"{divisor.op} '{divisor.name}'" if divisor is not None else f"graph input '{node.inputs[1].name}'"
    return False, f"{node.op} divides by {source}, computed at run time"


@constraint
def in_layer_norm_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a layer or L2 normalization written out, which the compiler fuses into one normalization layer;
    alone the op runs on the CPU.

    A layer normalization is ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div, the Div dividing the
    centred input; an L2 normalization is a ReduceSum of a square, keeping its axes, -> Sqrt -> Div. Read as a
    reciprocal (a constant divided by it, then a Mul), or after a sum that drops its axes, the op is not fused.
    """
    if not required:
        return True, "any context"
    add = writer(node, graph)
    mean = writer(add, graph) if add is not None and add.op == "Add" else None
    found = readers(node, graph)
    divides = found and all(r.op == "Div" and len(r.inputs) == 2 and r.inputs[1].name == node.outputs[0].name and
                            not r.inputs[0].constant for r in found)
    if mean is not None and mean.op == "ReduceMean" and divides:
        return True, "inside a layer normalization"
    reduction = mean if mean is not None else add
    if (divides and reduction is not None and reduction.op in ("ReduceSum", "ReduceMean")
            and reduction.attrs.get("keepdims", 1) and is_square(writer(reduction, graph))):
        return True, "inside an L2 normalization"
    return False, f"{node.op} '{node.name}' is not the Sqrt of a decomposed layer normalization"


@constraint
def in_softmax_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a softmax written out (an Exp read by a ReduceSum and by a Div by that sum), which the compiler
    fuses into one softmax layer; alone the op runs on the CPU."""
    if not required:
        return True, "any context"
    found = readers(node, graph)
    sums = [r for r in found if r.op == "ReduceSum"]
    sum_outputs = {t.name for r in sums for t in r.outputs}
    divides = [r for r in found if r.op == "Div" and len(r.inputs) == 2 and r.inputs[1].name in sum_outputs]
    if sums and divides and all(r.op in ("ReduceSum", "Div") for r in found):
        return True, "inside a softmax"
    return False, f"{node.op} '{node.name}' is not the Exp of a decomposed softmax"


@constraint
def in_gelu_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a GELU written out (x / sqrt(2) -> Erf -> Add 1 -> Mul), which the compiler fuses into one GELU
    layer; alone the op runs on the CPU."""
    if not required:
        return True, "any context"
    source = writer(node, graph)
    found = readers(node, graph)
    after = [graph.nodes[i] for r in found for t in r.outputs for i in graph.consumers().get(t.name, [])]
    if source is not None and source.op in ("Div", "Mul") and [r.op for r in found] == ["Add"] and \
            after and all(a.op == "Mul" for a in after):
        return True, "inside a GELU"
    return False, f"{node.op} '{node.name}' is not the Erf of a decomposed GELU"
