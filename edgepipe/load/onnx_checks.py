"""What an ONNX file must pass before anything reads its external data or hands it to ONNX Runtime.

The graph is parsed without its external data first; then every external-data
``location`` must resolve (symlinks followed) to a file inside the model's own
folder, every node must come from a domain ONNX Runtime knows at an opset it
supports, and no graph input may declare a tensor above the size limit. Only
then is the external data read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from edgepipe.errors import ModelLoadError
from edgepipe.limits import check_declared_tensor, check_model_file
from edgepipe.load.rejections import rejected_by

#: Highest opset per operator domain that ONNX Runtime 1.32 loads (checked by tests/corpus against ORT itself).
SUPPORTED_OPSETS: dict[str, int] = {"": 28, "ai.onnx": 28, "ai.onnx.ml": 5, "com.microsoft": 1,
                                    "ai.onnx.preview.training": 1}
_EXPORT_FIX = "Export the model again; check the file is complete"


def onnx_rejections() -> tuple[type[BaseException], ...]:
    """What onnx and protobuf raise for a file they cannot parse or check (protobuf's ``DecodeError``,
    ``onnx.checker.ValidationError``, and the ``ValueError``/``TypeError``/``OSError`` of their Python code)."""
    from google.protobuf.message import DecodeError
    from onnx.checker import ValidationError

    return DecodeError, ValidationError, ValueError, TypeError, KeyError, IndexError, OSError, RuntimeError


def ort_rejections() -> tuple[type[BaseException], ...]:
    """ONNX Runtime's errors for a model it refuses to load (its pybind error classes)."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    names = ("Fail", "InvalidArgument", "NoSuchFile", "NoModel", "InvalidProtobuf", "InvalidGraph", "NotImplemented",
             "RuntimeException", "EPFail", "ModelRequiresCompilation")
    return tuple(getattr(state, name) for name in names if hasattr(state, name))


def _graphs(graph: Any) -> Iterator[Any]:
    """``graph`` and every subgraph nested in its nodes' attributes (If, Loop, Scan bodies)."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _graphs(attr.g)
            for sub in attr.graphs:
                yield from _graphs(sub)


def _nodes(model: Any) -> Iterator[Any]:
    for graph in _graphs(model.graph):
        yield from graph.node
    for function in model.functions:
        yield from function.node


def _tensors(model: Any) -> Iterator[Any]:
    """Every tensor that may hold external data: initializers and tensor attributes, in all graphs."""
    for graph in _graphs(model.graph):
        yield from graph.initializer
        for sparse in graph.sparse_initializer:
            yield sparse.values
            yield sparse.indices
        for node in graph.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors


def check_opsets(model: Any, path: Path) -> None:
    """Every imported operator set must be one ONNX Runtime supports, at a version it supports."""
    for opset in model.opset_import:
        if opset.version < 1:
            raise ModelLoadError(f"opset {opset.version} of domain '{opset.domain or 'ai.onnx'}' is not a valid "
                                 "version", path=path, fix=_EXPORT_FIX)
        newest = SUPPORTED_OPSETS.get(opset.domain)
        if newest is not None and opset.version > newest:
            domain = opset.domain or "ai.onnx"
            raise ModelLoadError(f"opset {opset.version} of domain '{domain}' is newer than ONNX Runtime supports "
                                 f"(at most {newest})", path=path,
                                 fix=f"Export the model with opset {newest} or lower")


def check_domains(model: Any, path: Path) -> None:
    """Every node must come from a standard domain or a function the model itself defines."""
    local = {function.domain for function in model.functions}
    for node in _nodes(model):
        if node.domain not in SUPPORTED_OPSETS and node.domain not in local:
            raise ModelLoadError(f"node '{node.name or node.op_type}' (op {node.op_type}) is from the unknown "
                                 f"domain '{node.domain}', which ONNX Runtime cannot run", path=path,
                                 fix="Export the model with standard ONNX operators only (no custom ops)")


def check_external_data(model: Any, path: Path) -> None:
    """Every external-data file must be a regular file inside the model's folder (no path traversal)."""
    from onnx.external_data_helper import uses_external_data

    folder = os.path.realpath(path.parent)
    for tensor in _tensors(model):
        if not uses_external_data(tensor):
            continue
        location = next((entry.value for entry in tensor.external_data if entry.key == "location"), "")
        target = os.path.realpath(os.path.join(folder, location))
        inside = bool(location) and not os.path.isabs(location) and "\0" not in location \
            and os.path.commonpath([folder, target]) == folder and target != folder
        if not inside:
            raise ModelLoadError(f"tensor '{tensor.name}' points its external data at '{location}', outside the "
                                 "model's folder; edgepipe never reads it", path=path,
                                 fix="Keep external data files beside the .onnx file (onnx.save with "
                                     "save_as_external_data=True)")
        if not os.path.isfile(target):
            raise ModelLoadError(f"external data file '{location}' of tensor '{tensor.name}' is missing", path=path,
                                 fix="Copy the external data file beside the .onnx file")


def check_input_shapes(model: Any, path: Path) -> None:
    """No graph input may declare a tensor larger than ``limits.max_tensor_mb``."""
    from onnx.helper import tensor_dtype_to_np_dtype

    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        # -1 and 0 are how old exporters (PaddlePaddle, early PyTorch) write a dynamic dimension
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in tensor_type.shape.dim]
        try:
            itemsize = tensor_dtype_to_np_dtype(tensor_type.elem_type).itemsize
        except (KeyError, TypeError, ValueError):
            itemsize = 1
        check_declared_tensor(value.name, dims, itemsize, path)


def read_checked_onnx(path: Path) -> Any:
    """The ``onnx.ModelProto`` in ``path``, its external data loaded only after every check passed."""
    import onnx

    check_model_file(path)
    with rejected_by("onnx", ("onnx", "google"), onnx_rejections(), "not a valid ONNX model", path, _EXPORT_FIX):
        model = onnx.load(str(path), load_external_data=False)
    check_opsets(model, path)
    check_domains(model, path)
    check_external_data(model, path)
    check_input_shapes(model, path)
    with rejected_by("onnx", ("onnx", "google"), onnx_rejections(), "cannot read the external data", path,
                     _EXPORT_FIX):
        onnx.external_data_helper.load_external_data_for_model(model, str(path.parent))
    return model


def check_opens_in_onnxruntime(model: Any, path: Path) -> None:
    """The build evaluates the model with ONNX Runtime: one it cannot open is the model's fault, not edgepipe's."""
    import onnxruntime as ort

    options = ort.SessionOptions()  # the runner's settings: graph optimizations on (they can expose errors)
    options.log_severity_level = 4
    with rejected_by("onnxruntime", ("onnxruntime",), ort_rejections(), "ONNX Runtime cannot load the model", path,
                     "Export the model again with a standard exporter; check it with "
                     "onnx.checker.check_model(full_check=True)"):
        ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
