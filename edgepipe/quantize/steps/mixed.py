"""(e) Mixed precision: the most sensitive layers kept in int16 activations or float, chosen on the selection split.

One ranking per precision, fixed before any try: for ONNX int16 the groups its structure
suspects (:mod:`edgepipe.quantize.sensitive_ops`: Softmax, Sigmoid/HardSigmoid/HardSwish,
LayerNorm, the first and last weight layers), then the weight layers in order of measured
sensitivity; for ONNX float each int8 node's measured damage alone in int8
(:mod:`edgepipe.quantize.node_damage`); for TFLite the measured order. The step keeps the top ``k``
nodes of that ranking above int8, in the cheapest precision the target allows that
holds with the whole budget (``mixed_budget`` × nodes) kept, ``k`` found by bisection
(a greedy try per layer would be hours on a detector with hundreds of layers).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace

from edgepipe.metrics.parts import has_small_range_channels
from edgepipe.quantize.ladder_context import SUFFIX, Fidelity, LadderContext, StepResult
from edgepipe.quantize.node_damage import measure_node_damage
from edgepipe.quantize.onnx_qdq import preprocess
from edgepipe.quantize.recipe import LayerPrecision, QuantRecipe
from edgepipe.quantize.report import KeptLayer, StepOutcome
from edgepipe.quantize.sensitive_ops import NodeGroup, output_joins, quantizable_nodes, sensitive_groups
from edgepipe.quantize.sensitivity import measure_sensitivity
from edgepipe.quantize.steps.common import quantize_all


def higher_precisions(context: LadderContext, fmt: str) -> tuple[LayerPrecision, ...]:
    """What mixed precision may use above int8, cheapest first: int16 activations, then float, as the targets
    allow. ONNX keeps single layers in either; TFLite keeps single layers in float only (the converter has no
    per-layer int16) and may make every activation int16 (int16x8, which Ethos-U runs)."""
    return tuple(p for p in ("a16w8", "float") if p in context.settings.precisions)


class _Search:
    """Keep the ``k`` top-ranked nodes above int8, ``k`` found by bisection on the selection split.

    The ranking is fixed once (structural suspects, then measured sensitivity), so a model
    with hundreds of layers costs about ``2 + log2(budget)`` quantize-and-score tries, not
    one per layer: each precision is first tried with the whole budget kept; the cheapest
    that holds there is bisected down to the fewest top-ranked nodes that still hold.
    This assumes keeping more of the ranking never hurts, which is what the ranking is for;
    when nothing holds with the whole budget, the top 1, 2, 4, … are tried too and the best kept.
    """

    def __init__(self, context: LadderContext, fmt: str, precisions: tuple[LayerPrecision, ...], budget: int):
        self.context, self.fmt, self.precisions, self.budget = context, fmt, precisions, budget
        self.folder = context.folder(f"mixed_{fmt}")
        self.tries = itertools.count()
        self.start = context.best_recipe.get(fmt, context.settings.start)
        self.recipe = self.start
        self.score = self._score(self.recipe)
        self.trail: list[str] = []

    def _score(self, recipe: QuantRecipe) -> Fidelity:
        out = self.folder / f"try_{next(self.tries)}{SUFFIX[self.fmt]}"
        return self.context.candidate_fidelity(self.fmt, self.context.quantize(self.fmt, recipe, out))

    @property
    def kept(self) -> int:
        return len(self.recipe.keep_a16w8) + len(self.recipe.keep_float)

    @property
    def holds(self) -> bool:
        return self.context.meets(self.fmt, self.score)

    def _out_of_time(self, what: str) -> bool:
        """True when the ladder's time budget is spent; ``what`` (the next try) is then recorded as not tried."""
        return self.context.out_of_time(f"mixed {self.fmt}: {what} and the tries after it not tried")

    def _keeping(self, nodes: list[str], precision: LayerPrecision) -> QuantRecipe:
        recipe = self.start
        for node in nodes:
            recipe = recipe.raising(node, precision)
        return recipe

    def _line(self, what: str, score: Fidelity) -> str:
        flips = ("" if score.flips_points is None or self.score.flips_points is None else
                 f"top-1 changes {self.score.flips_points:.2f} -> {score.flips_points:.2f} points, ")
        missed = "" if self.context.meets(self.fmt, score) else (
            f" (misses: {score.failures[0]})" if score.failures else " (misses)")
        return (f"{what}: {flips}cosine {self.score.cosine:.4f} -> {score.cosine:.4f}, "
                f"SQNR {self.score.sqnr_db:.1f} -> {score.sqnr_db:.1f} dB{missed}")

    def search(self, rankings: dict[LayerPrecision, Callable[[], list[NodeGroup]]]) -> None:
        """Bisect on how many of each precision's ranked nodes (in order, within the budget) to keep above int8.

        A precision's ranking is made when the search first reaches it: when a cheaper precision already holds,
        the dearer one's ranking (float: the node-damage measurement) is never made."""
        if self.holds:
            return
        cut: dict[LayerPrecision, list[str]] = {}
        best: tuple[Fidelity, QuantRecipe] | None = None
        for precision in self.precisions:
            if precision in rankings:
                cut[precision] = self._cut(precision, rankings[precision]())
            nodes = cut.get(precision, [])
            if not nodes:
                continue
            if self._out_of_time(f"top {len(nodes)} -> {precision}"):
                break
            candidate = self._keeping(nodes, precision)
            score = self._score(candidate)
            self.trail.append(self._line(f"top {len(nodes)} -> {precision}", score))
            if self.context.meets(self.fmt, score):
                self._bisect(nodes, precision, candidate, score)
                return
            if self.context.better(self.fmt, score, best[0] if best else self.score):
                best = (score, candidate)
        best = self._prefixes(cut.get(self.precisions[-1], []), best)
        best = self._whole_model(best)
        if best is not None:
            self.recipe, self.score = best[1], best[0]
        else:
            self.trail.append("no precision improved the selection score")

    def _cut(self, precision: LayerPrecision, ranked: list[NodeGroup]) -> list[str]:
        """The nodes of ``ranked`` in order, cut to the budget; the trail says how they were ranked."""
        nodes = list(dict.fromkeys(n for group in ranked for n in group.nodes))
        if not nodes:
            return nodes
        if len(nodes) > self.budget:
            self.trail.append(f"{precision}: ranking of {len(nodes)} nodes cut to the budget of {self.budget}")
            nodes = nodes[:self.budget]
        self.trail.append(f"{precision} ranking: " + ", ".join(group.reason for group in ranked[:6])
                          + (", …" if len(ranked) > 6 else ""))
        return nodes

    def _prefixes(self, nodes: list[str], best: tuple[Fidelity, QuantRecipe] | None
                  ) -> tuple[Fidelity, QuantRecipe] | None:
        """Nothing held with the whole cut: the top 1, 2, 4, … nodes in the most precise precision, in case
        fewer nodes score better (noise of a small split, or a range one kept layer widens for the next).
        Stops at the first that holds; returns the best of everything tried that beats int8 (None if none)."""
        precision = self.precisions[-1]
        count = 1
        while count < len(nodes) and not self._out_of_time(f"top {count} -> {precision}"):
            candidate = self._keeping(nodes[:count], precision)
            score = self._score(candidate)
            self.trail.append(self._line(f"top {count} -> {precision}", score))
            if self.context.better(self.fmt, score, best[0] if best else self.score):
                best = (score, candidate)
            if self.context.meets(self.fmt, score):
                break
            count *= 2
        return best

    def _whole_model(self, best: tuple[Fidelity, QuantRecipe] | None) -> tuple[Fidelity, QuantRecipe] | None:
        """Last resort when no cut of the ranking holds and the target runs int16 activations: every activation
        int16 (the error was spread over the whole graph, not in a few layers). Kept when it scores best."""
        if "a16w8" not in self.precisions or self._out_of_time("every activation -> a16w8"):
            return best
        candidate = replace(self.start, activation_bits=16)
        score = self._score(candidate)
        self.trail.append(self._line("every activation -> a16w8", score))
        if self.context.better(self.fmt, score, best[0] if best else self.score):
            return score, candidate
        return best

    def _bisect(self, nodes: list[str], precision: LayerPrecision, recipe: QuantRecipe, score: Fidelity) -> None:
        """The fewest top-ranked ``nodes`` kept in ``precision`` that still hold (``len(nodes)`` holds)."""
        low, high = 0, len(nodes)  # keeping `low` misses, keeping `high` holds
        while high - low > 1 and not self._out_of_time(f"fewer than top {high} -> {precision}"):
            middle = (low + high) // 2
            candidate = self._keeping(nodes[:middle], precision)
            trial = self._score(candidate)
            self.trail.append(self._line(f"top {middle} -> {precision}", trial))
            if self.context.meets(self.fmt, trial):
                high, recipe, score = middle, candidate, trial
            else:
                low = middle
        self.recipe, self.score = recipe, score


