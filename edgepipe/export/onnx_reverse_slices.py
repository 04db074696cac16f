"""Reversing ONNX Slices (step -1 over a whole axis) rewritten as Gathers so that onnx2tf converts them exactly.

onnx2tf 1.28.8 converts a Slice with step -1 over the time axis of a [T, F] sequence into a TFLite graph that
computes something else (a MatMul, the reversal and an Add: output cosine 0.70 with the ONNX model's in one hand-run
probe). Bidirectional networks built from forward ones reverse their input and output sequences that way around each
backward GRU or LSTM, so their TFLite was refused at export. A Gather of the reversed indices along that axis is the
same function, and onnx2tf converts it exactly. Slices that keep part of an axis, or whose starts, ends, axes or
steps are not constants, stay.
"""

from __future__ import annotations

from typing import Any

from edgepipe.graph.onnx_edit import initializer_values


def _reversed_axes(node: Any, constants: dict[str, Any], shape: list[int]) -> list[int] | None:
    """The axes a Slice reverses whole (every step -1, start at the last element, end before the first), or None
    when it does anything else."""
    if len(node.input) < 5 or any(name not in constants for name in node.input[1:5]):
        return None
    starts, ends, axes, steps = (constants[name].ravel().tolist() for name in node.input[1:5])
    reversed_axes = []
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = axis % len(shape)
        size = shape[axis]
        if step != -1 or size <= 0 or _clamped(start, size, 0) != size - 1 or _clamped(end, size, -1) != -1:
            return None
        reversed_axes.append(axis)
    return reversed_axes


def _clamped(value: int, size: int, low: int) -> int:
    """A Slice bound with a negative step as ONNX resolves it: counted from the end when negative, then clamped to
    [low, size - 1] (low is -1 for the end: before the first element)."""
    return max(low, min(value + size if value < 0 else value, size - 1))


def reverse_slices_as_gathers(model: Any) -> int:
    """Rewrite ``model``'s (an ``onnx.ModelProto``, changed in place, opset 10 or later) whole-axis reversing Slices
    as Gathers of reversed indices; returns how many were rewritten."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value if d.HasField("dim_value") else 0 for d in v.type.tensor_type.shape.dim]
              for v in (*inferred.graph.value_info, *inferred.graph.input)}
    constants = initializer_values(model)
    nodes, rewritten = [], 0
    for node in model.graph.node:
        shape = shapes.get(node.input[0]) if node.op_type == "Slice" and node.input else None
        axes = _reversed_axes(node, constants, shape) if shape else None
        if not axes or shape is None:
            nodes.append(node)
            continue
        current = node.input[0]
        for k, axis in enumerate(axes):
            indices = f"{node.name or node.output[0]}_reversed_indices{k}"
            model.graph.initializer.append(numpy_helper.from_array(np.arange(shape[axis] - 1, -1, -1,
                                                                             dtype=np.int64), indices))
            out = node.output[0] if k == len(axes) - 1 else f"{node.output[0]}_reversed{k}"
            nodes.append(helper.make_node("Gather", [current, indices], [out], axis=axis,
                                          name=f"{node.name or node.output[0]}_gather{k}"))
            current = out
        rewritten += 1
    if rewritten:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return rewritten
