"""A data-dependent If rewritten as both of its branches and a Where, so that onnx2tf converts it.

A model can gate part of its work on its own output: openWakeWord's classifiers run a second, verifier network
only when the first score passes a threshold (``If(score >= t, then: verifier(x), else: score)``). onnx2tf 1.28.8
fails at the first node of such a branch that reads a weight of the outer graph (``KeyError``), and an If runs on
no NPU anyway. Computing both branches and choosing each output with a Where on the condition gives the same
values: an output of the branch not taken is computed and dropped. That holds for branches of plain tensor ops, so
the rewrite takes only branches without control flow, random or sequence ops, whose outputs have one static shape
and type on both sides; any other If stays.
"""

from __future__ import annotations

from typing import Any

from edgepipe.graph.onnx_types import static_types

#: Ops a branch must not hold: control flow (nested graphs), random values (a branch computed needlessly would draw
#: from the generator), sequences (no Where over them).
_REFUSED_OPS = frozenset({"If", "Loop", "Scan", "RandomNormal", "RandomNormalLike", "RandomUniform",
                          "RandomUniformLike", "Multinomial", "Bernoulli", "SequenceConstruct", "SequenceEmpty",
                          "SequenceInsert", "SequenceAt", "SequenceErase", "SequenceLength", "SplitToSequence",
                          "ConcatFromSequence"})


def _branches(node: Any) -> tuple[Any, Any] | None:
    graphs = {a.name: a.g for a in node.attribute if a.name in ("then_branch", "else_branch")}
    then, other = graphs.get("then_branch"), graphs.get("else_branch")
    if then is None or other is None or len({len(then.output), len(other.output), len(node.output)}) != 1:
        return None
    if any(n.op_type in _REFUSED_OPS for g in (then, other) for n in g.node):
        return None
    return then, other


def _inline(graph: Any, prefix: str, model: Any) -> dict[str, str]:
    """Copy ``graph``'s nodes and initializers into ``model``'s graph under names starting with ``prefix`` (the
    names of the outer graph it reads stay); returns the renaming of its own tensors."""
    from onnx import NodeProto, TensorProto

    own = {t.name for t in graph.initializer} | {o for n in graph.node for o in n.output if o}
    rename = {name: f"{prefix}{name}" for name in own}
    for tensor in graph.initializer:
        copy = TensorProto()
        copy.CopyFrom(tensor)
        copy.name = rename[tensor.name]
        model.graph.initializer.append(copy)
    for node in graph.node:
        copy = NodeProto()
        copy.CopyFrom(node)
        copy.name = f"{prefix}{node.name or node.output[0]}"
        copy.input[:] = [rename.get(name, name) for name in node.input]
        copy.output[:] = [rename.get(name, name) for name in node.output]
        model.graph.node.append(copy)
    return rename


def _rewrite_one(model: Any, index: int) -> bool:
    """Rewrite the If at ``index`` of ``model``'s top-level nodes in place; False (``model`` unchanged) when its
    branches do not qualify."""
    import onnx
    from onnx import helper

    node = model.graph.node[index]
    branches = _branches(node)
    if branches is None:
        return False
    trial = onnx.ModelProto()
    trial.CopyFrom(model)
    del trial.graph.node[index]
    tag = node.name or node.output[0]
    renames = [_inline(graph, f"{tag}/{side}/", trial) for graph, side in zip(branches, ("then", "else"))]
    picks = [[rename.get(o.name, o.name) for o in graph.output] for graph, rename in zip(branches, renames)]
    for k, (then, other) in enumerate(zip(*picks)):
        trial.graph.node.append(helper.make_node("Where", [node.input[0], then, other], [node.output[k]],
                                                 name=f"{tag}/where{k}"))
    types = static_types(trial)
    if any(t not in types or o not in types or types[t] != types[o] for t, o in zip(*picks)):
        return False
    sorted_nodes = _topological(trial.graph.node)
    if sorted_nodes is None:
        return False
    del trial.graph.node[:]
    trial.graph.node.extend(sorted_nodes)
    model.CopyFrom(trial)
    return True


def _topological(nodes: Any) -> list[Any] | None:
    """``nodes`` in an order where every node follows the nodes writing its inputs (the given order where it
    allows); None on a cycle."""
    writer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    waits = [{writer[name] for name in n.input if name in writer} - {i} for i, n in enumerate(nodes)]
    readers: dict[int, list[int]] = {}
    for i, sources in enumerate(waits):
        for source in sources:
            readers.setdefault(source, []).append(i)
    ready = sorted(i for i, sources in enumerate(waits) if not sources)
    order: list[int] = []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for reader in readers.get(i, []):
            waits[reader].discard(i)
            if not waits[reader]:
                ready.append(reader)
        ready.sort()
    return [nodes[i] for i in order] if len(order) == len(nodes) else None


def if_as_where(model: Any) -> int:
    """Rewrite ``model``'s (an ``onnx.ModelProto``, changed in place) top-level Ifs whose branches qualify as
    both branches and a Where per output; returns how many were rewritten."""
    rewritten = 0
    index = 0
    while index < len(model.graph.node):
        node = model.graph.node[index]
        if node.op_type == "If" and _rewrite_one(model, index):
            rewritten += 1
            continue  # the node list changed: look at the same position again
        index += 1
    return rewritten
