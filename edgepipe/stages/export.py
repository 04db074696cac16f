"""Stage: export the source model to float ONNX and float TFLite (batch 1)."""

from __future__ import annotations

import shutil
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def export_stage(inputs: BuildInputs, folder: Path, scratch: Path, stages: StageLog) -> tuple[list[Artifact], object]:
    """Float ONNX and float TFLite of the source model (or the source itself when it already is one)."""
    model = inputs.model
    if model.format in ("keras", "savedmodel"):
        from edgepipe.export.tf_function import build_tf_graph
        from edgepipe.export.to_onnx import export_onnx
        from edgepipe.export.to_tflite import export_tflite

        with stages.stage("export", "float ONNX (tf2onnx) and float TFLite (TFLite converter), batch 1"):
            graph = build_tf_graph(model, scratch)
            artifacts = [Artifact(export_onnx(graph, folder / "model.onnx"), "onnx", "fp32"),
                         Artifact(export_tflite(graph, folder / "model.tflite"), "tflite", "fp32")]
        return artifacts, graph
    suffix = "onnx" if model.format == "onnx" else "tflite"
    other = "TFLite" if suffix == "onnx" else "ONNX"
    stages.skip("export", f"input is already {suffix.upper()}; {other} conversion is not available for it yet")
    return [Artifact(Path(shutil.copyfile(model.path, folder / f"model.{suffix}")), suffix, "fp32")], None