def _ranked_layers(context: LadderContext, fmt: str) -> list[NodeGroup]:
    """Weight layers of ``fmt``, most sensitive first.

    Isolated SQNR when it was measured (lowest first); else the error each layer adds in the
    fully quantized model (``added_noise_db``, largest first): the accumulated SQNR alone would rank
    the deepest layers first whatever they add. Layers without either follow, by accumulated SQNR.
    """
    ranked: list[tuple[tuple[int, float], str, str]] = []
    for row in context.sensitivity:
        if row.format != fmt:
            continue
        if row.isolated_sqnr_db is not None:
            ranked.append(((0, row.isolated_sqnr_db), row.layer, f"{row.isolated_sqnr_db:.1f} dB alone"))
        elif row.added_noise_db is not None:
            ranked.append(((0, -row.added_noise_db), row.layer, f"adds noise at {row.added_noise_db:.1f} dB"))
        elif row.accumulated_sqnr_db is not None:
            ranked.append(((1, row.accumulated_sqnr_db), row.layer, f"{row.accumulated_sqnr_db:.1f} dB"))
    return [NodeGroup(f"layer {layer} ({what})", (layer,)) for _, layer, what in sorted(ranked)]


def _search(context: LadderContext, fmt: str, precisions: tuple[LayerPrecision, ...]) -> tuple[_Search, int]:
    """Rank once per precision, then bisect; the node count too.

    ONNX int16: the structural suspects first, then the layers by the noise each adds; when every
    layer's isolated effect on the outputs was measured (up to 24 weight layers), that order comes first.
    ONNX float: the measured damage of each node alone in int8 (:mod:`..node_damage`), most damaging first.
    """
    if not context.sensitivity:
        measure_sensitivity(context)
    measured = _ranked_layers(context, fmt)
    if fmt != "onnx":  # single layers in float only; int16 for the whole model (:meth:`_Search._whole_model`)
        search = _Search(context, fmt, precisions, max(1, math.floor(context.settings.mixed_budget * len(measured))))
        search.search({p: lambda: measured for p in precisions if p == "float"})
        return search, len(measured)
    prepared = preprocess(context.floats["onnx"], context.work / f"{context.floats['onnx'].stem}_prep.onnx")
    # each layer's own effect on the outputs, when measured (small graphs), outranks the structural suspects
    isolated = any(r.format == fmt and r.isolated_sqnr_db is not None for r in context.sensitivity)
    suspects = sensitive_groups(prepared)
    joins = output_joins(prepared, _mixed_range_outputs(context))
    nodes = quantizable_nodes(prepared)
    search = _Search(context, fmt, precisions, max(1, math.floor(context.settings.mixed_budget * nodes)))
    structural = joins + (measured + suspects if isolated else suspects + measured)
    rankings: dict[LayerPrecision, Callable[[], list[NodeGroup]]] = {p: lambda: structural for p in precisions}
    if "float" in precisions:
        rankings["float"] = lambda: _by_damage(context, search.start, joins) or structural
    search.search(rankings)
    return search, nodes


