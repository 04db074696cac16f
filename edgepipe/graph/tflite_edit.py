"""Edits of a TFLite model held in LiteRT's object API (``schema_py_generated.ModelT``) that keep it valid."""

from __future__ import annotations

from typing import Any


def drop_unused_tensors(model: Any, index: int) -> None:
    """Remove tensors of subgraph ``index`` that nothing refers to, renumbering every reference (signatures too)."""
    subgraph = model.subgraphs[index]
    used = sorted({i for op in subgraph.operators for i in [*op.inputs, *op.outputs] if i >= 0}
                  | set(subgraph.inputs) | set(subgraph.outputs))
    renumber = {old: new for new, old in enumerate(used)}
    subgraph.tensors = [subgraph.tensors[i] for i in used]
    for op in subgraph.operators:
        op.inputs = [renumber[i] if i >= 0 else i for i in op.inputs]
        op.outputs = [renumber[i] if i >= 0 else i for i in op.outputs]
    subgraph.inputs = [renumber[i] for i in subgraph.inputs]
    subgraph.outputs = [renumber[i] for i in subgraph.outputs]
    for signature in model.signatureDefs or []:
        if signature.subgraphIndex == index:
            for entry in [*(signature.inputs or []), *(signature.outputs or [])]:
                entry.tensorIndex = renumber[entry.tensorIndex]
