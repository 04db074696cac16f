"""Where int8 usually hurts in an ONNX graph: groups of nodes mixed precision tries to keep higher first.

Known from the structure alone, before anything is measured: the ops whose
output range int8 represents badly or whose input error they amplify —
``Softmax`` (probabilities over thousands of classes), ``Sigmoid`` /
``HardSigmoid`` / ``HardSwish`` / ``Tanh`` (saturating, often the model's output),
``LayerNormalization`` and its decomposed form (``ReduceMean → Sub → Pow →
ReduceMean → Add → Sqrt → Div``, as PaddlePaddle and older PyTorch exports write it),
and the first and last weight layers (raw inputs, and the outputs the user reads). First of all, where an
output joins quantities of very different ranges (a detector's boxes and scores), the ``Concat`` that joins
them and the reshapes between it and the output: kept above int8, each joined part keeps its own scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Op types whose nodes form one group each (all nodes of that type together), in the order tried.
_ACTIVATION_GROUPS = (("Softmax", "LogSoftmax"), ("Sigmoid",), ("HardSigmoid", "HardSwish"), ("Tanh",))
_LAYERNORM_CHAIN = ("Sub", "Pow", "ReduceMean", "Add", "Sqrt", "Div", "Mul", "Reciprocal")
_WEIGHT_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
#: Ops between an output and the Concat that builds it: they move values, they do not compute them.
_PLUMBING = ("Concat", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Slice", "Split")
#: How many plumbing nodes back from an output the search goes.
_PLUMBING_DEPTH = 6


@dataclass(frozen=True)
class NodeGroup:
    """Nodes mixed precision raises together, and why they are suspected."""

    reason: str
    nodes: tuple[str, ...]


def _consumers(graph: Any) -> dict[str, list[Any]]:
    consumers: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    return consumers


def _layernorm_nodes(graph: Any) -> tuple[str, ...]:
    """Nodes of every ``LayerNormalization`` and every decomposed one (a ``ReduceMean`` and its chain)."""
    consumers = _consumers(graph)
    found: list[str] = [n.name for n in graph.node if n.op_type == "LayerNormalization"]
    for node in graph.node:
        if node.op_type != "ReduceMean" or node.name in found:
            continue
        frontier, depth = [node], 0
        while frontier and depth < 8:
            following = []
            for current in frontier:
                if current.name not in found:
                    found.append(current.name)
                following += [c for out in current.output for c in consumers.get(out, [])
                              if c.op_type in _LAYERNORM_CHAIN and c.name not in found]
            frontier, depth = following, depth + 1
    return tuple(found)


def output_joins(model_path: Path, outputs: list[str]) -> list[NodeGroup]:
    """For each of ``outputs`` (outputs whose channels span very different ranges), the ``Concat`` nodes that
    build it and the plumbing between them and the output, as one group; none when no Concat builds it."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    producer = {out: node for node in graph.node for out in node.output}
    groups = []
    for output in outputs:
        found: list[str] = []
        frontier, depth = [output], 0
        while frontier and depth < _PLUMBING_DEPTH:
            nodes = [producer[name] for name in frontier if name in producer]
            nodes = [n for n in nodes if n.op_type in _PLUMBING and n.name not in found]
            found += [n.name for n in nodes]
            frontier = [name for n in nodes for name in (n.input if n.op_type == "Concat" else n.input[:1])]
            depth += 1
        joins = [name for name in found if any(n.name == name and n.op_type == "Concat" for n in graph.node)]
        if joins:
            groups.append(NodeGroup(f"output {output} joins parts of different ranges ({len(joins)} Concat, "
                                    f"{len(found) - len(joins)} reshape nodes)", tuple(found)))
    return groups


def sensitive_groups(model_path: Path) -> list[NodeGroup]:
    """The suspected groups of the ONNX model at ``model_path`` (node names as the quantizer sees them)."""
    import onnx

    graph = onnx.load(str(model_path), load_external_data=False).graph
    groups = []
    for ops in _ACTIVATION_GROUPS:
        nodes = tuple(n.name for n in graph.node if n.op_type in ops)
        if nodes:
            groups.append(NodeGroup(f"{'/'.join(ops)} ({len(nodes)})", nodes))
    layernorm = _layernorm_nodes(graph)
    if layernorm:
        groups.append(NodeGroup(f"LayerNorm ({len(layernorm)} nodes)", layernorm))
    weights = [n.name for n in graph.node if n.op_type in _WEIGHT_OPS]
    if weights:
        groups.append(NodeGroup("last weight layer", (weights[-1],)))
        groups.append(NodeGroup("first weight layer", (weights[0],)))
    return groups


def quantizable_nodes(model_path: Path) -> int:
    """How many nodes of the model at ``model_path`` the quantizer may touch (every node but ``Constant``)."""
    import onnx

    return sum(n.op_type != "Constant" for n in onnx.load(str(model_path), load_external_data=False).graph.node)