def _by_damage(context: LadderContext, recipe: QuantRecipe, joins: list[NodeGroup]) -> list[NodeGroup]:
    """The float ranking: ``joins``, then the nodes whose int8 alone hurts, most damaging first (:mod:`..node_damage`);
    empty when nothing was measured (the time budget spent, or too many nodes)."""
    if context.out_of_time("mixed onnx: node damage not measured"):
        return []
    damage = [d for d in measure_node_damage(context, recipe) if d.hurts]
    if not damage:
        return []
    return joins + [NodeGroup(f"{d.node} ({d.op}, cosine {d.cosine:.4f} alone in int8)", (d.node,)) for d in damage]


def _mixed_range_outputs(context: LadderContext) -> list[str]:
    """The float ONNX outputs whose channels span very different ranges on the decision split (their parts are
    judged apart, and the Concat that joins them is the first thing to keep above int8)."""
    reference = context.float_outputs("onnx")
    return [name for name, array in zip(reference.names, reference.arrays) if has_small_range_channels(array)]


def mixed_step(context: LadderContext) -> StepResult:
    """(e) Mixed precision: the most sensitive nodes kept above int8, greedily, within a share of the nodes."""
    outcome = StepOutcome(step="mixed", title="mixed precision by sensitivity", status="skipped")
    precisions = {fmt: higher_precisions(context, fmt) for fmt in context.formats}
    if not any(precisions.values()):
        outcome.note = "the target runs int8 only (quantization.precisions): no layer can be kept higher"
        return StepResult(outcome)
    recipes, costs, trail = {}, [], []
    carried = {fmt: context.held[fmt] for fmt in precisions if fmt in context.held}
    for fmt, offered in precisions.items():
        if fmt in carried:
            trail.append(f"{fmt}: step {carried[fmt][0]}'s all-int8 artifact already holds on the selection split; "
                         "kept, no layer raised")
            continue
        if not offered:
            recipes[fmt] = context.best_recipe.get(fmt, context.settings.start)
            continue
        search, nodes = _search(context, fmt, offered)
        recipes[fmt] = search.recipe
        kept = [KeptLayer(layer=name, precision="a16w8") for name in search.recipe.keep_a16w8]
        kept += [KeptLayer(layer=name, precision="float") for name in search.recipe.keep_float]
        outcome.kept_layers[fmt] = kept
        costs.append(_cost(fmt, kept, nodes) if search.recipe.activation_bits == 8 else
                     f"{fmt}: every activation int16 (a16w8 whole model: 2x activation memory and bandwidth)")
        trail += [f"{fmt}: {line}" for line in search.trail]
    outcome.recipe = {f: f"kept from step {carried[f][0]}" if f in carried else recipes[f].label for f in precisions}
    outcome.cost = "; ".join(costs)
    outcome.note = (f"budget {context.settings.mixed_budget:.0%} of nodes; chosen on the "
                    f"{context.describe_decisions()}" + ("; tried: " + "; ".join(trail) if trail else ""))
    made = quantize_all(context, "mixed", recipes)
    return StepResult(outcome, {f: carried[f][1] if f in carried else made[f] for f in precisions})


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
