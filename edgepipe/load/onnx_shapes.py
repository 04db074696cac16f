"""Fixing the dynamic dimensions of an ONNX model's inputs, with onnxruntime's model tools.

Converters (onnx2tf), PTQ and NPU compilers want static shapes. The user names
shapes in the config (``input_shapes = {input = [1, 576]}``); any other input whose
leading (batch) dimension is dynamic gets batch size 1. A named dimension (``dim_param``)
is fixed everywhere it appears, so ``state [2, batch, 128]`` follows ``input [batch, n]``
— unless ``input_shapes`` gives one name two sizes (PaddlePaddle exports call both
height and width ``?``): then only the input's own dimensions are set, and the graph
keeps the name elsewhere (ONNX Runtime infers those shapes). ``-1`` and ``0`` sizes,
which old exporters write for "dynamic", count as dynamic.
Dimensions that stay dynamic are left for the user to fix: the build reports them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import onnx
from onnx.shape_inference import InferenceError

from edgepipe.errors import ModelLoadError
from edgepipe.load.rejections import raised_by

log = logging.getLogger(__name__)


def _inputs(model: Any) -> list[Any]:
    initializers = {init.name for init in model.graph.initializer}
    return [value for value in model.graph.input if value.name not in initializers]


def _is_dynamic(dim: Any) -> bool:
    return not (dim.HasField("dim_value") and dim.dim_value > 0)


def _param(dim: Any) -> str | None:
    return dim.dim_param if dim.HasField("dim_param") and dim.dim_param else None


def shared_name_sizes(model: Any, input_shapes: Mapping[str, Sequence[int]]) -> dict[str, set[int]]:
    """Every ``dim_param`` of the inputs named in ``input_shapes``, with the sizes ``input_shapes`` gives it."""
    sizes: dict[str, set[int]] = {}
    for value in _inputs(model):
        if value.name not in input_shapes:
            continue
        for dim, size in zip(value.type.tensor_type.shape.dim, input_shapes[value.name]):
            if _param(dim):
                sizes.setdefault(_param(dim), set()).add(int(size))  # type: ignore[arg-type]
    return sizes


def _check_request(name: str, dims: Any, shape: Sequence[int], path: Path) -> None:
    if len(dims) != len(shape) or any(int(s) <= 0 for s in shape):
        raise ModelLoadError(f"input_shapes gives {name} the shape {list(shape)}, the model's has rank "
                             f"{len(dims)}", path=path, fix="Give one positive size per dimension")
    for index, (dim, size) in enumerate(zip(dims, shape)):
        if not _is_dynamic(dim) and dim.dim_value != int(size):
            raise ModelLoadError(f"input_shapes gives {name} size {size} in dimension {index}, which the model "
                                 f"fixes to {dim.dim_value}", path=path,
                                 fix=f"Use {dim.dim_value} there; only dynamic dimensions can be chosen")


def _fix_named_input(model: Any, value: Any, shape: Sequence[int], shared: dict[str, set[int]]) -> None:
    """Set ``value``'s dims to ``shape``: graph-wide for a name with one size, on this input only otherwise."""
    from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed

    for dim, size in zip(value.type.tensor_type.shape.dim, shape):
        name = _param(dim)
        if name and len(shared.get(name, ())) == 1:
            make_dim_param_fixed(model.graph, name, int(size))
        elif _is_dynamic(dim):
            dim.Clear()
            dim.dim_value = int(size)


def _fix_batch(model: Any, value: Any) -> None:
    from onnxruntime.tools.onnx_model_utils import make_dim_param_fixed

    first = value.type.tensor_type.shape.dim[0]
    if _param(first):
        make_dim_param_fixed(model.graph, _param(first), 1)  # type: ignore[arg-type]
    else:
        first.Clear()
        first.dim_value = 1


