"""The nodes around a node that the rules look at: the writer of an input, the readers of an output, and the op a
layout transpose stops at. No constraints here; the rule modules share these walks."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode

#: Ops the Rockchip compiler turns into Reshape layers (two in a row it merges into one).
RESHAPES = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Flatten"})

#: Element-wise and Q/DQ ops a layout transpose passes through.
_TRANSPARENT = {"QuantizeLinear", "DequantizeLinear", "Relu", "Clip", "Add", "Mul", "Sub", "Sigmoid", "Tanh",
                "LeakyRelu", "HardSwish", "HardSigmoid", "Sum"}

#: Ops ONNX Runtime's transpose optimizer also moves a layout transpose through (the output DequantizeLinear after
#: each, behind a Conv, runs on the accelerator; not after a LayerNormalization, MatMul, Transpose, Reshape or
#: CumSum): other element-wise ops and a mean (an instance norm written out, ReduceMean -> Pow -> Sqrt -> Div).
TRANSPOSABLE = frozenset({"Softmax", "Slice", "Concat", "Split", "Neg", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs",
                          "Reciprocal", "ReduceMean"})


def writer(node: OpNode, graph: OpGraph, position: int = 0) -> OpNode | None:
    """The node writing input ``position`` of ``node`` (None for a constant or graph input)."""
    producers = graph.producers()
    if len(node.inputs) <= position or node.inputs[position].name not in producers:
        return None
    return graph.nodes[producers[node.inputs[position].name]]


def dequantized_from(node: OpNode, graph: OpGraph, position: int = 0) -> str | None:
    """The integer type input ``position`` of ``node`` is dequantized from (None when no DequantizeLinear writes
    it)."""
    source = writer(node, graph, position)
    if source is None or source.op != "DequantizeLinear" or not source.inputs:
        return None
    return source.inputs[0].dtype


def readers(node: OpNode, graph: OpGraph) -> list[OpNode]:
    """The nodes reading any output of ``node``."""
    return [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]


def readers_through_no_ops(node: OpNode, graph: OpGraph) -> list[OpNode]:
    """The ops reading ``node``'s outputs, looking through Identity and reductions of size-1 axes (no-ops the
    compiler drops)."""
    consumers = graph.consumers()
    found: list[OpNode] = []
    for reader in [graph.nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]:
        same = reader.op == "Identity" or reader.op.startswith("Reduce") and reader.inputs and reader.outputs and \
            reader.inputs[0].static and reader.inputs[0].elements == reader.outputs[0].elements
        found.extend(readers_through_no_ops(reader, graph) if same else [reader])
    return found


def static_dims(shape: tuple[int | None, ...] | None) -> list[int] | None:
    """A static shape as a list, or None."""
    return None if shape is None or any(d is None for d in shape) else [int(d) for d in shape if d is not None]


def layout_source(node: OpNode, graph: OpGraph, through: frozenset[str] = frozenset()) -> OpNode | None:
    """The first op upstream of ``node`` that is not element-wise or Q/DQ, nor one of ``through`` (what a layout
    transpose stops at)."""
    producers = graph.producers()
    current: OpNode | None = node
    while current is not None and (current.op in _TRANSPARENT or current.op in through):
        feature = current.activations_in[0].name if current.activations_in else None
        current = graph.nodes[producers[feature]] if feature in producers else None
    return current


def accelerator_layout_source(node: OpNode, graph: OpGraph) -> OpNode | None:
    """The first op upstream of ``node`` that a layout transpose does not pass (element-wise, Q/DQ, a Squeeze and
    the ops of :data:`TRANSPOSABLE` it passes): the op whose NHWC layout, if it runs on the accelerator, ONNX
    Runtime's transpose optimizer carries down to ``node``."""
    return layout_source(node, graph, TRANSPOSABLE | {"Squeeze"})
