"""Legalize one float ONNX model for one target: try each rewrite, keep it only when it is equivalent and helps.

For every rewrite of :data:`~edgepipe.legalize.registry.REWRITES`, in order, on the model as the rewrites before
it left it:

1. it is tried only when the target places one of the ops it replaces on the CPU, its accelerator lists every op
   the rewritten form uses, and the config allows it;
2. the rewritten model must give the original's outputs on the check samples within
   :data:`~edgepipe.legalize.equivalence.TOLERANCE` (ONNX Runtime);
3. the support check of the rewritten model must be better (:meth:`PlacementSummary.better_than`).

A kept rewrite is tried again (a large pooling window may need two cascades) for up to :data:`ROUNDS` rounds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from edgepipe.config import LegalizeConfig
from edgepipe.errors import ToolFailed
from edgepipe.graph.onnx_edit import drop_unread_initializers, name_every_node
from edgepipe.graph.onnx_types import tensor_types
from edgepipe.legalize.equivalence import TOLERANCE, Outputs, max_relative_error, outputs_of
from edgepipe.legalize.registry import REWRITES
from edgepipe.legalize.report import LegalizationReport, PlacementSummary, RewriteOutcome
from edgepipe.legalize.rewrite import Rewrite, Site
from edgepipe.support.check import check_model
from edgepipe.support.report import SupportReport
from edgepipe.targets.profile import TargetProfile

log = logging.getLogger(__name__)

#: Times one rewrite is applied again to what its last round left on the CPU.
ROUNDS = 4


@dataclass(frozen=True)
class CheckSamples:
    """The inputs rewritten models are compared on, where they come from, and the original's outputs on them."""

    inputs: Sequence[list[np.ndarray]]
    source: Literal["calibration", "random"]
    reference: Outputs


@dataclass(frozen=True)
class Legalized:
    """The report, and the rewritten model's path (None when no rewrite was kept)."""

    report: LegalizationReport
    path: Path | None


@dataclass
class _State:
    """The model as the kept rewrites left it, its file and its placement on the target."""

    model: Any
    path: Path
    support: SupportReport

    @property
    def placement(self) -> PlacementSummary:
        return PlacementSummary.of(self.support)

    def on_cpu(self) -> frozenset[str]:
        return frozenset(v.name for v in self.support.node_verdicts if v.placement == "cpu")


def _listed(profile: TargetProfile) -> Callable[[str], bool]:
    """Whether ``profile``'s accelerator lists an ONNX op (an op table taking every op lists them all)."""
    table = profile.op_table("onnx")
    assert table is not None
    return lambda op: table.all_ops or op in table.ops


def _round(rewrite: Rewrite, state: _State, profile: TargetProfile, samples: CheckSamples,
           path: Path) -> tuple[_State | None, int, float | None, str]:
    """One application of ``rewrite`` to what ``state`` runs on the CPU: (the rewritten state, or None when nothing
    matched or the outputs differ; nodes rewritten; output error; why it is unusable)."""
    import onnx

    candidate = onnx.ModelProto()
    candidate.CopyFrom(state.model)
    site = Site(candidate, state.on_cpu(), _listed(profile), tensor_types(candidate))
    count = rewrite.apply(site)
    if not count:
        return None, 0, None, "no node on the CPU has the form this rewrite takes"
    drop_unread_initializers(candidate)
    onnx.save(candidate, str(path))
    try:
        error = max_relative_error(samples.reference, outputs_of(path, samples.inputs))
    except ToolFailed as failure:
        return None, count, None, f"ONNX Runtime cannot run the rewritten model: {failure.message}"
    if not error <= TOLERANCE:
        return None, count, error, f"outputs differ by {error:.2e} of their range (more than {TOLERANCE:g})"
    return _State(candidate, path, check_model(path, profile)), count, error, ""