def clear_stale_shapes(model: Any) -> int:
    """Drop shape annotations that name dimensions no input declares any more; returns how many.

    Exporters annotate intermediate values and outputs with symbolic dims derived from the
    inputs' names (PyTorch writes ``(floor(height/2 - 1/2) + 1)*...`` for a detection head's anchor
    count). Fixing the inputs leaves those formulas behind, and ONNX shape inference keeps an
    annotation rather than replace it, so the fixed model would still declare dynamic outputs and
    converters (onnx2tf) would build from the stale shapes. Annotations are optional: dropping
    them lets every tool infer static shapes from the fixed inputs.
    """
    live = {_param(d) for value in _inputs(model) for d in value.type.tensor_type.shape.dim if _param(d)}

    def stale(value: Any) -> bool:
        dims = value.type.tensor_type.shape.dim if value.type.HasField("tensor_type") else []
        return any(_param(d) and _param(d) not in live for d in dims)

    kept = [value for value in model.graph.value_info if not stale(value)]
    cleared = len(model.graph.value_info) - len(kept)
    if cleared:
        del model.graph.value_info[:]
        model.graph.value_info.extend(kept)
    for value in model.graph.output:
        if stale(value):
            cleared += 1
            for dim in value.type.tensor_type.shape.dim:
                if _param(dim) and _param(dim) not in live:
                    dim.Clear()
    return cleared


def fix_input_shapes(model: Any, input_shapes: Mapping[str, Sequence[int]], path: Path) -> list[str]:
    """Fix ``model``'s input shapes in place; returns one line per change (for the log and the report)."""
    inputs = {value.name: value for value in _inputs(model)}
    unknown = sorted(set(input_shapes) - set(inputs))
    if unknown:
        raise ModelLoadError(f"input_shapes names {', '.join(unknown)}, which the model does not take "
                             f"(inputs: {', '.join(inputs)})", path=path, fix="Use the model's input names")
    for name, shape in input_shapes.items():
        _check_request(name, inputs[name].type.tensor_type.shape.dim, shape, path)
    shared = shared_name_sizes(model, input_shapes)
    changes = []
    for name, shape in input_shapes.items():
        _fix_named_input(model, inputs[name], shape, shared)
        changes.append(f"{name} fixed to {list(shape)} (input_shapes)")
    changes += [f"dimension name '{n}' stands for sizes {sorted(s)}: set on the inputs only"
                for n, s in shared.items() if len(s) > 1]
    for value in _inputs(model):
        dims = value.type.tensor_type.shape.dim
        if value.name in input_shapes or not dims or not _is_dynamic(dims[0]):
            continue
        _fix_batch(model, value)
        changes.append(f"{value.name}: batch fixed to 1")
    if changes:
        stale = clear_stale_shapes(model)
        if stale:
            changes.append(f"{stale} intermediate/output shapes with dimension names no input has any more "
                           "cleared (re-inferred from the fixed inputs)")
        try:
            fix_output_shapes(model)
        except (AssertionError, ValueError, TypeError, KeyError, IndexError, InferenceError) as exc:
            if not raised_by(exc, ("onnxruntime", "onnx")):
                raise
            # output shapes are informative; the runtime infers them anyway
            log.info("%s: output shapes not inferred after fixing inputs (%s)", path.name, exc)
        log.info("%s: %s", path.name, "; ".join(changes))
    return changes


def fix_output_shapes(model: Any) -> None:
    """Give the outputs the static shapes ONNX shape inference finds from the fixed inputs.

    Like ONNX Runtime's ``fix_output_shapes``, with data propagation on: shapes computed by
    Shape/Gather/Range arithmetic (a detection head's anchor count) become static too. An output declared with no
    known dimension is inferred with its rank as well: exporters declare placeholder shapes of the wrong rank
    (one converter writes ``[output_0_dim_0]`` for a [100, 88] result), which would make inference fail.
    """
    unknown = {}
    for value in model.graph.output:  # no known dim: the declared rank may be wrong too (a converter
        dims = value.type.tensor_type.shape.dim  # declares rank-1 outputs of rank-2 results), so infer the rank
        if value.type.HasField("tensor_type") and dims and all(_is_dynamic(d) for d in dims):
            unknown[value.name] = onnx.TypeProto.Tensor()
            unknown[value.name].CopyFrom(value.type.tensor_type)
            value.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    finally:
        for value in model.graph.output:
            if value.name in unknown:
                value.type.tensor_type.CopyFrom(unknown[value.name])
    for value, new in zip(model.graph.output, inferred.graph.output):
        dims = new.type.tensor_type.shape.dim
        if any(_is_dynamic(d) for d in value.type.tensor_type.shape.dim) and dims and \
                not any(_is_dynamic(d) for d in dims):
            value.type.tensor_type.shape.CopyFrom(new.type.tensor_type.shape)


def dynamic_inputs(model: Any) -> list[str]:
    """Names of inputs that still have a dynamic dimension."""
    return [value.name for value in _inputs(model) if any(_is_dynamic(d) for d in value.type.tensor_type.shape.dim)]
