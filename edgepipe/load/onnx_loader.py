"""ONNX files, checked with the ONNX checker before anything else touches them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.load.rejections import rejected_by
from edgepipe.tensors import Signature, TensorSpec


def _specs(values: Any, initializers: set[str]) -> tuple[TensorSpec, ...]:
    import onnx

    specs = []
    for value in values:
        if value.name in initializers:
            continue
        tensor_type = value.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                     for d in tensor_type.shape.dim)
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        specs.append(TensorSpec(name=value.name, shape=dims, dtype=dtype))
    return tuple(specs)


def declare_ir4_for_bare_initializers(model: Any) -> None:
    """Declare IR version 4 for an IR-3 model whose initializers are not all graph inputs.

    IR 3 wants every initializer listed as a graph input; old converters (OnnxMLTools' opset-8 files) leave
    them out. ONNX Runtime runs such a file as IR 4 allows it, the ONNX checker refuses
    it: declaring IR 4 changes nothing else in the model.
    """
    inputs = {value.name for value in model.graph.input}
    if model.ir_version < 4 and any(init.name not in inputs for init in model.graph.initializer):
        model.ir_version = 4


def load(path: Path, input_shapes: dict[str, list[int]] | None = None) -> tuple[Any, Signature]:
    """The ``onnx.ModelProto`` in ``path`` (checked, dynamic input dims fixed: edgepipe.load.onnx_shapes)."""
    import onnx

    from edgepipe.load.onnx_checks import onnx_rejections, read_checked_onnx

    model = read_checked_onnx(path)  # size limit, opsets, domains, external-data paths: checked before loading data
    declare_ir4_for_bare_initializers(model)
    with rejected_by("onnx", ("onnx", "google"), onnx_rejections(), "not a valid ONNX model", path,
                     "Export the model again; check the file is complete"):
        onnx.checker.check_model(model)
    from edgepipe.load.onnx_shapes import fix_input_shapes

    fix_input_shapes(model, input_shapes or {}, path)
    from edgepipe.load.onnx_checks import check_opens_in_onnxruntime

    check_opens_in_onnxruntime(model, path)  # else the build's first ONNX Runtime session fails with exit 3
    from edgepipe.load.onnx_constant_outputs import shape_only_outputs

    initializers = {init.name for init in model.graph.initializer}
    inputs = _specs(model.graph.input, initializers)
    signature = Signature(inputs=inputs, outputs=_specs(model.graph.output, set()),
                          constant_outputs=shape_only_outputs(model) if all(s.is_static for s in inputs) else ())
    return model, signature
