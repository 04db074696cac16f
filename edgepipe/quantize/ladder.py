"""The fallback ladder: PTQ, better calibration, mixed precision, QAT — stopping at the first that holds.

:func:`run_ladder` is the driver: it walks :data:`~edgepipe.quantize.steps.LADDER_STEPS`
in order, scores each step's artifacts on the **selection split** and stops at the
first one that holds there — a top-1 drop within the threshold when that split has
labels, every label-free threshold (cosine, SQNR, …) of every output when it has not
(:mod:`edgepipe.quantize.ladder_context`). The evaluation split takes no part in any
decision; with labels, each step's evaluation accuracy is recorded for the report.
Every step's outcome, and why it ran, goes into the
:class:`~edgepipe.quantize.report.QuantizationReport`.
"""

from __future__ import annotations

import logging

from edgepipe.artifacts import Artifact
from edgepipe.metrics.accuracy import evaluate_top1
from edgepipe.quantize.ladder_context import Fidelity, LadderContext, LadderSettings, StepResult, selection_rank
from edgepipe.quantize.report import QuantizationReport, StepOutcome, worst_layers
from edgepipe.quantize.sensitivity import measure_sensitivity
from edgepipe.quantize.steps import LADDER_STEPS

log = logging.getLogger(__name__)

__all__ = ["Fidelity", "LadderContext", "LadderSettings", "StepResult", "run_ladder", "score"]


def score(context: LadderContext, result: StepResult) -> StepResult:
    """Score ``result``'s artifacts on the selection split: status ``met`` when every format holds there.

    With a labelled evaluation split, the evaluation accuracy and drop are recorded too (never decided on).
    """
    outcome = result.outcome
    for fmt, artifact in result.artifacts.items():
        outcome.selection[fmt] = context.selection_score(fmt, context.fidelity(fmt, artifact.path))
        outcome.size_bytes[fmt] = artifact.size_bytes
        if context.evaluation is not None and context.evaluation.labels is not None and fmt in context.float_accuracy:
            accuracy = evaluate_top1(artifact.path, context.evaluation)
            outcome.accuracy[fmt] = round(accuracy, 6)
            outcome.drop_points[fmt] = round(100 * (context.float_accuracy[fmt] - accuracy), 4)
    held = bool(outcome.selection) and all(s.met for s in outcome.selection.values())
    outcome.status = "met" if held else "missed"
    for fmt, artifact in result.artifacts.items():
        if outcome.selection[fmt].met and artifact.precision == "int8":
            context.held.setdefault(fmt, (outcome.step, artifact))
    return result


def _shortfall(result: StepResult) -> str:
    """Why the next step runs: what ``result`` missed on the selection split."""
    parts = []
    for fmt, sel in result.outcome.selection.items():
        if sel.met:
            continue
        if sel.flips_points is not None:
            parts.append(f"{fmt} top-1 changed on {sel.flips_points:.2f} points of the samples (drop "
                         f"{sel.drop_points:+.2f})")
        else:
            parts.append(f"{fmt} " + (sel.failures[0] if sel.failures else f"cosine {sel.min_cosine:.4f}"))
    return f"{result.outcome.step} missed on the selection split: " + "; ".join(parts)


def kept_step(results: list[StepResult]) -> StepResult | None:
    """The step whose artifacts are kept: the first that held on the selection split, else the best there by
    :func:`~edgepipe.quantize.ladder_context.selection_rank` (the earlier step on a tie)."""
    tried = [r for r in results if r.artifacts]
    met = [r for r in tried if r.outcome.status == "met"]
    if met:
        return met[0]
    return min(tried, key=lambda r: selection_rank(r.outcome.selection.values()), default=None)


def _still_sensitive(context: LadderContext, count: int = 5) -> list[str]:
    return [f"{row.format}:{row.layer}" for row in worst_layers(context.sensitivity, count)]


def _compile_mixed(context: LadderContext, result: StepResult, int8: dict[str, Artifact]) -> None:
    """A step's mixed-precision artifacts through the vendor compilers that must take them, beside the plain int8
    artifacts ``int8`` (:mod:`~edgepipe.quantize.vendor_check`); a step with one refused is not kept."""
    if context.vendor_check is None:
        return
    refused = False
    for fmt, artifact in result.artifacts.items():
        if artifact.precision != "mixed":
            continue
        for compiled in context.vendor_check(artifact, int8.get(fmt)):
            result.outcome.vendor_compile.append(compiled.line(artifact))
            refused = refused or compiled.refused
    if refused:
        result.outcome.status = "missed"
        result.outcome.note = "; ".join(filter(None, [result.outcome.note, "not kept: the vendor compiler refused "
                                                      "its mixed-precision model (vendor_compile)"]))
        result.artifacts.clear()


def _not_run(context: LadderContext, name: str) -> StepResult:
    """The outcome of a step the time budget left no room for."""
    context.out_of_time(f"step {name} not run")
    return StepResult(StepOutcome(step=name, title=name, status="skipped", note=context.unfinished[-1]))


def run_ladder(context: LadderContext) -> tuple[list[Artifact], QuantizationReport]:
    """Walk the ladder within its time budget; returns the kept quantized artifacts and the decision trail.

    When the budget (``quantization.time_budget_s``) is spent, the steps left are not run and the best attempt
    so far is kept; the report lists what was left undone.
    """
    context.start_clock()
    if context.evaluation is not None and context.evaluation.labels is not None:
        context.float_accuracy = {f: evaluate_top1(p, context.evaluation) for f, p in context.floats.items()
                                  if f in context.formats}
    results: list[StepResult] = []
    why = "first step"
    for name, step in LADDER_STEPS:
        if name not in context.settings.steps:
            continue
        if results and context.out_of_time():
            results.append(_not_run(context, name))
            continue
        start = context.clock()
        result = step(context)
        result.outcome.why = why
        if result.artifacts:
            result = score(context, result)
            why = _shortfall(result)
            _compile_mixed(context, result, results[0].artifacts if results else {})
        result.outcome.seconds = round(context.clock() - start, 3)
        log.info("ladder step %s: %s (%s)", name, result.outcome.status, result.outcome.why)
        results.append(result)
        if result.outcome.status == "met":
            break
    final = kept_step(results)
    met = final is not None and final.outcome.status == "met"
    wanted = not context.sensitivity and (not met or context.settings.sensitivity == "always")
    if wanted and not context.out_of_time("per-layer sensitivity not measured"):
        measure_sensitivity(context)
    report = QuantizationReport(
        threshold_points=context.threshold, metric="top1" if context.labelled else "label_free",
        decided_on=context.describe_decisions(), preparation=list(context.preparation), met=met,
        final_step=final.outcome.step if final else None, allowed_precisions=list(context.settings.precisions),
        steps=[r.outcome for r in results], sensitivity_recipe=context.sensitivity_recipe,
        sensitivity=context.sensitivity, still_sensitive=[] if met else _still_sensitive(context),
        time_budget_s=context.settings.time_budget_s, seconds=round(context.seconds_used, 3),
        unfinished=list(context.unfinished))
    return (list(final.artifacts.values()) if final else []), report
