"""The build's QDQ int8 model re-expressed with uint8 activations: the same integer arithmetic, fused on x86.

ONNX Runtime fuses a QDQ group (DequantizeLinear → op → QuantizeLinear) into its int8
kernel (QLinearConv, QLinearMul, …) on x86 only when the activations are uint8: with int8
activations the session option ``session.qdqisint8allowed`` is off there, so every group
stays dequantize → float op → quantize and int8 is slower than float. The x86 kernels
multiply uint8 activations by int8 weights (U8S8).

An int8 activation tensor with scale ``s`` and zero point ``z`` holds the same real
values as a uint8 tensor with scale ``s`` and zero point ``z + 128`` (``q + 128`` for
every element, no rounding anywhere): shifting every activation zero point, and every
constant quantized like an activation, gives a model with exactly the QDQ model's
quantization — the ladder's recipe, calibration ranges, layers kept in float or int16 —
that ONNX Runtime on x86 turns into fused U8S8 kernels. Weights (the second input of
Conv, ConvTranspose, MatMul and Gemm) stay int8, int16 activations stay int16.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

#: Ops whose input 1 is a weight: ONNX Runtime's fused x86 kernels take it as int8.
_WEIGHT_INPUT_OPS = frozenset({"Conv", "ConvTranspose", "MatMul", "Gemm"})
_SHIFT = 128


def _weight_tensors(graph: object) -> set[str]:
    """Names of the DequantizeLinear outputs that feed a weight input (Conv/MatMul/Gemm input 1)."""
    weights = set()
    for node in graph.node:  # type: ignore[attr-defined]
        if node.op_type in _WEIGHT_INPUT_OPS and len(node.input) > 1:
            weights.add(node.input[1])
    return weights


def _int8_tensors_to_shift(graph: object) -> set[str]:
    """Int8 initializers that belong to activations: the zero points of every QuantizeLinear and
    DequantizeLinear and the quantized constants of DequantizeLinear nodes, except those of weights."""
    weights = _weight_tensors(graph)
    shift: set[str] = set()
    keep: set[str] = set()
    for node in graph.node:  # type: ignore[attr-defined]
        if node.op_type not in ("QuantizeLinear", "DequantizeLinear"):
            continue
        names = [node.input[0]] if node.op_type == "DequantizeLinear" else []
        names += [node.input[2]] if len(node.input) > 2 and node.input[2] else []
        target = keep if node.op_type == "DequantizeLinear" and node.output[0] in weights else shift
        target.update(names)
    return shift - keep


def _consistent(graph: object, shifted: set[str]) -> bool:
    """True when, after shifting the int8 initializers ``shifted``, every DequantizeLinear still reads integers of
    its zero point's type: a constant shifted with its zero point, or what a QuantizeLinear whose zero point was
    shifted alike wrote; and no graph output changes type."""
    producer = {o: n for n in graph.node for o in n.output}  # type: ignore[attr-defined]
    initializers = {t.name for t in graph.initializer}  # type: ignore[attr-defined]

    def zero_point_shifted(node: object) -> bool:
        inputs = node.input  # type: ignore[attr-defined]
        return len(inputs) > 2 and inputs[2] in shifted

    outputs = {o.name for o in graph.output}  # type: ignore[attr-defined]
    for node in graph.node:  # type: ignore[attr-defined]
        if node.op_type == "QuantizeLinear" and node.output[0] in outputs and zero_point_shifted(node):
            return False  # an int8 graph output would change type
        if node.op_type != "DequantizeLinear":
            continue
        if node.input[0] in initializers:  # a quantized constant: its integers and zero point change together
            if (node.input[0] in shifted) != zero_point_shifted(node):
                return False
            continue
        source = producer.get(node.input[0])
        if source is None or source.op_type != "QuantizeLinear":
            if zero_point_shifted(node):
                return False
        elif zero_point_shifted(node) != zero_point_shifted(source):
            return False
    return True


def uint8_activations(qdq: Path, out: Path) -> Path | None:
    """``qdq`` with every int8 activation (and activation-like constant) shifted to uint8, written to ``out``.

    None when nothing was int8 (the model has no int8 activations to shift) or when a zero
    point is shared between a weight and an activation (shifting it would change the weight).
    """
    import onnx  # heavy optional dependency
    from onnx import numpy_helper

    model = onnx.load(str(qdq))
    graph = model.graph
    int8 = {t.name for t in graph.initializer if t.data_type == onnx.TensorProto.INT8}
    names = _int8_tensors_to_shift(graph) & int8
    weights = _weight_tensors(graph)
    weight_inputs = {i for n in graph.node if n.op_type == "DequantizeLinear" and n.output[0] in weights
                     for i in n.input}
    if names & weight_inputs:
        log.info("%s: a zero point is shared by a weight and an activation; no uint8 form", qdq.name)
        return None
    if not _consistent(graph, names):
        log.info("%s: a DequantizeLinear reads integers no QuantizeLinear of the same type wrote; no uint8 form",
                 qdq.name)
        return None
    shifted = 0
    for index, tensor in enumerate(graph.initializer):
        if tensor.name not in names or tensor.data_type != onnx.TensorProto.INT8:
            continue
        value = numpy_helper.to_array(tensor).astype(np.int16) + _SHIFT
        graph.initializer[index].CopyFrom(numpy_helper.from_array(value.astype(np.uint8), tensor.name))
        shifted += 1
    folded = fold_constant_divisions(graph)
    if not shifted:
        return None
    kept = [v for v in graph.value_info if v.type.tensor_type.elem_type != onnx.TensorProto.INT8]
    del graph.value_info[:]
    graph.value_info.extend(kept)  # shape inference re-derives the shifted tensors' types
    onnx.save(model, str(out))
    log.debug("%s: %d int8 activation tensors shifted to uint8, %d constant divisions folded -> %s",
              qdq.name, shifted, folded, out.name)
    return out


def _scalar(initializers: dict[str, object], name: str) -> float | None:
    """The value of a one-element float initializer ``name``, else None."""
    from onnx import numpy_helper  # heavy optional dependency

    tensor = initializers.get(name)
    if tensor is None:
        return None
    value = numpy_helper.to_array(tensor)  # type: ignore[arg-type]
    return float(value.ravel()[0]) if value.size == 1 and np.issubdtype(value.dtype, np.floating) else None


def _same_quantization(initializers: dict[str, object], dq: object, q: object, divisor: float) -> bool:
    """True when ``q`` re-quantizes ``dq``'s values divided by ``divisor`` onto the very same integers:
    scale_q = scale_dq / divisor (to float rounding) and equal zero points."""
    from onnx import numpy_helper  # heavy optional dependency

    s_dq, s_q = _scalar(initializers, dq.input[1]), _scalar(initializers, q.input[1])  # type: ignore[attr-defined]
    if s_dq is None or s_q is None or len(dq.input) < 3 or len(q.input) < 3:  # type: ignore[attr-defined]
        return False
    z_dq, z_q = (initializers.get(n.input[2]) for n in (dq, q))  # type: ignore[attr-defined]
    if z_dq is None or z_q is None:
        return False
    same_zero = np.array_equal(numpy_helper.to_array(z_dq), numpy_helper.to_array(z_q))  # type: ignore[arg-type]
    return same_zero and abs(s_dq / divisor - s_q) <= 1e-5 * abs(s_q)


def fold_constant_divisions(graph: object) -> int:
    """Remove ``DequantizeLinear → Div(positive constant) → QuantizeLinear`` where the QuantizeLinear's scale is
    the DequantizeLinear's divided by the constant (what min/max calibration gives): the integers going in
    are the integers coming out, so the three nodes are a relabelling and the consumers read the integers
    directly. ONNX Runtime has no quantized Div; each one (HardSwish exported as ``x·clip(x+3,0,6)/6``
    has one) otherwise costs a float round trip over the whole tensor. Returns how many were folded."""
    initializers = {t.name: t for t in graph.initializer}  # type: ignore[attr-defined]
    producer = {o: n for n in graph.node for o in n.output}  # type: ignore[attr-defined]
    consumers: dict[str, list[object]] = {}
    for node in graph.node:  # type: ignore[attr-defined]
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    outputs = {o.name for o in graph.output}  # type: ignore[attr-defined]
    renames: dict[str, str] = {}
    dropped: set[int] = set()
    folded = 0
    for node in graph.node:  # type: ignore[attr-defined]
        divisor = _scalar(initializers, node.input[1]) if node.op_type == "Div" and len(node.input) == 2 else None
        dq = producer.get(node.input[0]) if divisor is not None and divisor > 0 else None
        quants = consumers.get(node.output[0], [])
        if divisor is None or dq is None or dq.op_type != "DequantizeLinear" or not quants \
                or node.output[0] in outputs:
            continue
        if not all(q.op_type == "QuantizeLinear" and q.output[0] not in outputs  # type: ignore[attr-defined]
                   and _same_quantization(initializers, dq, q, divisor) for q in quants):
            continue
        for q in quants:
            renames[q.output[0]] = dq.input[0]  # type: ignore[attr-defined]
            dropped.add(id(q))
        dropped.add(id(node))
        folded += 1
        if len(consumers.get(dq.output[0], [])) == 1:
            dropped.add(id(dq))
    kept = [n for n in graph.node if id(n) not in dropped]  # type: ignore[attr-defined]
    for node in kept:
        for index, name in enumerate(node.input):
            node.input[index] = renames.get(name, name)
    del graph.node[:]  # type: ignore[attr-defined]
    graph.node.extend(kept)  # type: ignore[attr-defined]
    return folded
