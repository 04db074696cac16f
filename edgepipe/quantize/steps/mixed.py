"""(c) Mixed precision: the most sensitive layers kept in int16 activations or float, chosen on the selection split.

ONNX first tries the groups its structure suspects (:mod:`edgepipe.quantize.sensitive_ops`:
Softmax, Sigmoid/HardSigmoid/HardSwish, LayerNorm, the first and last weight
layers); when those are not enough, the weight layers in order of measured
sensitivity. TFLite tries the measured order. Each candidate gets the cheapest
precision the target allows that improves the selection score; the step stops when
the stopping rule holds or the budget (``mixed_budget`` × nodes) is spent.
"""

from __future__ import annotations

import itertools
import math

from edgepipe.quantize.ladder_context import SUFFIX, Fidelity, LadderContext, StepResult
from edgepipe.quantize.onnx_qdq import preprocess
from edgepipe.quantize.recipe import LayerPrecision, QuantRecipe
from edgepipe.quantize.report import KeptLayer, StepOutcome
from edgepipe.quantize.sensitive_ops import NodeGroup, quantizable_nodes, sensitive_groups
from edgepipe.quantize.sensitivity import measure_sensitivity
from edgepipe.quantize.steps.common import quantize_all


def higher_precisions(context: LadderContext, fmt: str) -> tuple[LayerPrecision, ...]:
    """What mixed precision may keep a layer in, cheapest first: int16 activations (ONNX), then float."""
    offered: tuple[LayerPrecision, ...] = ("a16w8", "float") if fmt == "onnx" else ("float",)
    return tuple(p for p in offered if p in context.settings.precisions)


class _Search:
    """Greedy raising of node groups for one format, each candidate scored on the selection split."""

    def __init__(self, context: LadderContext, fmt: str, precisions: tuple[LayerPrecision, ...], budget: int):
        self.context, self.fmt, self.precisions, self.budget = context, fmt, precisions, budget
        self.folder = context.folder(f"mixed_{fmt}")
        self.tries = itertools.count()
        self.recipe = context.best_recipe.get(fmt, context.settings.start)
        self.score = self._score(self.recipe)
        self.trail: list[str] = []

    def _score(self, recipe: QuantRecipe) -> Fidelity:
        out = self.folder / f"try_{next(self.tries)}{SUFFIX[self.fmt]}"
        return self.context.fidelity(self.fmt, self.context.quantize(self.fmt, recipe, out))

    @property
    def kept(self) -> int:
        return len(self.recipe.keep_a16w8) + len(self.recipe.keep_float)

    @property
    def holds(self) -> bool:
        return self.context.meets(self.fmt, self.score)

    def walk(self, groups: list[NodeGroup]) -> None:
        """Try ``groups`` in order until the stopping rule holds or the budget is spent."""
        done = set(self.recipe.keep_a16w8) | set(self.recipe.keep_float)
        for group in groups:
            nodes = tuple(n for n in group.nodes if n not in done)
            if self.holds or not nodes:
                continue
            if self.kept + len(nodes) > self.budget:
                self.trail.append(f"{group.reason}: over the budget of {self.budget} nodes")
                continue
            for precision in self.precisions:
                candidate = self.recipe
                for node in nodes:
                    candidate = candidate.raising(node, precision)
                score = self._score(candidate)
                if score.better_than(self.score):
                    self.trail.append(f"{group.reason} -> {precision}: cosine {self.score.cosine:.4f} -> "
                                      f"{score.cosine:.4f}, SQNR {self.score.sqnr_db:.1f} -> {score.sqnr_db:.1f} dB")
                    self.recipe, self.score = candidate, score
                    done.update(nodes)
                    break
            else:
                self.trail.append(f"{group.reason}: no precision improved the selection score")


def _ranked_layers(context: LadderContext, fmt: str) -> list[NodeGroup]:
    """Weight layers of ``fmt``, most sensitive first (isolated SQNR, else accumulated)."""
    ranked: list[tuple[float, str]] = []
    for row in context.sensitivity:
        value = row.isolated_sqnr_db if row.isolated_sqnr_db is not None else row.accumulated_sqnr_db
        if row.format == fmt and value is not None:
            ranked.append((value, row.layer))
    return [NodeGroup(f"layer {layer} ({value:.1f} dB)", (layer,)) for value, layer in sorted(ranked)]


def _search(context: LadderContext, fmt: str, precisions: tuple[LayerPrecision, ...]) -> tuple[_Search, int]:
    """Structural groups first (ONNX), then measured sensitivity; returns the search and the node count."""
    if fmt == "onnx":
        prepared = preprocess(context.floats["onnx"], context.work / f"{context.floats['onnx'].stem}_prep.onnx")
        nodes = quantizable_nodes(prepared)
        search = _Search(context, fmt, precisions, max(1, math.floor(context.settings.mixed_budget * nodes)))
        search.walk(sensitive_groups(prepared))
    else:
        search = None
    if search is None or not search.holds:
        if not context.sensitivity:
            measure_sensitivity(context)
        ranked = _ranked_layers(context, fmt)
        if search is None:
            nodes = len(ranked)
            search = _Search(context, fmt, precisions, max(1, math.floor(context.settings.mixed_budget * nodes)))
        search.walk(ranked)
    return search, nodes


def mixed_step(context: LadderContext) -> StepResult:
    """(c) Mixed precision: the most sensitive nodes kept above int8, greedily, within a share of the nodes."""
    outcome = StepOutcome(step="mixed", title="mixed precision by sensitivity", status="skipped")
    precisions = {fmt: higher_precisions(context, fmt) for fmt in context.formats}
    if not any(precisions.values()):
        outcome.note = "the target runs int8 only (quantization.precisions): no layer can be kept higher"
        return StepResult(outcome)
    recipes, costs, trail = {}, [], []
    for fmt, offered in precisions.items():
        if not offered:
            recipes[fmt] = context.best_recipe.get(fmt, context.settings.start)
            continue
        search, nodes = _search(context, fmt, offered)
        recipes[fmt] = search.recipe
        kept = [KeptLayer(layer=name, precision="a16w8") for name in search.recipe.keep_a16w8]
        kept += [KeptLayer(layer=name, precision="float") for name in search.recipe.keep_float]
        outcome.kept_layers[fmt] = kept
        costs.append(_cost(fmt, kept, nodes))
        trail += [f"{fmt}: {line}" for line in search.trail]
    outcome.recipe = {f: r.label for f, r in recipes.items()}
    outcome.cost = "; ".join(costs)
    outcome.note = (f"budget {context.settings.mixed_budget:.0%} of nodes; chosen on the "
                    f"{context.describe_decisions()}" + ("; tried: " + "; ".join(trail) if trail else ""))
    return StepResult(outcome, quantize_all(context, "mixed", recipes))


def _cost(fmt: str, kept: list[KeptLayer], nodes: int) -> str:
    floats = sum(k.precision == "float" for k in kept)
    wide = len(kept) - floats
    parts = []
    if wide:
        parts.append(f"{wide} of {nodes} nodes with int16 activations (2x activation memory and bandwidth there)")
    if floats:
        parts.append(f"{floats} of {nodes} nodes in float (on an NPU: CPU fallback, up to {2 * floats} "
                     "extra graph partitions)")
    return f"{fmt}: " + (", ".join(parts) or "no node kept")
