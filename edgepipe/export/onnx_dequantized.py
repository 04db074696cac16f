"""A float reference for an ONNX model shipped in static QDQ form: the same graph with every Q/DQ removed.

Each ``DequantizeLinear`` of an integer initializer becomes a float initializer
(``(q - zero_point) * scale``, per axis when the scale is a vector); each
``QuantizeLinear → DequantizeLinear`` pair on an activation is bypassed. What the
comparison with this reference measures is therefore the activation quantization
(and the integer arithmetic) of the shipped model — not the weight rounding, whose
float originals are not in the file.
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


def strip_qdq(model: Any) -> tuple[Any, int, int]:
    """A float copy of the QDQ ``model``; returns it, the weights dequantized and the activation pairs removed."""
    import onnx
    from onnx import numpy_helper

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    initializers = {init.name: init for init in graph.initializer}
    producers = {o: n for n in graph.node for o in n.output}
    rename: dict[str, str] = {}
    drop, weights, pairs = set(), 0, 0
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
            rename[node.output[0]] = producers[source].input[0]
            drop.update({id(node), id(producers[source])})
            pairs += 1
    kept = [n for n in graph.node if id(n) not in drop]
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
    return out, weights, pairs
