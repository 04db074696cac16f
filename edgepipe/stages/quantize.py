"""Stage: quantization — the fallback ladder (PTQ → better calibration → mixed precision → QAT).

With evaluation data the ladder runs (:mod:`edgepipe.quantize.ladder`) and stops
at the first step that holds on the selection split: a top-1 drop within the
threshold when that split has labels, label-free fidelity of every output
(``[accuracy]`` min_cosine, …) when it has not. Its decision trail goes into the
report. Without evaluation data only step (a), plain PTQ, runs.

Containment: a quantizer failure (ONNX Runtime's quantizer, the TFLite converter) or an
int8 artifact its runtime refuses is recorded as a failed stage with the tool's message and
a next step (:mod:`edgepipe.containment`); the other format is still quantized. When
the ladder itself fails, plain PTQ runs per format instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.containment import ORT_QUANTIZER, TFLITE_CONVERTER, contained, loadable
from edgepipe.errors import ToolFailed
from edgepipe.metrics.label_free import Thresholds
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import DEFAULT_RECIPE, QuantRecipe
from edgepipe.quantize.report import QuantizationReport
from edgepipe.quantize.settings import ladder_settings
from edgepipe.quantize.vendor_check import VendorCheck
from edgepipe.stage_log import StageLog
from edgepipe.stages.evaluate import thresholds_of
from edgepipe.stages.inputs import BuildInputs

STAGE = "quantize"


def _quantize_one(artifact: Artifact, graph: Any, folder: Path, scratch: Path, calibration: Any,
                  recipe: QuantRecipe, memo: QuantizationMemo) -> Artifact | None:
    """The int8 twin of one float artifact (None when there is no quantizer for it), inside its tool's boundary."""
    if artifact.format == "onnx":
        from edgepipe.quantize.onnx_qdq import quantize_onnx

        with contained(ORT_QUANTIZER):
            path = quantize_onnx(artifact.path, folder / "model_int8.onnx", calibration, recipe, scratch, memo=memo)
        return Artifact(path, "onnx", "int8")
    if graph is not None:
        from edgepipe.quantize.tflite_int8 import quantize_tflite

        with contained(TFLITE_CONVERTER):
            path = quantize_tflite(graph, folder / "model_int8.tflite", calibration, recipe, memo=memo)
        return Artifact(path, "tflite", "int8")
    return None


def _plain_ptq(inputs: BuildInputs, floats: list[Artifact], graph: Any, folder: Path, scratch: Path,
               recipe: QuantRecipe, allowed: tuple[str, ...], stages: StageLog) -> tuple[list[Artifact], list[str]]:
    """Step (a) per format, at the other ``allowed`` weight granularity where the quantizer fails on ``recipe``'s
    (with a note saying why); a format whose quantizer still fails is recorded and left out, the others go on."""
    from edgepipe.quantize.steps.common import either_granularity

    assert inputs.calibration is not None
    calibration = inputs.calibration
    quantized: list[Artifact] = []
    notes: list[str] = []
    for artifact in floats:
        if artifact.precision != "fp32":  # a model shipped quantized is not quantized again
            continue

        def quantize(chosen: QuantRecipe, artifact: Artifact = artifact) -> Artifact | None:
            return _quantize_one(artifact, graph, folder, scratch, calibration, chosen, inputs.memo)

        try:
            made, _, note = either_granularity(quantize, recipe, allowed)
        except ToolFailed as failure:
            stages.fail(STAGE, failure, artifact=f"model_int8.{artifact.format}")
            continue
        if made is not None:
            quantized.append(made)
            notes += [f"{artifact.format}: {note}"] if note else []
    return quantized, notes


def _onnx_preparation(floats: list[Artifact], inputs: BuildInputs, scratch: Path) -> list[str]:
    """What :mod:`edgepipe.quantize.onnx_prepare` did to the float ONNX before PTQ (opset upgrade, biases), and why."""
    from edgepipe.quantize.onnx_prepare import prepare_onnx

    assert inputs.calibration is not None
    source = next((a.path for a in floats if a.format == "onnx" and a.precision == "fp32"), None)
    if source is None:
        return []
    # the same file quantize_onnx prepares (scratch/<stem>_prep.onnx), checked on real samples first
    return prepare_onnx(source, scratch / f"{source.stem}_prep.onnx", list(inputs.calibration.samples(4))).notes


