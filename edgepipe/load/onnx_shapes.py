"""Fixing the dynamic dimensions of an ONNX model's inputs, with onnxruntime's model tools.

Converters (onnx2tf), PTQ and NPU compilers want static shapes. The user names
shapes in the config (``input_shapes = {input = [1, 576]}``); any other input whose
leading (batch) dimension is dynamic gets batch 1. A named dimension (``dim_param``)
is fixed everywhere it appears, so ``state [2, batch, 128]`` follows ``input [batch, n]``.
Dimensions that stay dynamic are left for the user to fix: the build reports them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from edgepipe.errors import ModelLoadError
from edgepipe.load.rejections import raised_by

log = logging.getLogger(__name__)


def _inputs(model: Any) -> list[Any]:
    initializers = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def _is_dynamic(dim: Any) -> bool:
    return not (dim.HasField("dim_value") and dim.dim_value > 0)


def fix_input_shapes(model: Any, input_shapes: Mapping[str, Sequence[int]], path: Path) -> list[str]:
    """Fix ``model``'s input shapes in place; returns one line per change (for the log and the report)."""
    from onnxruntime.tools.onnx_model_utils import fix_output_shapes, make_dim_param_fixed, make_input_shape_fixed

    inputs = {value.name: value for value in _inputs(model)}
    unknown = sorted(set(input_shapes) - set(inputs))
    if unknown:
        raise ModelLoadError(f"input_shapes names {', '.join(unknown)}, which the model does not take "
                             f"(inputs: {', '.join(inputs)})", path=path, fix="Use the model's input names")
    changes = []
    for name, shape in input_shapes.items():
        dims = inputs[name].type.tensor_type.shape.dim
        if len(dims) != len(shape) or any(s <= 0 for s in shape):
            raise ModelLoadError(f"input_shapes gives {name} the shape {list(shape)}, the model's has rank "
                                 f"{len(dims)}", path=path, fix="Give one positive size per dimension")
        for dim, size in zip(dims, shape):
            if dim.HasField("dim_param") and dim.dim_param:
                make_dim_param_fixed(model.graph, dim.dim_param, int(size))
        make_input_shape_fixed(model.graph, name, [int(s) for s in shape])
        changes.append(f"{name} fixed to {list(shape)} (input_shapes)")
    for value in _inputs(model):
        dims = value.type.tensor_type.shape.dim
        if value.name in input_shapes or not dims or not _is_dynamic(dims[0]):
            continue
        if dims[0].HasField("dim_param") and dims[0].dim_param:
            make_dim_param_fixed(model.graph, dims[0].dim_param, 1)
        else:
            dims[0].Clear()
            dims[0].dim_value = 1
        changes.append(f"{value.name}: batch fixed to 1")
    if changes:
        try:
            fix_output_shapes(model)
        except (AssertionError, ValueError, TypeError, KeyError, IndexError) as exc:
            if not raised_by(exc, ("onnxruntime", "onnx")):
                raise
            # output shapes are informative; the runtime infers them anyway
            log.info("%s: output shapes not inferred after fixing inputs (%s)", path.name, exc)
        log.info("%s: %s", path.name, "; ".join(changes))
    return changes


def dynamic_inputs(model: Any) -> list[str]:
    """Names of inputs that still have a dynamic dimension."""
    return [value.name for value in _inputs(model) if any(_is_dynamic(d) for d in value.type.tensor_type.shape.dim)]
