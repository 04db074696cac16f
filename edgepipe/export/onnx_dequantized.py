"""A float reference for an ONNX model shipped in static QDQ form: the same graph with every Q/DQ removed.

Each ``DequantizeLinear`` of an integer initializer becomes a float initializer
(``(q - zero_point) * scale``, per axis when the scale is a vector); each
``QuantizeLinear → DequantizeLinear`` pair on an activation is bypassed. What the
comparison with this reference measures is therefore the activation quantization
(and the integer arithmetic) of the shipped model — not the weight rounding, whose
float originals are not in the file.

A pair whose zero point is its type's lowest value (uint8 at 0, int8 at -128, or no zero point: uint8 0)
cannot represent a negative value: it is the ReLU the exporter folded into the quantization (a ResNet
exported with every Conv + ReLU as Conv -> Q(uint8, 0)), so it becomes a ``Relu``, not a bypass; otherwise
the reference would compute a different network (unbounded activations, overflow to NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from edgepipe.graph.onnx_edit import drop_unread_initializers


def _dequantized(q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, axis: int) -> np.ndarray:
    """``(q - zero) * scale`` in float32; a vector scale/zero point runs along ``axis``."""
    shape = [1] * q.ndim
    if scale.size > 1:
        shape[axis % q.ndim] = -1
    per_axis = scale.reshape(shape) if scale.size > 1 else scale.reshape(())
    offset = 0.0 if zero is None else zero.astype(np.float32).reshape(shape if zero.size > 1 else ())
    return ((q.astype(np.float32) - offset) * per_axis).astype(np.float32)


#: The lowest value of each integer type a QuantizeLinear writes (ONNX TensorProto element types).
_LOWEST = {2: 0, 3: -128, 4: 0, 5: -32768}  # uint8, int8, uint16, int16


def _clamps_at_zero(quantize: Any, initializers: dict[str, Any]) -> bool:
    """Whether the QuantizeLinear ``quantize`` maps every negative value to its lowest integer: its zero point is
    that integer (a scalar, or every entry), or it has none (uint8, zero point 0)."""
    from onnx import numpy_helper

    if len(quantize.input) < 3 or not quantize.input[2]:
        return True
    zero = initializers.get(quantize.input[2])
    if zero is None or zero.data_type not in _LOWEST:
        return False
    return bool(np.all(numpy_helper.to_array(zero) == _LOWEST[zero.data_type]))


def strip_qdq(model: Any) -> tuple[Any, int, int, int]:
    """A float copy of the QDQ ``model``; returns it, the weights dequantized, the activation pairs removed and
    how many of those became the ReLU their zero point applies."""
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    initializers = {init.name: init for init in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    rename: dict[str, str] = {}
    drop, weights, pairs = set(), 0, 0
    relu_at: dict[int, Any] = {}  # a DequantizeLinear's place in the graph -> the Relu written there
    for node in graph.node:
        if node.op_type != "DequantizeLinear":
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        source = node.input[0]
        if source in initializers:
            scale = numpy_helper.to_array(initializers[node.input[1]])
            zero_name = node.input[2] if len(node.input) > 2 else ""
            zero = numpy_helper.to_array(initializers[zero_name]) if zero_name in initializers else None
            value = _dequantized(numpy_helper.to_array(initializers[source]), scale, zero, axis)
            graph.initializer.append(numpy_helper.from_array(value, node.output[0]))
            drop.add(id(node))
            weights += 1
        elif source in producers and producers[source].op_type == "QuantizeLinear":
            quantize = producers[source]
            if _clamps_at_zero(quantize, initializers):
                relu_at[id(node)] = onnx.helper.make_node("Relu", [quantize.input[0]], [node.output[0]],
                                                          name=f"{node.name or node.output[0]}/relu")
            else:
                rename[node.output[0]] = quantize.input[0]
            drop.update({id(node), id(quantize)})
            pairs += 1
    kept = [relu_at.get(id(n), n) for n in graph.node if id(n) not in drop or id(n) in relu_at]
    for node in kept:
        for i, name in enumerate(node.input):
            while name in rename:
                name = rename[name]
            node.input[i] = name
    for output in graph.output:  # a graph output behind a Q/DQ pair keeps its name through an Identity
        if output.name in rename:
            kept.append(onnx.helper.make_node("Identity", [rename[output.name]], [output.name]))
    del graph.node[:]
    graph.node.extend(kept)
    drop_unread_initializers(out)
    return out, weights, pairs, len(relu_at)
