"""A copy of an ONNX model whose nodes carry the names edgepipe gives them, so vendor tools report those names."""

from __future__ import annotations

from pathlib import Path

import onnx

from edgepipe.graph.opgraph import OpGraph


def named_copy(model: Path, graph: OpGraph, out: Path) -> Path:
    """``model`` with every node named as edgepipe names it (an unnamed node is ``OP_INDEX``), saved to ``out``."""
    proto = onnx.load(str(model))
    for node, ours in zip(proto.graph.node, graph.nodes, strict=False):
        node.name = ours.name
    onnx.save(proto, str(out))
    return out
