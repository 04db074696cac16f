"""Stage: post-training int8 quantization of the float artifacts."""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.recipe import DEFAULT_RECIPE
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def quantize_stage(inputs: BuildInputs, floats: list[Artifact], graph: object, folder: Path, scratch: Path,
                   stages: StageLog) -> list[Artifact]:
    """Int8 ONNX (QDQ) and int8 TFLite from the float artifacts, calibrated on the calibration split."""
    if inputs.calibration is None:
        stages.skip("quantize", "no calibration data (give --calib or data.calibration)")
        return []
    quantized: list[Artifact] = []
    with stages.stage("quantize", f"PTQ {DEFAULT_RECIPE.label} on {len(inputs.calibration)} calibration samples"):
        for artifact in floats:
            if artifact.format == "onnx":
                from edgepipe.quantize.onnx_qdq import quantize_onnx

                path = quantize_onnx(artifact.path, folder / "model_int8.onnx", inputs.calibration,
                                     DEFAULT_RECIPE, scratch)
                quantized.append(Artifact(path, "onnx", "int8"))
            elif graph is not None:
                from edgepipe.quantize.tflite_int8 import quantize_tflite

                path = quantize_tflite(graph, folder / "model_int8.tflite", inputs.calibration, DEFAULT_RECIPE)
                quantized.append(Artifact(path, "tflite", "int8"))
    if graph is None and any(a.format == "tflite" for a in floats):
        stages.skip("quantize-tflite",
                    "float TFLite input: int8 conversion without the source graph is not available yet")
    return quantized
