"""Stage: quantization — the fallback ladder (PTQ → better calibration → mixed precision → QAT).

With labelled evaluation data the ladder runs (:mod:`edgepipe.quantize.ladder`)
and stops at the first step whose accuracy drop is within the threshold; its
decision trail goes into the report. Without labels there is nothing to gate,
so only step (a), plain PTQ, runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.quantize.recipe import DEFAULT_RECIPE, QuantRecipe
from edgepipe.quantize.report import QuantizationReport
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def _plain_ptq(inputs: BuildInputs, floats: list[Artifact], graph: Any, folder: Path, scratch: Path,
               recipe: QuantRecipe) -> list[Artifact]:
    assert inputs.calibration is not None
    quantized: list[Artifact] = []
    for artifact in floats:
        if artifact.format == "onnx":
            from edgepipe.quantize.onnx_qdq import quantize_onnx

            path = quantize_onnx(artifact.path, folder / "model_int8.onnx", inputs.calibration, recipe, scratch)
            quantized.append(Artifact(path, "onnx", "int8"))
        elif graph is not None:
            from edgepipe.quantize.tflite_int8 import quantize_tflite

            path = quantize_tflite(graph, folder / "model_int8.tflite", inputs.calibration, recipe)
            quantized.append(Artifact(path, "tflite", "int8"))
    return quantized


def _ladder(inputs: BuildInputs, floats: list[Artifact], graph: Any, folder: Path, scratch: Path,
            config: Any) -> tuple[list[Artifact], QuantizationReport]:
    from edgepipe.quantize.ladder import LadderContext, run_ladder
    from edgepipe.quantize.settings import ladder_settings, optional_split

    assert inputs.calibration is not None and inputs.evaluation is not None
    context = LadderContext(
        model=inputs.model, graph=graph, floats={a.format: a.path for a in floats if a.precision == "fp32"},
        calibration=inputs.calibration, selection=optional_split(config, inputs, "selection"),
        evaluation=inputs.evaluation, train=optional_split(config, inputs, "train"),
        threshold=config.accuracy.max_drop_points, settings=ladder_settings(config, inputs.targets),
        work=scratch / "ladder")
    kept, report = run_ladder(context)
    artifacts = []
    for artifact in kept:  # the kept step's files, under the names every build uses
        path = Path(shutil.copyfile(artifact.path, folder / f"model_int8{artifact.path.suffix}"))
        artifacts.append(Artifact(path, artifact.format, artifact.precision))
    return artifacts, report


def quantize_stage(inputs: BuildInputs, floats: list[Artifact], graph: object, folder: Path, scratch: Path,
                   stages: StageLog, config: Any = None) -> tuple[list[Artifact], QuantizationReport | None]:
    """Quantized ONNX (QDQ) and TFLite from the float artifacts, and the ladder's report when it ran."""
    if inputs.calibration is None:
        stages.skip("quantize", "no calibration data (give --calib or data.calibration)")
        return [], None
    quantized: list[Artifact] = []
    report = None
    gated = (config is not None and inputs.evaluation is not None and inputs.evaluation.labels is not None
             and inputs.model.format in ("keras", "savedmodel", "onnx", "pytorch"))
    if gated:
        with stages.stage("quantize", f"fallback ladder on {len(inputs.calibration)} calibration samples"):
            quantized, report = _ladder(inputs, floats, graph, folder, scratch, config)
    else:
        from edgepipe.quantize.settings import start_recipe

        recipe = start_recipe(config) if config is not None else DEFAULT_RECIPE
        with stages.stage("quantize", f"PTQ {recipe.label} on {len(inputs.calibration)} calibration samples"):
            quantized = _plain_ptq(inputs, floats, graph, folder, scratch, recipe)
    if graph is None:  # float TFLite without a TF graph (a .tflite input, or onnx2tf's output): ai-edge-quantizer
        from edgepipe.stages.quantize_tflite import quantize_graphless_tflite

        quantized += quantize_graphless_tflite(inputs, floats, folder, scratch, stages)
    return quantized, report
