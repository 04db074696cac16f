"""Constant nodes → initializers, so every tool downstream sees weights where it expects them.

Some exporters emit weights and biases as ``Constant`` nodes; ONNX Runtime's
QOperator quantizer, NPU compilers and graph checkers look for them among the graph's
initializers. Moving them there changes no value and no output.
"""

from __future__ import annotations

from typing import Any


def constants_to_initializers(model: Any) -> int:
    """Move every top-level ``Constant`` node holding a tensor (``value``) into the initializers, in place."""
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
