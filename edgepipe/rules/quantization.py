"""Constraints on quantized tensors: quantization parameters, per-tensor scales, int32 data and float-only ops."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.neighbours import dequantized_from, writer


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
def not_quantized_from(node: OpNode, graph: OpGraph, dtypes: list[str]) -> Verdict:
    """No feature-map input is dequantized from {param}: such a quantized op runs on the CPU with the
    DequantizeLinear before it and the QuantizeLinear after it (its QDQ node unit)."""
    activations = {t.name for t in node.activations_in}
    for position, tensor in enumerate(node.inputs):
        dtype = dequantized_from(node, graph, position) if tensor.name in activations else None
        source = writer(node, graph, position)
        if dtype in dtypes and source is not None:
            return False, f"{node.op} '{node.name}' is quantized from {dtype} (reads DequantizeLinear '{source.name}')"
    return True, "float or other integers"


@constraint
def no_int32_dequantized_params_beside(node: OpNode, graph: OpGraph, dtypes: list[str]) -> Verdict:
    """Parameter inputs (every input after the first) are not dequantized from int32 data while the feature map
    is dequantized from {param}."""
    if dequantized_from(node, graph) not in dtypes:
        return True, "feature map not dequantized from " + "/".join(dtypes)
    return no_int32_dequantized_params(node, graph, True)
