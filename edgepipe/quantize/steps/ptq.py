"""(a) PTQ with the default settings."""

from __future__ import annotations

from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.report import StepOutcome
from edgepipe.quantize.steps.common import quantize_all


def ptq_step(context: LadderContext) -> StepResult:
    """(a) PTQ with the default settings: minmax calibration, int8, the configured weight granularity."""
    recipe = context.settings.start
    context.best_recipe = {fmt: recipe for fmt in context.formats}
    artifacts = quantize_all(context, "ptq", context.best_recipe)
    return StepResult(StepOutcome(step="ptq", title="PTQ, default settings", status="missed",
                                  recipe={f: recipe.label for f in artifacts}), artifacts)
