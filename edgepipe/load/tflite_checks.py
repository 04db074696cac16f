"""A bounded, pure-Python walk over a TFLite flatbuffer before the LiteRT interpreter sees it.

Every vector length is bounded by the file size, every index (buffer,
operator code, subgraph input/output) must point inside its table, and no
tensor may declare more than ``limits.max_tensor_mb``. A malformed file fails
here with a Python exception (turned into a user error), never inside C++.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

from edgepipe.errors import ModelLoadError
from edgepipe.limits import check_declared_tensor
from edgepipe.load.rejections import raised_by

#: Bytes per element of each ``tflite.TensorType`` (schema.fbs); sub-byte and opaque types count as 1.
_ITEMSIZE = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 5: 1, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8, 15: 4, 16: 2, 18: 2}
_FIX = "Convert the model again; check the file is complete"


class _Corrupt(Exception):
    pass


def _length(count: int, content: bytes) -> int:
    """A vector length, refused when the file could not possibly hold that many 4-byte entries."""
    if count < 0 or count * 4 > len(content):
        raise _Corrupt(f"a vector claims {count} entries in a {len(content)}-byte file")
    return count


def _check_indices(indices: Any, bound: int, what: str) -> None:
    for index in indices:
        if not -1 <= int(index) < bound:
            raise _Corrupt(f"{what} index {int(index)} outside 0..{bound - 1}")


def _check_subgraph(subgraph: Any, content: bytes, n_buffers: int, n_codes: int, path: Path) -> None:
    n_tensors = _length(subgraph.TensorsLength(), content)
    for t in range(n_tensors):
        tensor = subgraph.Tensors(t)
        shape = [int(d) for d in tensor.ShapeAsNumpy()] if _length(tensor.ShapeLength(), content) else []
        name = (tensor.Name() or b"").decode("utf-8", "replace")
        check_declared_tensor(name, shape, _ITEMSIZE.get(tensor.Type(), 1), path)
        _check_indices([tensor.Buffer()], n_buffers, "buffer")
    for vector, length in ((subgraph.InputsAsNumpy, subgraph.InputsLength),
                           (subgraph.OutputsAsNumpy, subgraph.OutputsLength)):
        if _length(length(), content):
            _check_indices(vector(), n_tensors, "tensor")
    for o in range(_length(subgraph.OperatorsLength(), content)):
        operator = subgraph.Operators(o)
        _check_indices([operator.OpcodeIndex()], n_codes, "operator code")
        for vector, length in ((operator.InputsAsNumpy, operator.InputsLength),
                               (operator.OutputsAsNumpy, operator.OutputsLength)):
            if _length(length(), content):
                _check_indices(vector(), n_tensors, "tensor")


def check_tflite(content: bytes, path: Path) -> None:
    """A user error unless ``content`` is a structurally sound TFLite model within the size limits."""
    from ai_edge_litert import schema_py_generated as schema

    try:
        model = schema.Model.GetRootAs(content, 0)
        n_buffers = _length(model.BuffersLength(), content)
        n_codes = _length(model.OperatorCodesLength(), content)
        n_subgraphs = _length(model.SubgraphsLength(), content)
        if n_subgraphs == 0:
            raise _Corrupt("no subgraphs")
        for s in range(n_subgraphs):
            _check_subgraph(model.Subgraphs(s), content, n_buffers, n_codes, path)
    except _Corrupt as exc:  # edgepipe's own bounds checks
        raise ModelLoadError(f"corrupt TFLite flatbuffer ({exc})", path=path, fix=_FIX) from None
    except (struct.error, IndexError, ValueError, TypeError, AttributeError, OverflowError) as exc:
        if not raised_by(exc, ("flatbuffers", "ai_edge_litert")):  # the generated reader's own rejection only
            raise
        error = ModelLoadError(f"corrupt TFLite flatbuffer ({str(exc) or type(exc).__name__})", path=path, fix=_FIX)
        error.rejected_by = "flatbuffers"  # type: ignore[attr-defined]
        raise error from exc


def check_allocates(content: bytes, path: Path) -> None:
    """The build runs the model in LiteRT: one whose tensors it cannot prepare is the model's fault."""
    from ai_edge_litert.interpreter import Interpreter

    try:
        Interpreter(model_content=content).allocate_tensors()
    except (RuntimeError, ValueError) as exc:
        if not raised_by(exc, ("ai_edge_litert",)):
            raise
        reason = " ".join(str(exc).split())[:300] or type(exc).__name__
        custom = re.findall(r"unresolved custom op: (\w+)", reason)
        fix = _FIX if not custom else (
            f"LiteRT has no kernel for the custom op {', '.join(custom)} (the framework that wrote the model "
            "registers it, e.g. MediaPipe): give edgepipe the model without it (export the graph up to the op), "
            "or its source model (.onnx, .keras, SavedModel); the file itself is complete")
        error = ModelLoadError(f"LiteRT cannot prepare the model ({reason})", path=path, fix=fix)
        error.rejected_by = "LiteRT"  # type: ignore[attr-defined]
        raise error from exc
