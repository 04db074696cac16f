"""Mixed precision by subtraction: nodes of a finished QDQ model made float, everything else left as it was.

Excluding nodes from ONNX Runtime's quantizer (``nodes_to_exclude``) quantizes a different graph:
the neighbours' QuantizeLinear/DequantizeLinear pairs move, removable activations stay or go, and
on real models (a VAD, text detectors) keeping *more* layers in float often scored *lower*. Here the
fully quantized model is made once, with its activations explicit
(``QDQKeepRemovableActivations``, so every Relu/Clip is still a node and a QuantizeLinear is
never the only thing that clamps), and each kept node then reads the float tensors its
DequantizeLinear inputs came from: its weights and bias are the prepared float model's, its
activation inputs are what their QuantizeLinear was given. Its outputs stay quantized for
quantized readers and become float for the graph outputs. The int8 part of the graph is
identical for every choice of kept nodes, so a kept node can only remove rounding.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_QDQ = ("QuantizeLinear", "DequantizeLinear")


def quantized_nodes(qdq: Any) -> list[str]:
    """Names of the nodes of ``qdq`` that read a DequantizeLinear output (the nodes that compute in int8)."""
    producer = {out: node for node in qdq.graph.node for out in node.output}
    return [node.name for node in qdq.graph.node if node.op_type not in _QDQ and node.name
            and any(producer.get(name) is not None and producer[name].op_type == "DequantizeLinear"
                    for name in node.input)]


def _float_source(name: str, producer: dict[str, Any]) -> str | None:
    """The float tensor a chain ``Q -> DQ (-> Q -> DQ ...)`` ending in ``name`` started from; None for constants."""
    current = name
    while (dq := producer.get(current)) is not None and dq.op_type == "DequantizeLinear":
        q = producer.get(dq.input[0])
        if q is None or q.op_type != "QuantizeLinear":
            return None if current == name else current
        current = q.input[0]
    return current if current != name else None


class _Copier:
    """Adds float initializers of the prepared model to the QDQ model, under names nothing else uses."""

    def __init__(self, qdq: Any, prepared: Any):
        self.model = qdq
        self.floats = {init.name: init for init in prepared.graph.initializer}
        self.taken = {init.name for init in qdq.graph.initializer} | {v.name for v in qdq.graph.input}
        self.taken |= {name for node in qdq.graph.node for name in (*node.input, *node.output)}
        self.copied: dict[str, str] = {}

    def copy(self, name: str) -> str:
        if name not in self.copied:
            fresh, k = f"{name}_float", 0
            while fresh in self.taken:
                k += 1
                fresh = f"{name}_float{k}"
            init = self.model.graph.initializer.add()
            init.CopyFrom(self.floats[name])
            init.name = fresh
            self.taken.add(fresh)
            self.copied[name] = fresh
        return self.copied[name]


def _float_inputs(node: Any, original: Any, producer: dict[str, Any], copier: _Copier) -> None:
    """Point each DequantizeLinear input of ``node`` at the float tensor or initializer it stands for."""
    for index, name in enumerate(node.input):
        dq = producer.get(name)
        if dq is None or dq.op_type != "DequantizeLinear" or index >= len(original.input):
            continue
        float_name = original.input[index]
        if float_name in copier.floats:
            node.input[index] = copier.copy(float_name)
        elif (source := _float_source(name, producer)) is not None:
            node.input[index] = source


def _float_graph_outputs(qdq: Any, kept_outputs: set[str], producer: dict[str, Any]) -> None:
    """Graph outputs that are ``DQ(Q(t))`` of a kept node's output ``t`` become ``Identity(t)``."""
    from onnx import helper

    readers: dict[str, int] = {}
    for node in qdq.graph.node:
        for name in node.input:
            readers[name] = readers.get(name, 0) + 1
    for output in qdq.graph.output:
        source = _float_source(output.name, producer)
        if source is None or source not in kept_outputs:
            continue
        dq = producer[output.name]
        if readers.get(output.name, 0):  # other nodes still read the rounded value under a new name
            renamed = f"{output.name}_int8"
            dq.output[0] = renamed
            for node in qdq.graph.node:
                node.input[:] = [renamed if name == output.name else name for name in node.input]
        else:
            qdq.graph.node.remove(dq)
        qdq.graph.node.append(helper.make_node("Identity", [source], [output.name], name=f"{output.name}_float"))


def _drop_unread(qdq: Any) -> None:
    """Remove nodes whose outputs nothing reads (in the end: nodes no graph output depends on), then initializers
    nothing reads. One backward pass over the topologically ordered nodes, and one rebuild of each list."""
    read = {v.name for v in qdq.graph.output}
    live = []
    for node in reversed(qdq.graph.node):
        if any(out in read for out in node.output):
            live.append(node)
            read.update(node.input)
    if len(live) < len(qdq.graph.node):
        kept = [_copy(node) for node in reversed(live)]
        del qdq.graph.node[:]
        qdq.graph.node.extend(kept)
    initializers = [_copy(init) for init in qdq.graph.initializer if init.name in read]
    if len(initializers) < len(qdq.graph.initializer):
        del qdq.graph.initializer[:]
        qdq.graph.initializer.extend(initializers)


def _copy(message: Any) -> Any:
    copied = type(message)()
    copied.CopyFrom(message)
    return copied


def keep_nodes_float(qdq: Any, prepared: Any, nodes: Iterable[str]) -> tuple[Any, list[str]]:
    """A copy of the QDQ model ``qdq`` in which ``nodes`` compute in float; and the names that were made float.

    ``prepared`` is the float model ``qdq`` was quantized from (same node names). Names that are no
    quantized node of ``qdq`` (never quantized, or unknown) are left out of the returned list.
    """
    import onnx

    model = onnx.ModelProto()
    model.CopyFrom(qdq)
    wanted = set(nodes)
    originals = {node.name: node for node in prepared.graph.node if node.name}
    producer = {out: node for node in model.graph.node for out in node.output}
    copier = _Copier(model, prepared)
    made: list[str] = []
    kept_outputs: set[str] = set()
    for node in list(model.graph.node):
        if node.name not in wanted or node.op_type in _QDQ or node.name not in originals:
            continue
        before = list(node.input)
        _float_inputs(node, originals[node.name], producer, copier)
        if list(node.input) != before:
            made.append(node.name)
        kept_outputs.update(node.output)
    _float_graph_outputs(model, kept_outputs, producer)
    _drop_unread(model)
    return model, made
