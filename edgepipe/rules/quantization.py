"""Constraints on quantized tensors: quantization parameters, per-tensor scales, int32 data and float-only ops."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def quantized_tensors(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Inputs, outputs and weights carry quantization parameters with positive scales."""
    if not required:
        return True, "float allowed"
    tensors = [t for t in (*node.inputs, *node.outputs) if not (t.constant and t.dtype in ("int32", "int64"))]
    missing = [t for t in tensors if t.dtype not in ("int32", "int64", "bool") and not t.quantized]
    if missing:
        return False, f"{node.op} tensor '{missing[0].name}' ({missing[0].dtype}) has no quantization parameters"
    negative = [t for t in tensors if not t.scale_positive]
    return not negative, f"{node.op} tensor '{negative[0].name}' has a scale <= 0" if negative else "quantized"


@constraint
def per_tensor_quantization(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Quantization is per tensor: no tensor has per-axis scales."""
    if not required:
        return True, "per-axis allowed"
    bad = [t for t in (*node.inputs, *node.outputs) if t.per_axis]
    return not bad, f"{node.op} tensor '{bad[0].name}' is quantized per axis" if bad else "per tensor"


@constraint
def int32_dequantize_only_as_bias(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """A DequantizeLinear of int32 data runs on the accelerator only as the bias (third input) of {param}."""
    if not node.inputs or node.inputs[0].dtype != "int32":
        return True, "not int32"
    out = node.outputs[0].name if node.outputs else ""
    for index in graph.consumers().get(out, []):
        user = graph.nodes[index]
        if user.op not in ops or len(user.inputs) < 3 or user.inputs[2].name != out:
            return False, f"{node.op} of int32 '{node.inputs[0].name}' feeds {user.op} '{user.name}', not a bias"
    return True, "int32 bias"


@constraint
def no_int32_dequantized_params(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Parameter inputs (every input after the first) are not dequantized from int32 data."""
    if not required:
        return True, "any parameters"
    producers = graph.producers()
    for tensor in node.inputs[1:]:
        source = producers.get(tensor.name)
        if source is None:
            continue
        writer = graph.nodes[source]
        if writer.op == "DequantizeLinear" and writer.inputs and writer.inputs[0].dtype == "int32":
            return False, f"{node.op} parameter '{tensor.name}' is dequantized from int32"
    return True, "parameters ok"


@constraint
def not_quantized(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op runs in float: none of its feature-map inputs is written by a DequantizeLinear.

    A quantized op runs on the CPU with the DequantizeLinear before it and the QuantizeLinear after it (its QDQ
    node unit).
    """
    if not required:
        return True, "quantized allowed"
    producers = graph.producers()
    for tensor in node.activations_in:
        if tensor.name in producers and graph.nodes[producers[tensor.name]].op == "DequantizeLinear":
            writer = graph.nodes[producers[tensor.name]]
            return False, f"{node.op} '{node.name}' is quantized (reads DequantizeLinear '{writer.name}')"
    return True, "float"
