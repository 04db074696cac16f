"""What several ladder steps do: quantize every format with its recipe into the step's folder."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from edgepipe.artifacts import Artifact
from edgepipe.containment import ORT_QUANTIZER, contained
from edgepipe.errors import ToolFailed
from edgepipe.quantize.ladder_context import SUFFIX, Fidelity, LadderContext, StepResult
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import CandidateScore, StepOutcome


def artifact_of(fmt: str, path: Path, recipe: QuantRecipe) -> Artifact:
    """The artifact record of a quantized file: ``mixed`` when some layers (or all activations) stay above int8."""
    wide = recipe.is_mixed or recipe.activation_bits != 8
    return Artifact(path, fmt, "mixed" if wide else "int8")  # type: ignore[arg-type]


def quantize_all(context: LadderContext, step: str, recipes: dict[str, QuantRecipe]) -> dict[str, Artifact]:
    """One quantized artifact per format, each with its recipe, in ``<work>/<step>/``."""
    folder = context.folder(step)
    return {fmt: artifact_of(fmt, context.quantize(fmt, recipe, folder / f"model_int8{SUFFIX[fmt]}"), recipe)
            for fmt, recipe in recipes.items()}


def kept_onnx(context: LadderContext, step: str, outcome: StepOutcome, onnx: Artifact, note: str) -> StepResult:
    """A step that makes only an ONNX candidate, kept: that artifact beside each other format's best setting so far
    (quantized into the step's folder); the note says where the TFLite artifact comes from."""
    others = {f: context.best_recipe.get(f, context.settings.start) for f in context.formats if f != "onnx"}
    outcome.recipe.update({f: r.label for f, r in others.items()})
    outcome.note = note + ("; TFLite: step (b)'s artifact (the converter quantizes the framework's graph)" if others
                           else "")
    return StepResult(outcome, {"onnx": onnx, **quantize_all(context, step, others)})


def try_float_rewrite(context: LadderContext, outcome: StepOutcome, rewrite: Path, made: str,
                      summary: str) -> StepResult:
    """Quantize ``rewrite`` (a rewrite of the float ONNX that keeps its function up to what it corrects; ``made``:
    what made it, e.g. "equalized") with the setting chosen so far, score it beside that setting on the float model,
    and keep it (later steps then quantize it too) only when it ranks above. ``summary`` leads every note."""
    recipe = context.best_recipe.get("onnx", context.settings.start)
    folder = context.folder(outcome.step)
    try:
        with contained(ORT_QUANTIZER):
            before = context.candidate_fidelity("onnx", context.quantize("onnx", recipe, folder / "before.onnx"))
            path = context.quantize("onnx", recipe, folder / "model_int8.onnx", source=rewrite)
    except ToolFailed as failure:
        outcome.note = f"{summary}; {failure.tool} failed on it: {failure.message}"
        return StepResult(outcome)
    after = context.candidate_fidelity("onnx", path)
    outcome.candidates = [onnx_candidate(recipe.label, before), onnx_candidate(f"{made}, {recipe.label}", after)]
    outcome.recipe = {"onnx": f"{made}, {recipe.label}"}
    if not context.better("onnx", after, before):
        outcome.status = "missed"
        outcome.note = (f"{summary}; not kept: it does not rank above {recipe.label} on the "
                        f"{context.describe_decisions()} ({fidelity_change(before, after)})")
        return StepResult(outcome)
    context.rebase("onnx", rewrite)
    return kept_onnx(context, outcome.step, outcome, artifact_of("onnx", path, recipe),
                     f"{summary}; kept on the {context.describe_decisions()} ({fidelity_change(before, after)}); "
                     f"later steps quantize the {made} float model")


def onnx_candidate(recipe: str, score: Fidelity) -> CandidateScore:
    """An ONNX candidate's line in a step's trail: its recipe (or method) and its selection-split figures."""
    return CandidateScore(format="onnx", recipe=recipe, selection_accuracy=score.accuracy,
                          flips_points=score.flips_points, sqnr_db=score.sqnr_db, min_cosine=score.cosine)


def fidelity_change(before: Fidelity, after: Fidelity) -> str:
    """How a candidate's selection-split figures compare with the ones it would replace, for the trail."""
    flips = (f"top-1 changes {before.flips_points:.2f} -> {after.flips_points:.2f} points, "
             if before.flips_points is not None and after.flips_points is not None else "")
    return (f"{flips}cosine {before.cosine:.4f} -> {after.cosine:.4f}, "
            f"SQNR {before.sqnr_db:.1f} -> {after.sqnr_db:.1f} dB")


Made = TypeVar("Made")


def either_granularity(quantize: Callable[[QuantRecipe], Made], start: QuantRecipe,
                       allowed: Iterable[str]) -> tuple[Made, QuantRecipe, str]:
    """``quantize(start)``; where the quantizer fails on ``start``'s weight granularity (ONNX Runtime's per-channel
    scales of a grouped or transposed convolution that do not match its bias) and the other one is ``allowed``,
    ``quantize`` with the other one. Returns what ``quantize`` made, the recipe used and a note saying why (empty
    when ``start`` worked); a failure at both granularities is the first failure, raised as it was. ``quantize``
    raises :class:`ToolFailed` for the quantizer's own failures (run it under ``contained``)."""
    try:
        return quantize(start), start, ""
    except ToolFailed as failure:
        other = dataclasses.replace(start, per_channel=not start.per_channel)
        if other.granularity not in allowed:
            raise
        try:
            path = quantize(other)
        except ToolFailed:
            raise failure from None
        return path, other, (f"{start.granularity} failed ({failure.tool}: {failure.message}); "
                             f"quantized {other.granularity}")
