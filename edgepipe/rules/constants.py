"""Constraints on the constants a node reads: weights, stored shapes and fill values, NaN, empty buffers."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def weight_dtypes(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """Constant weights (the second input) have a dtype in {param}."""
    if len(node.inputs) < 2 or not node.inputs[1].constant:
        return True, "no constant weights"
    weight = node.inputs[1]
    return weight.dtype in allowed, f"{node.op} weights are {weight.dtype}, not one of {', '.join(allowed)}"


@constraint
def constant_weights(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Weights and parameter tensors (every input after the first) are constant."""
    if not required:
        return True, "dynamic weights allowed"
    bad = [t for t in node.inputs[1:] if not t.constant]
    return not bad, f"{node.op} input '{bad[0].name}' is not constant" if bad else "constant"


@constraint
def nonempty_constant_inputs(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """No constant input has zero elements (such as the empty new shape of a RESHAPE to a scalar): the compiler
    refuses the whole file otherwise."""
    if not required:
        return True, "not required"
    written, fed = graph.producers(), graph.input_names()
    empty = [t for t in node.inputs if t.static and t.elements == 0 and
             (t.constant or (t.name not in written and t.name not in fed))]  # an empty buffer reads as no data
    if empty:
        return False, f"{node.op} reads constant '{empty[0].name}' of shape {list(empty[0].shape or ())}, no elements"
    return True, "no empty constant"


@constraint
def constants_not_nan(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op reads no float constant holding a NaN: the quantizer computes its range as NaN and the build fails.

    Fix: replace the NaN by a finite value the model can tell from data (e.g. 0 with the mask kept).
    """
    bad = node.attrs.get("nan_constants") or []
    if required and bad:
        return False, f"{node.op} reads constant '{bad[0]}' holding NaN (replace it by a finite value)"
    return True, "no NaN constant"


@constraint
def value_attribute_written(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The node writes its ``value`` attribute instead of leaving it to the ONNX default: the compiler's loader
    rejects the whole model otherwise.

    Fix: write ``value`` (a one-element float 0) into the node.
    """
    if not required or "value" in node.attrs:
        return True, "value written"
    return False, f"{node.op} leaves its value attribute to the default (write value = 0 into the node)"


#: Ops whose output shape is the value of one of their inputs (a target shape), and that input's position.
_SHAPED_BY_INPUT = {"Expand": 1, "ConstantOfShape": 0}


def _run_time_shape_writer(node: OpNode, graph: OpGraph) -> OpNode | None:
    """The op computing at run time the target shape of an Expand or ConstantOfShape; None when it is stored."""
    position = _SHAPED_BY_INPUT.get(node.op)
    if position is None or len(node.inputs) <= position:
        return None
    writer = graph.producers().get(node.inputs[position].name)
    return None if writer is None or graph.nodes[writer].op == "Constant" else graph.nodes[writer]


@constraint
def shape_input_stored(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The target shape is stored in the model (an initializer or a Constant node), not computed at run time."""
    writer = _run_time_shape_writer(node, graph) if required else None
    if writer is None:
        return True, "shape stored"
    shape = node.inputs[_SHAPED_BY_INPUT[node.op]]
    return False, f"{node.op} shape '{shape.name}' computed at run time by {writer.op}"


@constraint
def reads_no_run_time_shape(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Reads no output of an Expand or ConstantOfShape whose target shape is computed at run time (its shape is
    not static either)."""
    if not required:
        return True, "not required"
    producers = graph.producers()
    for tensor in node.inputs:
        writer = graph.nodes[producers[tensor.name]] if tensor.name in producers else None
        if writer is not None and _run_time_shape_writer(writer, graph) is not None:
            return False, f"{node.op} reads '{tensor.name}', which {writer.op} shapes at run time"
    return True, "no run-time shaped input"
