"""A float model from an ONNX model shipped with dynamic int8 quantization (``quantize_dynamic``), to convert and
quantize again with the user's calibration data.

No converter to TFLite takes ``ConvInteger``, ``MatMulInteger`` or com.microsoft ``DynamicQuantizeLSTM``, and no
NPU runs them; their weights are int8 initializers with a float scale, so the float network they were made from is
recovered up to the weight rounding:

- ``ConvInteger`` / ``MatMulInteger`` of an int8 weight, read through onnxruntime's chain
  ``op -> [Add of the int32 bias] -> Cast -> Mul(x_scale * w_scale)``, becomes ``Conv`` / ``MatMul`` of the float
  input and the weight ``(w - w_zero_point) * w_scale`` (plus the float bias the int32 one was computed from);
- ``DynamicQuantizeLSTM`` becomes ``LSTM`` with its weights dequantized per direction and laid out as ONNX's
  ``[directions, 4 * hidden, input]``.

``DynamicQuantizeLinear`` nodes and the scale arithmetic then feed nothing and are removed; int8 tables read
through ``DequantizeLinear`` (an embedding: ``Gather(int8 table) -> DequantizeLinear``) are stored dequantized. A
chain of another shape leaves the model as it is (:func:`dequantize_dynamic` then says which op it could not read).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from edgepipe.graph.onnx_edit import attributes, drop_unread_initializers, initializer_values


@dataclass(frozen=True)
class Dequantized:
    """The float copy of a dynamically quantized model and what was rewritten (op type: count)."""

    model: Any
    rewritten: dict[str, int]


class NotDequantizable(Exception):
    """A dynamically quantized op whose weights or scale edgepipe cannot read (its chain has another shape)."""


def _per_axis(values: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scale or zero point shaped to broadcast along ``axis`` of a rank-``rank`` weight."""
    if values.size == 1:
        return values.reshape(())
    shape = [1] * rank
    shape[axis] = -1
    return values.reshape(shape)