def _attempt(rewrite: Rewrite, state: _State, profile: TargetProfile, samples: CheckSamples,
             work: Path) -> tuple[_State, RewriteOutcome]:
    """Apply ``rewrite`` round after round (up to :data:`ROUNDS`) to what the last round left on the CPU; keep the
    last round whose placement is better than before the rewrite (a 16 x 16 pool may need two rounds to fit)."""
    kept, trial = state, state
    rewritten = kept_nodes = count = 0
    worst, reason = 0.0, ""
    error: float | None = None
    for index in range(ROUNDS):
        new, count, error, reason = _round(rewrite, trial, profile, samples, work / f"{rewrite.name}-{index}.onnx")
        if new is None:
            break
        trial, rewritten, worst = new, rewritten + count, max(worst, error or 0.0)
        if trial.placement.better_than(kept.placement):
            kept, kept_nodes = trial, rewritten
    if kept is not state:
        left = ", ".join(f"{op} x{n}" for op, n in kept.placement.cpu_ops.items()) or "none"
        return kept, RewriteOutcome(name=rewrite.name, rule=rewrite.rule, status="kept", nodes=kept_nodes,
                                    max_relative_error=worst, reason=f"CPU ops left: {left}")
    if rewritten:
        after, before = trial.placement, state.placement
        reason = (f"placement not better: {after.cpu_nodes} CPU nodes, {after.partitions} partitions (before "
                  f"{before.cpu_nodes}, {before.partitions})")
    return state, RewriteOutcome(name=rewrite.name, rule=rewrite.rule, status="refused",
                                 nodes=rewritten or count, reason=reason,
                                 max_relative_error=worst if rewritten else error)


def _outcome_without_trying(rewrite: Rewrite, profile: TargetProfile, switches: LegalizeConfig) -> RewriteOutcome:
    """The outcome of a rewrite the config turns off or the target cannot take."""
    if not switches.allows(rewrite.name):
        return RewriteOutcome(name=rewrite.name, rule=rewrite.rule, status="off",
                              reason="turned off in [legalize] of the config")
    listed = _listed(profile)
    missing = [op for op in rewrite.emits if not listed(op)]
    return RewriteOutcome(name=rewrite.name, rule=rewrite.rule, status="refused",
                          reason=f"the accelerator does not list {', '.join(missing)}, which the rewritten form uses")


def legalizable(profile: TargetProfile, switches: LegalizeConfig) -> bool:
    """Whether legalization runs for ``profile``: the config allows a rewrite, and the target checks an ONNX
    artifact against an op table that does not take every op."""
    table = profile.op_table("onnx")
    return (profile.artifact.format == "onnx" and table is not None and not table.all_ops
            and any(switches.allows(r.name) for r in REWRITES))


def legalize_model(source: Path, profile: TargetProfile, samples: CheckSamples, switches: LegalizeConfig,
                   work: Path) -> Legalized:
    """Legalize the float ONNX at ``source`` for ``profile``; rewritten models are written under ``work``."""
    import onnx

    model = onnx.load(str(source))
    name_every_node(model)
    start = work / "start.onnx"
    onnx.save(model, str(start))
    state = _State(model, start, check_model(start, profile))
    before, listed = state.placement, _listed(profile)
    outcomes = []
    for rewrite in REWRITES:
        cpu_ops = {v.op for v in state.support.node_verdicts if v.placement == "cpu"}
        if not cpu_ops & set(rewrite.replaces):
            continue
        if not switches.allows(rewrite.name) or not all(map(listed, rewrite.emits)):
            outcomes.append(_outcome_without_trying(rewrite, profile, switches))
            continue
        state, outcome = _attempt(rewrite, state, profile, samples, work)
        outcomes.append(outcome)
        log.info("legalize %s for %s: %s (%s)", rewrite.name, profile.name, outcome.status, outcome.reason)
    report = LegalizationReport(artifact=source.name, samples=len(samples.inputs), sample_source=samples.source,
                                before=before, after=state.placement, rewrites=outcomes)
    return Legalized(report, state.path if report.kept else None)
