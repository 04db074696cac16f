"""The element type and shape ONNX shape inference gives each tensor of a model: what graph rewrites read before
they build nodes whose attributes or reshapes need sizes."""

from __future__ import annotations

from typing import Any

#: (ONNX element type, shape with None for a size inference left open, or None for an unknown rank).
TensorType = tuple[int, tuple[int | None, ...] | None]


def tensor_types(model: Any) -> dict[str, TensorType]:
    """(element type, shape) of every tensor ONNX shape inference knows; the model's own annotations when it
    cannot infer (a rewrite that needs a shape then leaves the node alone)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError, RuntimeError, ValueError):
        inferred = model
    graph = inferred.graph
    found: dict[str, TensorType] = {}
    for info in [*graph.value_info, *graph.input, *graph.output]:
        tensor = info.type.tensor_type
        shape = tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim) \
            if tensor.HasField("shape") else None
        found[info.name] = (tensor.elem_type, shape)
    for init in graph.initializer:
        found[init.name] = (init.data_type, tuple(init.dims))
    return found


def static_types(model: Any) -> dict[str, tuple[int, tuple[int, ...]]]:
    """(element type, shape) of every tensor whose shape inference resolves to fixed sizes."""
    found: dict[str, tuple[int, tuple[int, ...]]] = {}
    for name, (elem, shape) in tensor_types(model).items():
        sizes = [d for d in shape or () if d is not None]
        if shape is not None and len(sizes) == len(shape):
            found[name] = (elem, tuple(sizes))
    return found