class _Graph:
    """The model's nodes indexed by the tensors they produce and read, and its constant values."""

    def __init__(self, model: Any):
        self.model = model
        self.values = initializer_values(model)
        self.producer = {out: node for node in model.graph.node for out in node.output}
        self.readers: dict[str, list[Any]] = {}
        for node in model.graph.node:
            for name in node.input:
                self.readers.setdefault(name, []).append(node)

    def only_reader(self, name: str, op_type: str) -> Any:
        readers = self.readers.get(name, [])
        if len(readers) != 1 or readers[0].op_type != op_type:
            raise NotDequantizable(f"{name} is not read by exactly one {op_type}")
        return readers[0]

    def constant(self, name: str) -> np.ndarray:
        if name not in self.values:
            raise NotDequantizable(f"{name} is not a constant")
        return self.values[name]

    def add_constant(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.model.graph.initializer.append(numpy_helper.from_array(value, name))
        self.values[name] = value
        return name


def _weight_scale(graph: _Graph, scales: str, x_scale: str) -> np.ndarray:
    """The weight scale of the product ``Mul(x_scale, w_scale)`` named ``scales``."""
    node = graph.producer.get(scales)
    if node is None or node.op_type != "Mul" or x_scale not in node.input:
        raise NotDequantizable(f"{scales} is not x_scale * w_scale")
    return graph.constant(next(name for name in node.input if name != x_scale)).astype(np.float32)


def _float_bias(graph: _Graph, bias_int: str) -> np.ndarray:
    """The float bias onnxruntime's int32 bias was computed from: ``Cast(Floor(b / scales))`` (maybe reshaped)."""
    node = graph.producer.get(bias_int)
    while node is not None and node.op_type in ("Reshape", "Cast", "Floor", "Round"):
        node = graph.producer.get(node.input[0])
    if node is None or node.op_type != "Div":
        raise NotDequantizable(f"the bias {bias_int} is not computed from a float constant")
    return graph.constant(node.input[0]).astype(np.float32).ravel()


def _rewrite_integer_op(graph: _Graph, node: Any, index: int) -> tuple[list[Any], list[Any]]:
    """The float ``Conv`` / ``MatMul`` replacing ``node`` and the chain after it (whose last output it takes), and
    that chain."""
    from onnx import helper

    quantize = graph.producer.get(node.input[0])
    if quantize is None or quantize.op_type != "DynamicQuantizeLinear":
        raise NotDequantizable(f"{node.name or node.op_type}'s input is not dynamically quantized")
    weight = graph.constant(node.input[1]).astype(np.float32)
    zero = graph.constant(node.input[3]).astype(np.float32) if len(node.input) > 3 and node.input[3] else 0.0
    after = graph.readers.get(node.output[0], [])
    bias, chain = None, []
    if len(after) == 1 and after[0].op_type == "Add":
        bias = _float_bias(graph, next(name for name in after[0].input if name != node.output[0]))
        chain.append(after[0])
        after = graph.readers.get(after[0].output[0], [])
    if len(after) != 1 or after[0].op_type != "Cast":
        raise NotDequantizable(f"{node.name or node.op_type}'s output is not cast to float")
    scaled = graph.only_reader(after[0].output[0], "Mul")
    scales = next(name for name in scaled.input if name != after[0].output[0])
    chain += [after[0], scaled]
    w_scale = _weight_scale(graph, scales, quantize.output[1])
    conv = node.op_type == "ConvInteger"
    axis = 0 if conv else weight.ndim - 1  # onnxruntime quantizes per output channel: Conv's axis 0, MatMul's last
    dense = ((weight - _per_axis(np.asarray(zero), weight.ndim, axis)) *
             _per_axis(w_scale, weight.ndim, axis)).astype(np.float32)
    inputs = [quantize.input[0], graph.add_constant(f"{node.input[1]}_dequantized_{index}", dense)]
    if bias is not None and conv:
        inputs.append(graph.add_constant(f"{node.input[1]}_bias_{index}", bias))
    output = scaled.output[0]
    name = node.name or f"dequantized_{node.op_type}_{index}"
    if conv:
        return [helper.make_node("Conv", inputs, [output], name=name, **attributes(node))], chain
    if bias is None:
        return [helper.make_node("MatMul", inputs, [output], name=name)], chain
    product = f"{output}_before_bias"
    return [helper.make_node("MatMul", inputs, [product], name=name),
            helper.make_node("Add", [product, graph.add_constant(f"{node.input[1]}_bias_{index}", bias)],
                             [output])], chain


def _rewrite_lstm(graph: _Graph, node: Any, index: int) -> tuple[list[Any], list[Any]]:
    """The ``LSTM`` replacing a com.microsoft ``DynamicQuantizeLSTM`` (weights ``[dirs, in, 4h]``, scales per dir)."""
    from onnx import helper

    def dense(weight: str, scale: str, zero: str) -> str:
        values = graph.constant(weight).astype(np.float32)
        offset = _per_axis(graph.constant(zero).astype(np.float32), 3, 0)
        factor = _per_axis(graph.constant(scale).astype(np.float32), 3, 0)
        transposed = np.transpose((values - offset) * factor, (0, 2, 1)).astype(np.float32)
        return graph.add_constant(f"{weight}_dequantized_{index}", np.ascontiguousarray(transposed))

    names = list(node.input) + [""] * (12 - len(node.input))
    w = dense(names[1], names[8], names[9])
    r = dense(names[2], names[10], names[11])
    inputs = [names[0], w, r, *names[3:8]]
    while inputs and not inputs[-1]:
        inputs.pop()
    lstm = helper.make_node("LSTM", inputs, list(node.output), name=node.name or f"dequantized_lstm_{index}",
                            **{k: v for k, v in attributes(node).items() if k != "layout"})
    return [lstm], []


_REWRITES = {"ConvInteger": _rewrite_integer_op, "MatMulInteger": _rewrite_integer_op,
             "DynamicQuantizeLSTM": _rewrite_lstm}


def _drop_dead_nodes(model: Any) -> None:
    """Remove nodes none of whose outputs is read or is a graph output, until none is left; then unused
    initializers."""
    outputs = {o.name for o in model.graph.output}
    while True:
        read = {name for node in model.graph.node for name in node.input} | outputs
        kept = [n for n in model.graph.node if any(out in read for out in n.output if out)]
        if len(kept) == len(model.graph.node):
            break
        del model.graph.node[:]
        model.graph.node.extend(kept)
    drop_unread_initializers(model)


def dequantize_dynamic(model: Any) -> Dequantized:
    """A float copy of the dynamically quantized ``model``; raises :class:`NotDequantizable` naming the first op
    whose chain it cannot read (the model is then left as it is)."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = _Graph(out)
    replaced: dict[int, list[Any]] = {}
    removed: set[int] = set()
    counts: dict[str, int] = {}
    originals = list(out.graph.node)  # held, so each node keeps its identity while ids are compared
    for index, node in enumerate(originals):
        rewrite = _REWRITES.get(node.op_type)
        if rewrite is not None:
            replaced[id(node)], chain = rewrite(graph, node, index)
            removed.update(id(n) for n in chain)
            counts[node.op_type] = counts.get(node.op_type, 0) + 1
    nodes = [new for node in originals if id(node) not in removed for new in replaced.get(id(node), [node])]
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    _drop_dead_nodes(out)
    left = sorted({n.op_type for n in out.graph.node if n.op_type in ("DynamicQuantizeLinear", *_REWRITES)})
    if left:
        raise NotDequantizable(f"{', '.join(left)} still read after dequantizing")
    tables = _dequantized_tables(_Graph(out))
    if tables:
        counts["DequantizeLinear"] = tables
        _drop_dead_nodes(out)
    return Dequantized(out, counts)


#: Ops that only move values: an int8 table's values reach its DequantizeLinear through them unchanged.
_MOVES = ("Gather", "Transpose", "Reshape", "Squeeze", "Unsqueeze", "Slice", "Flatten", "Identity")


def _dequantized_tables(graph: _Graph) -> int:
    """Store the int8 tables read through value-moving ops and a per-tensor DequantizeLinear (onnxruntime's
    quantized embedding: ``Gather(table) -> DequantizeLinear``) dequantized, the DequantizeLinears as Identity;
    returns how many DequantizeLinears went."""
    done: dict[str, str] = {}
    count = 0
    for node in list(graph.model.graph.node):
        if node.op_type != "DequantizeLinear" or node.input[0] in graph.values or len(node.input) < 2:
            continue
        source = graph.producer.get(node.input[0])
        while source is not None and source.op_type in _MOVES and source.input[0] not in graph.values:
            source = graph.producer.get(source.input[0])
        if source is None or source.op_type not in _MOVES:
            continue
        scale = graph.constant(node.input[1]).astype(np.float32)
        zero = graph.constant(node.input[2]).astype(np.float32) if len(node.input) > 2 and node.input[2] else 0.0
        if scale.size != 1 or np.size(zero) != 1:
            continue
        table = source.input[0]
        if table in done.values():  # a second DequantizeLinear of a table already stored dequantized
            done[table] = table
        elif table not in done:
            dense = ((graph.constant(table).astype(np.float32) - np.float32(zero)) * scale).astype(np.float32)
            done[table] = graph.add_constant(f"{table}_dequantized", dense)
        source.input[0] = done[table]
        node.op_type = "Identity"
        del node.input[1:]
        count += 1
    return count
