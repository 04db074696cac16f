"""Export, PyTorch input: float ONNX through ``torch.onnx`` (dynamo), then on along the ONNX input's path.

The exported ONNX is loaded like a user's ONNX file (shapes checked, batch size 1), so
TFLite comes from onnx2tf exactly as for an ONNX input. An exporter failure is a
skipped export stage that quotes the exporter and says what to try next; the build
goes on without artifacts rather than crashing.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from edgepipe.export.torch_to_onnx import TorchOnnxExportError, export_program_to_onnx
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

log = logging.getLogger(__name__)


def as_onnx_input(inputs: BuildInputs, folder: Path, stages: StageLog) -> BuildInputs | None:
    """``inputs`` with the PyTorch model replaced by its ONNX export (``folder/model.onnx``); None if it failed."""
    from edgepipe.load import onnx_loader

    path = folder / "model.onnx"
    try:
        with stages.stage("export", "float ONNX through torch.onnx.export (dynamo), batch size 1"):
            export_program_to_onnx(inputs.model.handle.program, path)
    except TorchOnnxExportError as exc:
        log.warning("%s: %s", inputs.model.name, exc)
        path.unlink(missing_ok=True)
        stages.skip("export", f"input is PyTorch; {exc}")
        return None
    handle, signature = onnx_loader.load(path, None)
    onnx_model = dataclasses.replace(inputs.model, format="onnx", handle=handle, signature=signature)
    return dataclasses.replace(inputs, model=onnx_model)
