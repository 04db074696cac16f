"""Constraints on Gather and GatherND: batch axes, table lookups, and selections the compiler makes a reshape."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def no_batch_dims(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op gathers with batch_dims 0 (data and indices share no leading batch axes)."""
    batch_dims = int(node.attrs.get("batch_dims", 0) or 0)
    bad = required and batch_dims != 0
    return not bad, f"{node.op} batch_dims {batch_dims}" if bad else "batch_dims 0"


@constraint
def not_a_table_lookup(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Gathers from a tensor computed at run time, not rows of a constant table by run-time indices (an
    embedding lookup runs on the CPU, whatever the indices' dtype)."""
    if not required or len(node.inputs) < 2:
        return True, "not required"
    table, indices = node.inputs[0], node.inputs[1]
    if table.constant and not indices.constant:
        return False, f"{node.op} looks up rows of constant '{table.name}' by run-time indices '{indices.name}'"
    return True, "not a table lookup"


@constraint
def keeps_every_element(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op selects every element of its data input with constant indices, in a new shape, which the compiler
    turns into a reshape; any other selection runs on the CPU."""
    data, out = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    same = data is not None and out is not None and data.static and out.static and data.elements == out.elements \
        and all(t.constant for t in node.inputs[1:])
    ok = same or not required
    return ok, "a reshape of its input" if same else f"{node.op} selects a part of {data.shape if data else None}"