def _ladder(inputs: BuildInputs, floats: list[Artifact], graph: Any, folder: Path, scratch: Path,
            config: BuildConfig) -> tuple[list[Artifact], QuantizationReport]:
    from edgepipe.quantize.ladder import LadderContext, run_ladder
    from edgepipe.quantize.settings import ladder_settings, optional_split, prepare_float_onnx
    from edgepipe.stages.evaluate import thresholds_of

    assert inputs.calibration is not None and inputs.evaluation is not None
    labelled = inputs.evaluation.labels is not None
    work = scratch / "ladder"
    work.mkdir(parents=True, exist_ok=True)
    float_paths: dict[str, Path] = {a.format: a.path for a in floats if a.precision == "fp32"}
    settings, preparation = prepare_float_onnx(float_paths, inputs.calibration, ladder_settings(config, inputs.targets),
                                               work)
    context = LadderContext(
        model=inputs.model, graph=graph, floats=float_paths,
        calibration=inputs.calibration, selection=optional_split(config, inputs, "selection", need_labels=labelled),
        evaluation=inputs.evaluation, train=optional_split(config, inputs, "train"),
        threshold=config.accuracy.max_drop_points, settings=settings, work=work,
        thresholds=thresholds_of(config.accuracy), preparation=preparation, memo=inputs.memo,
        task=config.accuracy.task, vendor_check=VendorCheck.of(inputs.targets, work / "vendor"),
        host_kernels=any(t.device_class == "cpu" for t in inputs.targets))
    kept, report = run_ladder(context)
    artifacts = []
    for artifact in kept:  # the kept step's files, under the names every build uses
        path = Path(shutil.copyfile(artifact.path, folder / f"model_int8{artifact.path.suffix}"))
        artifacts.append(Artifact(path, artifact.format, artifact.precision))
    return artifacts, report


def _widen(inputs: BuildInputs, config: BuildConfig | None) -> Thresholds | None:
    """The label-free thresholds under which graphless TFLite may go a16w8 (None: it may not).

    Only in a gated build with evaluation data whose ladder allows mixed precision and int16
    activations, for a group of targets that all run int16 activations.
    """
    if config is None or inputs.evaluation is None or not inputs.accuracy_gate:
        return None
    settings = ladder_settings(config, inputs.targets)
    if "mixed" not in settings.steps or "a16w8" not in settings.precisions:
        return None
    return thresholds_of(config.accuracy)


def quantize_stage(inputs: BuildInputs, floats: list[Artifact], graph: object, folder: Path, scratch: Path,
                   stages: StageLog, config: BuildConfig | None = None
                   ) -> tuple[list[Artifact], QuantizationReport | None]:
    """Quantized ONNX (QDQ) and TFLite from the float artifacts, and the ladder's report when it ran.

    A format whose model was shipped quantized (a QDQ ONNX input: its float reference is among ``floats``) is
    not quantized again. Only artifacts their runtime loads come back; every tool failure is in
    ``stages.failures``.
    """
    if inputs.calibration is None:
        stages.skip(STAGE, "no calibration data (give --calib or data.calibration)")
        return [], None
    shipped = {a.format for a in floats if a.precision != "fp32"}
    floats = [a for a in floats if a.precision == "fp32" and a.format not in shipped]
    if not floats:
        stages.skip(STAGE, "no float artifact to quantize: the input is already quantized")
        return [], None
    quantized: list[Artifact] = []
    report = None
    float_onnx = any(a.format == "onnx" for a in floats)
    gated = config is not None and inputs.evaluation is not None and (graph is not None or float_onnx)
    if gated and config is not None:
        try:
            with stages.stage(STAGE, f"fallback ladder on {len(inputs.calibration)} calibration samples"), \
                    contained(ORT_QUANTIZER), contained(TFLITE_CONVERTER):
                quantized, report = _ladder(inputs, floats, graph, folder, scratch, config)
        except ToolFailed as failure:
            stages.fail(STAGE, failure)
            gated = False  # the ladder broke in a tool: plain PTQ per format, each contained on its own
    if not gated:
        from edgepipe.quantize.ladder_context import LadderSettings
        from edgepipe.quantize.settings import start_recipe

        recipe = start_recipe(config) if config is not None else DEFAULT_RECIPE
        allowed = (ladder_settings(config, inputs.targets) if config is not None else LadderSettings()).granularities
        try:
            with contained(ORT_QUANTIZER):
                notes = _onnx_preparation(floats, inputs, scratch)
        except ToolFailed:  # the ONNX quantization below meets the same failure and records it, with its next step
            notes = []
        detail = f"PTQ {recipe.label} on {len(inputs.calibration)} calibration samples" + "".join(
            f"; {note}" for note in notes)
        with stages.stage(STAGE, detail):
            quantized, fallbacks = _plain_ptq(inputs, floats, graph, folder, scratch, recipe, allowed, stages)
        stages.annotate(STAGE, "; ".join(fallbacks))
    quantized = loadable(quantized, stages, STAGE)
    if graph is None:  # float TFLite without a TF graph (a .tflite input, or onnx2tf's output): ai-edge-quantizer
        from edgepipe.stages.quantize_tflite import quantize_graphless_tflite

        quantized += quantize_graphless_tflite(inputs, floats, folder, scratch, stages, _widen(inputs, config),
                                               VendorCheck.of(inputs.targets, scratch / "vendor"))
    return quantized, report
