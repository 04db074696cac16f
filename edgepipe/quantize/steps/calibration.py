"""(b) PTQ with better calibration: every allowed method and granularity, the best chosen on the selection split."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from edgepipe.containment import ORT_QUANTIZER, TFLITE_CONVERTER, contained
from edgepipe.errors import ToolFailed
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


def _rounds(context: LadderContext, fmt: str) -> tuple[list[QuantRecipe],
                                                     Callable[[QuantRecipe | None], list[QuantRecipe]]]:
    """Two rounds over :func:`candidates`: every method at the start granularity (asymmetric activations),
    then the other granularity / symmetry settings of the best method only (of every method when the quantizer
    failed on the whole first round, e.g. on every per-channel setting).

    Each calibration method costs a full calibration pass (histograms for percentile and entropy),
    the other settings only a rewrite from the cached ranges: this tries every method and every
    setting, but not every product of them (6 of 12 tries, 4 of 6 calibration passes by default).
    """
    every = candidates(context, fmt)
    start = context.settings.start.per_channel
    first = [r for r in every if r.per_channel == start and not r.symmetric_activations] or every[:1]
    return first, lambda best: [r for r in every if r not in first and (best is None or r.method == best.method)]


def _best(context: LadderContext, fmt: str, recipes: list[QuantRecipe], outcome: StepOutcome,
          best: tuple[Fidelity, QuantRecipe] | None, failed: list[str]) -> tuple[Fidelity, QuantRecipe] | None:
    """Score ``recipes`` on the selection split (each recorded as a candidate); the best of them and ``best``.

    A setting the quantizer fails on is appended to ``failed`` (one line: setting, tool, message) and skipped;
    the settings left when the ladder's time budget is spent are not tried.
    """
    folder = context.folder("calibration")
    for index, recipe in enumerate(recipes):
        if context.out_of_time(f"calibration: {len(recipes) - index} {fmt} settings not tried, from {recipe.label}"):
            break
        out = folder / f"candidate_{len(outcome.candidates) + len(failed)}{SUFFIX[fmt]}"
        try:  # one calibrator the quantizer cannot run (e.g. a histogram over a degenerate range) costs one candidate
            with contained(ORT_QUANTIZER if fmt == "onnx" else TFLITE_CONVERTER):
                path = context.quantize(fmt, recipe, out)
        except ToolFailed as failure:
            failed.append(f"{fmt} {recipe.label}: {failure.tool} failed: {failure.message}")
            continue
        score = context.candidate_fidelity(fmt, path)
        outcome.candidates.append(CandidateScore(format=fmt, recipe=recipe.label,  # type: ignore[arg-type]
                                                 selection_accuracy=score.accuracy, flips_points=score.flips_points,
                                                 sqnr_db=score.sqnr_db, min_cosine=score.cosine))
        if context.better(fmt, score, best[0] if best else None):
            best = (score, recipe)
    return best


def calibration_step(context: LadderContext) -> StepResult:
    """(b) Every allowed calibration method, then granularity × activation symmetry of the best one; the best
    on the selection split."""
    outcome = StepOutcome(step="calibration", title="PTQ, best calibration on the selection split", status="skipped")
    chosen: dict[str, QuantRecipe] = {}
    failed: list[str] = []
    for fmt in context.formats:
        first, then = _rounds(context, fmt)
        best = _best(context, fmt, first, outcome, None, failed)
        best = _best(context, fmt, then(best[1] if best else None), outcome, best, failed)
        chosen[fmt] = best[1] if best else context.best_recipe.get(fmt, context.settings.start)
    context.best_recipe = chosen
    outcome.recipe = {f: r.label for f, r in chosen.items()}
    outcome.note = (f"{len(outcome.candidates)} settings scored on the {context.describe_decisions()} (every method, "
                    "then the other granularities and activation symmetries of the best method)"
                    + ("; left out, the quantizer failed: " + "; ".join(failed) if failed else ""))
    return StepResult(outcome, quantize_all(context, "calibration", chosen))
