"""(a) PTQ with the default settings."""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.containment import ORT_QUANTIZER, TFLITE_CONVERTER, contained
from edgepipe.quantize.ladder_context import SUFFIX, LadderContext, StepResult
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import StepOutcome
from edgepipe.quantize.steps.common import artifact_of, either_granularity


def ptq_step(context: LadderContext) -> StepResult:
    """(a) PTQ with the default settings: minmax calibration, int8, the configured weight granularity, or the
    other allowed one where the quantizer fails on it (the step's note says why)."""
    folder = context.folder("ptq")
    artifacts: dict[str, Artifact] = {}
    recipes: dict[str, QuantRecipe] = {}
    notes: list[str] = []
    for fmt in context.formats:
        def quantize(recipe: QuantRecipe, fmt: str = fmt) -> Path:
            with contained(ORT_QUANTIZER if fmt == "onnx" else TFLITE_CONVERTER):
                return context.quantize(fmt, recipe, folder / f"model_int8{SUFFIX[fmt]}")

        path, recipes[fmt], note = either_granularity(quantize, context.settings.start, context.settings.granularities)
        artifacts[fmt] = artifact_of(fmt, path, recipes[fmt])
        notes += [f"{fmt}: {note}"] if note else []
    context.best_recipe = recipes
    return StepResult(StepOutcome(step="ptq", title="PTQ, default settings", status="missed",
                                  recipe={f: r.label for f, r in recipes.items()}, note="; ".join(notes)),
                      artifacts)
