"""Keep ops the model had that ONNX Runtime's pre-processing decomposes (HardSwish -> HardSigmoid + Mul).

``quant_pre_process`` saves the graph ONNX Runtime optimised for its CPU execution provider, which inlines the
body of ONNX function ops: every ``HardSwish`` becomes ``HardSigmoid(alpha=1/6, beta=0.5)`` followed by ``Mul``.
NPUs run HardSwish natively (QNN HTP, Ethos-U, RKNN) but not always the decomposed pair: the QNN HTP runs a
quantized HardSigmoid, with the QuantizeLinear after it and the DequantizeLinear before it, on the CPU. So the
pair is fused back into the HardSwish the original model had, before quantization. Only pairs whose input
is the input of a HardSwish of the original model are fused, so a model that wrote HardSigmoid * x itself keeps
it. ONNX Runtime's quantizer and its CPU provider both take HardSwish (opset >= 14).
"""

from __future__ import annotations

import logging
from pathlib import Path

import onnx
from onnx import helper

log = logging.getLogger(__name__)

_HARDSWISH_ALPHA = 1.0 / 6.0


def _is_hardswish_sigmoid(node: onnx.NodeProto) -> bool:
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    return (node.op_type == "HardSigmoid" and abs(attrs.get("alpha", 0.2) - _HARDSWISH_ALPHA) < 1e-6
            and abs(attrs.get("beta", 0.5) - 0.5) < 1e-6)


def fuse_hardswish(model: onnx.ModelProto, inputs: set[str]) -> int:
    """Replace each ``x -> HardSigmoid -> Mul(x, .)`` whose ``x`` is in ``inputs`` by ``HardSwish(x)``; returns
    how many were fused."""
    nodes = list(model.graph.node)
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in nodes:
        for name in node.input:
            users.setdefault(name, []).append(node)
    fused = 0
    for node in nodes:
        if not _is_hardswish_sigmoid(node) or node.input[0] not in inputs:
            continue
        x, gate = node.input[0], node.output[0]
        muls = [u for u in users.get(gate, []) if u.op_type == "Mul" and set(u.input) == {x, gate}]
        if len(muls) != 1 or len(users.get(gate, [])) != 1:
            continue
        mul = muls[0]
        position = list(model.graph.node).index(mul)
        model.graph.node.remove(node)
        model.graph.node.remove(mul)
        model.graph.node.insert(position - 1, helper.make_node("HardSwish", [x], list(mul.output),
                                                               name=mul.name or node.name))
        fused += 1
    return fused


def restore_native_ops(original: Path, prepared: Path) -> Path:
    """Fuse back, in the file ``prepared``, the HardSwish ops of ``original`` that pre-processing inlined."""
    source = onnx.load(str(original), load_external_data=False)
    inputs = {n.input[0] for n in source.graph.node if n.op_type == "HardSwish"}
    if not inputs:
        return prepared
    model = onnx.load(str(prepared))
    if max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0) < 14:
        return prepared
    fused = fuse_hardswish(model, inputs)
    if fused:
        onnx.save(model, str(prepared))
        log.info("kept %d HardSwish op(s) that ONNX Runtime's pre-processing had inlined", fused)
    return prepared
