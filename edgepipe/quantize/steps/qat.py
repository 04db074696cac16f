"""(f) QAT of a Keras model: fine-tune with fake quantization on the training split, then convert."""

from __future__ import annotations

from dataclasses import replace

from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.qat_export import run_qat
from edgepipe.quantize.qat_torch_step import torch_qat_step
from edgepipe.quantize.report import StepOutcome


def qat_step(context: LadderContext) -> StepResult:
    """(f) QAT: fine-tune the float Keras model with fake quantization on the training split, then convert.

    PyTorch inputs (and ONNX/TFLite ones, which say why they cannot be trained) go through PyTorch's pt2e QAT.
    """
    if context.model.format in ("pytorch", "onnx", "tflite"):
        return torch_qat_step(context)
    outcome = StepOutcome(step="qat", title="quantization-aware training", status="skipped")
    if not context.model.is_trainable:
        outcome.note = f"QAT needs a Keras model; the input is {context.model.format.upper()}, which cannot be trained"
        return StepResult(outcome)
    if context.train is None or context.train.labels is None:
        outcome.note = "no labelled training split (data.train): QAT cannot fine-tune"
        return StepResult(outcome)
    per_channel = "per-channel" in context.settings.granularities
    recipe = replace(context.settings.start, per_channel=per_channel)
    artifacts = run_qat(context, recipe, context.folder("qat"))
    outcome.recipe = {f: f"qat/{recipe.granularity}/int8" for f in artifacts}
    outcome.note = (f"{context.settings.qat_epochs} epochs on {len(context.train)} training samples, "
                    f"Adam lr {context.settings.qat_learning_rate:g}")
    return StepResult(outcome, artifacts)
