"""Constraints on control flow: an If the compiler can replace by one branch, and graphs that stay static."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def branch_ops_in(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """An If runs only when its condition is known before the model runs (from static shapes) and its branch holds
    only {param}: the compiler replaces the If by it."""
    ops = node.attrs.get("branch_ops")
    if ops is None:
        return False, f"{node.op} '{node.name}' has a condition only known at run time"
    other = [op for op in ops if op not in allowed]
    return not other, f"{node.op} takes a branch with {', '.join(other)}" if other else f"branch of {', '.join(ops)}"


@constraint
def static_control_flow(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op leaves the graph static: no Loop (even of a constant trip count), and no If whose condition is only
    known at run time; the compiler refuses a dynamic graph."""
    if not required:
        return True, "not required"
    if node.op == "Loop":
        return False, f"Loop '{node.name}' runs its body at run time; the compiler does not unroll it"
    if node.op == "If" and node.attrs.get("branch_ops") is None:
        return False, f"If '{node.name}' has a condition only known at run time"
    return True, "static"
