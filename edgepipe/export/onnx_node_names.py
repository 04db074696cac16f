"""Node names TensorFlow accepts as scope names, for onnx2tf's private copy of a model.

onnx2tf names the TF ops it makes after the ONNX nodes; TensorFlow refuses a scope name outside
``[A-Za-z0-9_.\\/>-]`` ("'Softmax@0' is not a valid scope name": every node of a PaddlePaddle export is named
``Op@N``), and the conversion fails at the first op that uses its name. Only node names change, not tensor
names: the model computes the same and keeps its inputs and outputs.
"""

from __future__ import annotations

import re
from typing import Any

_NOT_IN_SCOPE = re.compile(r"[^A-Za-z0-9_./>\\-]")


def scope_safe(name: str) -> str:
    """``name`` with every character TensorFlow refuses in a scope name written as ``_``."""
    return _NOT_IN_SCOPE.sub("_", name)


def scope_safe_node_names(model: Any) -> int:
    """Rename, in place, every node whose name TensorFlow refuses as a scope name; returns how many. A renamed
    node that would take another node's name gets a numbered suffix."""
    taken = {node.name for node in model.graph.node}
    renamed = 0
    for node in model.graph.node:
        safe = scope_safe(node.name)
        if safe == node.name:
            continue
        base, suffix = safe, 1
        while safe in taken:
            safe, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(safe)
        node.name = safe
        renamed += 1
    return renamed
