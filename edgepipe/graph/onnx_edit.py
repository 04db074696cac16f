"""What every ONNX rewrite reads and writes: a node's attributes, the graph's constant values, and ``Constant``
nodes held as initializers (so every tool downstream sees weights where it expects them; no value changes)."""

from __future__ import annotations

from typing import Any

import numpy as np


def attributes(node: Any, *, subgraphs: bool = True) -> dict[str, Any]:
    """``node``'s attributes as Python values by name; without ``subgraphs``, graph-valued ones (a Loop's body,
    an If's branches) are left out."""
    import onnx  # heavy optional dependency of the readers that call this

    skip = () if subgraphs else (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute if a.type not in skip}


def initializer_values(model: Any) -> dict[str, np.ndarray]:
    """Every initializer of the main graph as a numpy array, by name."""
    from onnx import numpy_helper

    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def constant_values(model: Any) -> dict[str, np.ndarray]:
    """Every constant tensor of the main graph as a numpy array: initializers and ``Constant`` nodes' ``value``."""
    from onnx import numpy_helper

    found = initializer_values(model)
    for node in model.graph.node:
        value = next((a for a in node.attribute if a.name == "value" and a.HasField("t")), None)
        if node.op_type == "Constant" and value is not None:
            found[node.output[0]] = numpy_helper.to_array(value.t)
    return found


def constants_to_initializers(model: Any) -> int:
    """Move every top-level ``Constant`` node holding a tensor (``value``) into the initializers, in place;
    returns how many moved. Exporters emit weights as ``Constant`` nodes; quantizers, NPU compilers and graph
    checkers look for them among the initializers."""
    kept, moved = [], 0
    for node in model.graph.node:
        value = next((a for a in node.attribute if a.name == "value" and a.HasField("t")), None)
        if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or value is None:
            kept.append(node)
            continue
        tensor = type(value.t)()
        tensor.CopyFrom(value.t)
        tensor.name = node.output[0]
        model.graph.initializer.append(tensor)
        moved += 1
    if moved:
        del model.graph.node[:]
        model.graph.node.extend(kept)
    return moved


class NameScope:
    """Fresh names for the nodes and tensors a rewrite adds to one graph: none collides with a name it has."""

    def __init__(self, model: Any):
        graph = model.graph
        self._taken = ({t.name for t in graph.initializer} | {n.name for n in graph.node}
                       | {o for n in graph.node for o in n.output} | {i.name for i in graph.input}
                       | {o.name for o in graph.output})

    def fresh(self, name: str) -> str:
        """``name``, or ``name`` with a numeric suffix, taken from now on."""
        candidate, suffix = name, 0
        while candidate in self._taken:
            suffix += 1
            candidate = f"{name}_{suffix}"
        self._taken.add(candidate)
        return candidate


def name_every_node(model: Any) -> int:
    """Give every node of the main graph a name of its own (unnamed ones ``<op>_<index>``, repeats a suffix), in
    place; returns how many were renamed. Placement and vendor tools match nodes by name."""
    scope = NameScope(model)
    seen: set[str] = set()
    renamed = 0
    for index, node in enumerate(model.graph.node):
        if node.name and node.name not in seen:
            seen.add(node.name)
            continue
        node.name = scope.fresh(node.name or f"{node.op_type}_{index}")
        seen.add(node.name)
        renamed += 1
    return renamed


def drop_unread_initializers(model: Any) -> int:
    """Remove the initializers no node, subgraph or graph output reads any more (the constants of nodes a rewrite
    replaced), in place; returns how many went."""
    read = {name for node in model.graph.node for name in node.input} | {o.name for o in model.graph.output}
    read |= {name for node in model.graph.node if node.attribute for name in subgraph_reads(node)}
    kept = [t for t in model.graph.initializer if t.name in read]
    dropped = len(model.graph.initializer) - len(kept)
    if dropped:
        del model.graph.initializer[:]
        model.graph.initializer.extend(kept)
    return dropped


def subgraph_reads(node: Any) -> set[str]:
    """Names the subgraphs of ``node`` (a Loop's body, an If's branches, a Scan's body, nested) read from the
    enclosing graph: outer-scope values, which are inputs of ``node`` no edge of the graph shows."""
    import onnx

    reads: set[str] = set()
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else (
            list(attribute.graphs) if attribute.type == onnx.AttributeProto.GRAPHS else [])
        for graph in graphs:
            local = {i.name for i in graph.input} | {i.name for i in graph.initializer}
            for inner in graph.node:
                reads.update(name for name in inner.input if name and name not in local)
                reads.update(name for name in subgraph_reads(inner) if name not in local)
                local.update(inner.output)
    return reads
