"""The rungs of the fallback ladder, in order. Adding one is a function here plus one line in LADDER_STEPS.

Each step takes the :class:`~edgepipe.quantize.ladder.LadderContext` and returns
a :class:`~edgepipe.quantize.ladder.StepResult`; the driver gates it. Choices
inside a step (which calibration, how many layers to keep) are made on the
*selection* split, never on the evaluation split that gates the build.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.ladder import Fidelity, LadderContext, StepResult
from edgepipe.quantize.recipe import LayerPrecision, QuantRecipe
from edgepipe.quantize.report import CandidateScore, KeptLayer, StepName, StepOutcome

_SUFFIX = {"onnx": ".onnx", "tflite": ".tflite"}


def _artifact(fmt: str, path: Path, recipe: QuantRecipe) -> Artifact:
    return Artifact(path, fmt, "mixed" if recipe.is_mixed else "int8")  # type: ignore[arg-type]


def _quantize_all(context: LadderContext, step: str, recipes: dict[str, QuantRecipe]) -> dict[str, Artifact]:
    folder = context.folder(step)
    return {fmt: _artifact(fmt, context.quantize(fmt, recipe, folder / f"model_int8{_SUFFIX[fmt]}"), recipe)
            for fmt, recipe in recipes.items()}


def ptq_step(context: LadderContext) -> StepResult:
    """(a) PTQ with the default settings: minmax calibration, int8, the configured weight granularity."""
    recipe = context.settings.start
    context.best_recipe = {fmt: recipe for fmt in context.formats}
    artifacts = _quantize_all(context, "ptq", context.best_recipe)
    return StepResult(StepOutcome(step="ptq", title="PTQ, default settings", status="missed",
                                  recipe={f: recipe.label for f in artifacts}), artifacts)


def _candidates(context: LadderContext, fmt: str) -> list[QuantRecipe]:
    """PTQ settings step (b) may try for ``fmt``; the TFLite converter calibrates with min/max only."""
    settings = context.settings
    methods = settings.methods if fmt == "onnx" else ("minmax",)
    symmetric = (False, True) if fmt == "onnx" else (False,)
    return [QuantRecipe(method=m, per_channel=g == "per-channel", symmetric_activations=s)
            for m, g, s in itertools.product(methods, settings.granularities, symmetric)]


def calibration_step(context: LadderContext) -> StepResult:
    """(b) PTQ with better calibration: every allowed method and granularity, the best chosen on the selection split."""
    outcome = StepOutcome(step="calibration", title="PTQ, best calibration on the selection split", status="skipped")
    if context.selection is None:
        outcome.note = "no selection split (data.selection): settings cannot be chosen without the evaluation split"
        return StepResult(outcome)
    folder = context.folder("calibration")
    chosen: dict[str, QuantRecipe] = {}
    for fmt in context.formats:
        best: tuple[Fidelity, QuantRecipe] | None = None
        for i, recipe in enumerate(_candidates(context, fmt)):
            score = context.fidelity(fmt, context.quantize(fmt, recipe, folder / f"candidate_{i}{_SUFFIX[fmt]}"))
            outcome.candidates.append(CandidateScore(format=fmt, recipe=recipe.label,
                                                     selection_accuracy=score.accuracy,
                                                     flips_points=score.flips_points, sqnr_db=score.sqnr_db))
            if best is None or score.better_than(best[0]):
                best = (score, recipe)
        assert best is not None
        chosen[fmt] = best[1]
    context.best_recipe = chosen
    outcome.recipe = {f: r.label for f, r in chosen.items()}
    outcome.note = f"{len(outcome.candidates)} settings scored on {len(context.selection)} selection samples"
    return StepResult(outcome, _quantize_all(context, "calibration", chosen))


def _higher_precisions(context: LadderContext, fmt: str) -> tuple[LayerPrecision, ...]:
    """What mixed precision may keep a layer in, cheapest first: int16 activations (ONNX), then float."""
    offered: tuple[LayerPrecision, ...] = ("a16w8", "float") if fmt == "onnx" else ("float",)
    return tuple(p for p in offered if p in context.settings.precisions)


def _greedy(context: LadderContext, fmt: str, precisions: tuple[LayerPrecision, ...]) -> tuple[QuantRecipe, int]:
    """Raise the most sensitive layers of ``fmt`` one at a time until the selection drop holds or the budget is spent.

    "Holds" means at most ``threshold`` points of the selection samples change
    their top-1 against the float model (which bounds the accuracy drop). Each
    layer gets the cheapest precision that improves the :class:`Fidelity`; a
    layer no precision helps stays int8 and does not count against the budget.
    """
    current = context.best_recipe.get(fmt, context.settings.start)
    rows = [r for r in context.sensitivity if r.format == fmt and r.isolated_sqnr_db is not None]
    ranked = [r.layer for r in sorted(rows, key=lambda r: r.isolated_sqnr_db or 0.0)]
    budget = max(1, math.floor(context.settings.mixed_budget * len(ranked))) if ranked else 0
    folder = context.folder(f"mixed_{fmt}")
    tries = itertools.count()

    def score(recipe: QuantRecipe) -> Fidelity:
        return context.fidelity(fmt, context.quantize(fmt, recipe, folder / f"try_{next(tries)}{_SUFFIX[fmt]}"))

    current_score = score(current)
    for layer in ranked:
        kept = len(current.keep_a16w8) + len(current.keep_float)
        if current_score.flips_points <= context.threshold or kept >= budget:
            break
        for precision in precisions:
            candidate = current.raising(layer, precision)
            candidate_score = score(candidate)
            if candidate_score.better_than(current_score):
                current, current_score = candidate, candidate_score
                break
    return current, len(ranked)


def mixed_step(context: LadderContext) -> StepResult:
    """(c) Mixed precision: the most sensitive layers kept above int8, greedily, within a share of layers."""
    from edgepipe.quantize.sensitivity import measure_sensitivity

    outcome = StepOutcome(step="mixed", title="mixed precision by per-layer sensitivity", status="skipped")
    if context.selection is None:
        outcome.note = "no selection split (data.selection): layers cannot be chosen without the evaluation split"
        return StepResult(outcome)
    precisions = {fmt: _higher_precisions(context, fmt) for fmt in context.formats}
    if not any(precisions.values()):
        outcome.note = "the target runs int8 only (quantization.precisions): no layer can be kept higher"
        return StepResult(outcome)
    measure_sensitivity(context)
    recipes, costs = {}, []
    for fmt, precision in precisions.items():
        base = context.best_recipe.get(fmt, context.settings.start)
        recipe, layers = _greedy(context, fmt, precision) if precision else (base, 0)
        recipes[fmt] = recipe
        kept = [KeptLayer(layer=name, precision="a16w8") for name in recipe.keep_a16w8]
        kept += [KeptLayer(layer=name, precision="float") for name in recipe.keep_float]
        outcome.kept_layers[fmt] = kept
        costs.append(_cost(fmt, kept, layers))
    outcome.recipe = {f: r.label for f, r in recipes.items()}
    outcome.cost = "; ".join(costs)
    outcome.note = f"budget {context.settings.mixed_budget:.0%} of layers; chosen on the selection split"
    return StepResult(outcome, _quantize_all(context, "mixed", recipes))


def _cost(fmt: str, kept: list[KeptLayer], layers: int) -> str:
    floats = sum(k.precision == "float" for k in kept)
    wide = len(kept) - floats
    parts = []
    if wide:
        parts.append(f"{wide} of {layers} layers with int16 activations (2x activation memory and bandwidth there)")
    if floats:
        parts.append(f"{floats} of {layers} layers in float (on an NPU: CPU fallback, up to {2 * floats} "
                     "extra graph partitions)")
    return f"{fmt}: " + (", ".join(parts) or "no layer kept")


def qat_step(context: LadderContext) -> StepResult:
    """(d) QAT: fine-tune the float Keras model with fake quantization on the training split, then convert."""
    from edgepipe.quantize.qat_export import run_qat

    if context.model.format in ("pytorch", "onnx", "tflite"):  # PyTorch's pt2e QAT (edgepipe.quantize.qat_torch)
        from edgepipe.quantize.qat_torch_step import torch_qat_step

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


#: The ladder, in order: (step name, function).
LADDER_STEPS: list[tuple[StepName, Callable[[LadderContext], StepResult]]] = [
    ("ptq", ptq_step),
    ("calibration", calibration_step),
    ("mixed", mixed_step),
    ("qat", qat_step),
]
