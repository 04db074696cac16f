"""ONNX Runtime's fused contrib ops (com.microsoft FusedConv, FusedGemm, FusedMatMul) expanded into standard ops.

A model saved after ONNX Runtime's extended graph optimizations (``SessionOptions.optimized_model_filepath``) holds
FusedConv and FusedGemm nodes (a Conv or Gemm with its activation, and for FusedConv an added tensor, in one node
of the com.microsoft domain) and FusedMatMul nodes (a MatMul with the Transposes and scaling before it).
Third-party models ship that way (a NeMo voice-activity detector is one). onnx2tf 1.28.8 cannot run ONNX Runtime's
shape inference on such a graph ("No Op registered for FusedConv"), skips its shape estimation, and then places axes
wrongly further on: that detector failed at its last Split; it has no FusedMatMul converter at all. ONNX Runtime's own
quantizer fails on these graphs too. The expansion is exact: ``act(Conv(X, W, B) + Z)``, ``act(Gemm(A, B, C))``
and ``alpha * op(A) @ op(B)`` are what ONNX Runtime computes for these nodes. Nodes whose activation has no standard
ONNX op of the same meaning, and FusedMatMuls that transpose batch axes or whose operand ranks shape inference
cannot tell, stay as they are (onnx2tf then reports them).
"""

from __future__ import annotations

from typing import Any

CONTRIB_DOMAIN = "com.microsoft"


def _activation(node: Any, kind: str, params: list[float], output: str, source: str,
                opset: int) -> list[Any] | None:
    """The standard ONNX node(s) of ``opset`` computing activation ``kind`` with ONNX Runtime's ``params`` from
    ``source`` into ``output``, or None for an activation without one."""
    from onnx import helper

    name = f"{node.name or output}_{kind.lower()}"
    if kind in ("Relu", "Tanh", "Sigmoid"):
        return [helper.make_node(kind, [source], [output], name=name)]
    if kind == "LeakyRelu":
        return [helper.make_node(kind, [source], [output], name=name, alpha=params[0] if params else 0.01)]
    if kind == "HardSigmoid":
        alpha, beta = (params + [0.2, 0.5][len(params):])[:2]
        return [helper.make_node(kind, [source], [output], name=name, alpha=alpha, beta=beta)]
    if kind == "Clip" and len(params) == 2 and opset < 11:  # bounds were attributes before opset 11
        return [helper.make_node(kind, [source], [output], name=name, min=params[0], max=params[1])]
    if kind == "Clip" and len(params) == 2:
        low, high = f"{name}_min", f"{name}_max"
        return [helper.make_node("Constant", [], [low], name=f"{low}_const", value_float=params[0]),
                helper.make_node("Constant", [], [high], name=f"{high}_const", value_float=params[1]),
                helper.make_node("Clip", [source, low, high], [output], name=name)]
    return None


def _expanded(node: Any, opset: int) -> list[Any] | None:
    """The standard ONNX nodes (of ``opset``) for one FusedConv or FusedGemm node, or None when it must stay."""
    from onnx import helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    kind = attributes.pop("activation", b"")
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    if node.op_type == "FusedConv":
        params = [float(p) for p in attributes.pop("activation_params", [])]
        op, inputs, extra = "Conv", [name for name in node.input[:3]], node.input[3] if len(node.input) > 3 else ""
    else:
        params = [float(attributes.pop(k)) for k in ("activation_alpha", "activation_beta") if k in attributes]
        attributes.pop("activation_gamma", None)
        op, inputs, extra = "Gemm", list(node.input[:3]), ""
    while inputs and not inputs[-1]:
        inputs.pop()
    base = node.name or node.output[0]
    raw = f"{node.output[0]}_{op.lower()}"
    nodes = [helper.make_node(op, inputs, [raw], name=base, **attributes)]
    if extra:
        summed = f"{node.output[0]}_sum"
        nodes.append(helper.make_node("Add", [raw, extra], [summed], name=f"{base}_add"))
        raw = summed
    if not kind:
        nodes.append(helper.make_node("Identity", [raw], [node.output[0]], name=f"{base}_identity"))
        return nodes
    activation = _activation(node, kind, params, node.output[0], raw, opset)
    return None if activation is None else nodes + activation


def _matmul_expanded(node: Any, ranks: dict[str, int]) -> list[Any] | None:
    """The Transposes, MatMul and scaling Mul of one FusedMatMul node (``alpha * op(A) @ op(B)``, op transposing the
    last two axes), or None when it batches its transposes or an operand's rank is not known."""
    import numpy as np
    from onnx import helper, numpy_helper

    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if attributes.get("transBatchA", 0) or attributes.get("transBatchB", 0):
        return None
    base, operands, nodes = node.name or node.output[0], [], []
    for index, flag in enumerate(("transA", "transB")):
        name = node.input[index]
        if not attributes.get(flag, 0):
            operands.append(name)
            continue
        rank = ranks.get(name, 0)
        if rank < 2:
            return None
        perm = [*range(rank - 2), rank - 1, rank - 2]
        operands.append(f"{name}_{base}_t")
        nodes.append(helper.make_node("Transpose", [name], [operands[-1]], name=f"{base}_{flag}", perm=perm))
    alpha = float(attributes.get("alpha", 1.0))
    product = node.output[0] if alpha == 1.0 else f"{node.output[0]}_unscaled"
    nodes.append(helper.make_node("MatMul", operands, [product], name=base))
    if alpha != 1.0:
        scale = numpy_helper.from_array(np.array(alpha, np.float32), f"{base}_alpha")
        nodes.append(helper.make_node("Constant", [], [scale.name], name=f"{base}_alpha_const", value=scale))
        nodes.append(helper.make_node("Mul", [product, scale.name], [node.output[0]], name=f"{base}_scale"))
    return nodes


def _ranks(model: Any) -> dict[str, int]:
    """The rank of every tensor ONNX shape inference can tell."""
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    values = (*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output)
    ranks = {v.name: len(v.type.tensor_type.shape.dim) for v in values if v.type.tensor_type.HasField("shape")}
    ranks.update({t.name: len(t.dims) for t in model.graph.initializer})
    return ranks


def _replace(model: Any, expand: Any) -> int:
    """Replace each node ``expand`` gives nodes for by those nodes; how many were replaced."""
    nodes, expanded = [], 0
    for node in model.graph.node:
        replacement = expand(node) if node.domain == CONTRIB_DOMAIN else None
        if replacement is None:
            nodes.append(node)
            continue
        nodes.extend(replacement)
        expanded += 1
    if expanded:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return expanded


def expand_fused_contrib_ops(model: Any) -> int:
    """Rewrite ``model``'s (an ``onnx.ModelProto``, changed in place) com.microsoft FusedConv, FusedGemm and
    FusedMatMul nodes as the standard ops they compute; returns how many nodes were expanded."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    expanded = _replace(model, lambda n: _expanded(n, opset) if n.op_type in ("FusedConv", "FusedGemm") else None)
    if any(n.domain == CONTRIB_DOMAIN and n.op_type == "FusedMatMul" for n in model.graph.node):
        ranks = _ranks(model)  # after the expansion above: a FusedConv's output has no shape before it
        expanded += _replace(model, lambda n: _matmul_expanded(n, ranks) if n.op_type == "FusedMatMul" else None)
    return expanded
