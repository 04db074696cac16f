"""Constraints on element-wise arithmetic: operand count, shapes and ranks, broadcast constants, lone scalings."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.neighbours import RESHAPES, readers_through_no_ops, writer


@constraint
def max_inputs(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """The op has at most {param} feature-map inputs."""
    count = len(node.activations_in)
    return count <= limit, f"{node.op} has {count} inputs > {limit}" if count > limit else f"{count} inputs"


@constraint
def same_input_shapes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Element-wise inputs have the same shape (no broadcasting)."""
    shapes = {t.shape for t in node.activations_in if t.shape is not None}
    if not required or len(shapes) <= 1:
        return True, "shapes match"
    return False, f"{node.op} broadcasts {' vs '.join(str(s) for s in sorted(shapes, key=str))}"


@constraint
def operands_rank(node: OpNode, graph: OpGraph, rank: int) -> Verdict:
    """Every input, constants included, has rank {param}."""
    ranks = {t.name: len(t.shape) for t in node.inputs if t.shape is not None}
    other = [name for name, r in ranks.items() if r != rank]
    if other:
        return False, f"{node.op} input '{other[0]}' has rank {ranks[other[0]]}, not {rank}"
    return True, f"rank-{rank} inputs"


@constraint
def no_broadcast_constant_minuend(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The first operand is not a constant of several elements broadcast over the output's leading axes, such as
    a [C] constant minus an [N, T, C] tensor."""
    first, out = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    if not required or first is None or out is None or not first.constant or not first.static or not out.static:
        return True, "not a constant minuend"
    core = list(first.shape or ())
    while core and core[0] == 1:
        core.pop(0)
    target = list(out.shape or ())
    leading = 1 < first.elements < out.elements and bool(core) and len(core) <= len(target) and \
        target[len(target) - len(core):] == core
    if leading:
        shape = list(first.shape or ())
        return False, f"{node.op} subtracts from constant '{first.name}' {shape} broadcast to {target}"
    return True, "minuend not broadcast over leading axes"


@constraint
def scales_no_cpu_output_for_reshape(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """A Mul or Div by one constant value that only reshapes read does not scale an output of {param} (ops the
    NPU does not run): it would run on the CPU with that op."""
    source = writer(node, graph, 0)
    scale = node.inputs[1] if len(node.inputs) == 2 else None
    found = readers_through_no_ops(node, graph)
    if source is None or source.op not in ops or scale is None or not scale.constant or scale.elements != 1 \
            or not found or not all(r.op in RESHAPES for r in found):
        return True, "not a lone scaling of a CPU op's output"
    return False, f"{node.op} scales {source.op} '{source.name}' by a constant for a reshape, with it on the CPU"
