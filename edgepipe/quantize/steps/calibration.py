"""(b) PTQ with better calibration: every allowed method and granularity, the best chosen on the selection split."""

from __future__ import annotations

import itertools

from edgepipe.quantize.ladder_context import SUFFIX, Fidelity, LadderContext, StepResult
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import CandidateScore, StepOutcome
from edgepipe.quantize.steps.common import quantize_all


def candidates(context: LadderContext, fmt: str) -> list[QuantRecipe]:
    """PTQ settings step (b) may try for ``fmt``; the TFLite converter calibrates with min/max only."""
    settings = context.settings
    methods = settings.methods if fmt == "onnx" else ("minmax",)
    symmetric = (False, True) if fmt == "onnx" else (False,)
    return [QuantRecipe(method=m, per_channel=g == "per-channel", symmetric_activations=s)
            for m, g, s in itertools.product(methods, settings.granularities, symmetric)]


def calibration_step(context: LadderContext) -> StepResult:
    """(b) Every allowed calibration method × granularity × activation symmetry; the best on the selection split."""
    outcome = StepOutcome(step="calibration", title="PTQ, best calibration on the selection split", status="skipped")
    folder = context.folder("calibration")
    chosen: dict[str, QuantRecipe] = {}
    for fmt in context.formats:
        best: tuple[Fidelity, QuantRecipe] | None = None
        for i, recipe in enumerate(candidates(context, fmt)):
            score = context.fidelity(fmt, context.quantize(fmt, recipe, folder / f"candidate_{i}{SUFFIX[fmt]}"))
            outcome.candidates.append(CandidateScore(format=fmt, recipe=recipe.label,  # type: ignore[arg-type]
                                                     selection_accuracy=score.accuracy,
                                                     flips_points=score.flips_points, sqnr_db=score.sqnr_db,
                                                     min_cosine=score.cosine))
            if best is None or score.better_than(best[0]):
                best = (score, recipe)
        assert best is not None
        chosen[fmt] = best[1]
    context.best_recipe = chosen
    outcome.recipe = {f: r.label for f, r in chosen.items()}
    outcome.note = f"{len(outcome.candidates)} settings scored on the {context.describe_decisions()}"
    return StepResult(outcome, quantize_all(context, "calibration", chosen))
