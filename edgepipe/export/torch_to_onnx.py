"""Float (or QDQ) ONNX from a ``torch.export`` program through PyTorch's own exporter (``dynamo=True``).

The one adapter for ``torch.onnx.export``: opset :data:`OPSET` (the dynamo exporter's
lowest well-supported opset, with QuantizeLinear/DequantizeLinear per axis), batch-1 static
shapes like every edgepipe artifact, so no ``dynamic_axes`` (the legacy option the
dynamo exporter only half-converts into ``dynamic_shapes``). Whatever the exporter raises
(``torch.onnx.OnnxExporterError`` and its subclasses: an op it cannot translate, a graph
it cannot build) becomes a :class:`TorchOnnxExportError` with the exporter's message and
the next step, which the export stage reports instead of crashing the build.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from edgepipe.native_logs import native_stderr_to_log

log = logging.getLogger(__name__)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: ONNX opset the exporter targets (>= 18: Resize/Reduce* as the TFLite path expects, per-axis QDQ).
OPSET = 18
NEXT_STEP = ("Next: run torch.onnx.export(program, dynamo=True, report=True) yourself to see the failing op; "
             "an op the exporter lacks can be registered with torch.onnx's custom_translation_table")


class TorchOnnxExportError(Exception):
    """``torch.onnx.export`` failed; the message is the exporter's first line and the next step."""


def _reason(exc: BaseException) -> str:
    """The exporter's own words: the first line of the innermost cause (its top message is a generic banner)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    lines = [_ANSI.sub("", line).strip() for line in str(exc).splitlines()]
    return next((line for line in lines if line), type(exc).__name__).rstrip(".")


def export_program_to_onnx(program: Any, out: Path) -> Path:
    """Write the ``torch.export.ExportedProgram`` (or a module taking the program's inputs) to ``out`` (ONNX)."""
    import torch  # heavy optional dependency

    try:
        with native_stderr_to_log():
            onnx_program = torch.onnx.export(program, (), dynamo=True, opset_version=OPSET, verbose=False,
                                             optimize=True, external_data=False)
    except torch.onnx.OnnxExporterError as exc:
        raise TorchOnnxExportError(f"torch.onnx.export (dynamo) failed: {_reason(exc)}. {NEXT_STEP}") from None
    if onnx_program is None:
        raise TorchOnnxExportError(f"torch.onnx.export (dynamo) returned no program. {NEXT_STEP}")
    onnx_program.save(str(out))
    log.info("exported %s with torch.onnx (dynamo, opset %d)", out.name, OPSET)
    return out
