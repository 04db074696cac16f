"""Stage: per-target legalization of the float ONNX, after export and before quantization.

Every target whose profile checks an ONNX artifact gets its own try (:mod:`edgepipe.legalize`): rewrites of the
ops it runs on its CPU, kept when the outputs stay equal on calibration samples and its support check improves.
Quantization then runs once per :class:`QuantizationGroup`: targets with the same quantization requirements and
the same legalized float model (none, or byte-identical rewrites) share their artifacts; a target whose rewrites
differ gets artifacts of its own. The model file is never changed; the artifacts carry the rewrites.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.config import LegalizeConfig
from edgepipe.errors import ToolFailed
from edgepipe.hashing import sha256_of
from edgepipe.legalize import CheckSamples, LegalizationReport, legalizable, legalize_model
from edgepipe.legalize.equivalence import outputs_of
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile

STAGE = "legalize"
#: Calibration samples the rewritten outputs are compared on, at most.
CHECK_SAMPLES = 8


@dataclass(frozen=True)
class QuantizationGroup:
    """Targets that share one quantization run: the float artifacts they quantize from (legalized or not), the TF
    graph of a Keras/SavedModel input, and each target's legalization report."""

    targets: tuple[TargetProfile, ...]
    floats: list[Artifact]
    graph: object = None
    legalization: dict[str, LegalizationReport] = field(default_factory=dict)


@dataclass(frozen=True)
class _Made:
    report: LegalizationReport
    artifact: Artifact | None


def _check_samples(inputs: BuildInputs, source: Path) -> CheckSamples:
    """Up to :data:`CHECK_SAMPLES` calibration samples, else standard-normal inputs of the model's shapes."""
    if inputs.calibration is not None:
        samples = list(inputs.calibration.samples(CHECK_SAMPLES))
        return CheckSamples(samples, "calibration", outputs_of(source, samples))
    rng = np.random.default_rng(0)
    specs = inputs.model.signature.inputs
    samples = [[rng.standard_normal([d or 1 for d in spec.shape]).astype(spec.dtype) for spec in specs]
               for _ in range(2)]
    return CheckSamples(samples, "random", outputs_of(source, samples))


def _summary(report: LegalizationReport) -> str:
    """The stage record's detail: what was kept and what it changed."""
    kept = ", ".join(f"{r.name} ({r.nodes} nodes)" for r in report.kept)
    before, after = report.before, report.after
    if not kept:
        return f"no rewrite kept; {before.cpu_nodes} CPU nodes, {before.partitions} partitions"
    return (f"kept {kept}: CPU nodes {before.cpu_nodes} -> {after.cpu_nodes}, partitions {before.partitions} -> "
            f"{after.partitions} (float ONNX)")


def _legalize_all(inputs: BuildInputs, source: Artifact, work: Path, stages: StageLog,
                  switches: LegalizeConfig) -> dict[str, _Made]:
    targets = [t for t in inputs.targets if legalizable(t, switches)]
    if not targets:
        return {}
    try:
        samples = _check_samples(inputs, source.path)
    except ToolFailed as failure:  # the float model itself does not run: export already recorded why
        stages.fail(STAGE, failure, artifact=source.key)
        return {}
    made: dict[str, _Made] = {}
    for target in targets:
        name = f"{STAGE}:{target.name}"
        folder = work / target.name
        folder.mkdir(parents=True)
        with stages.stage(name):
            result = legalize_model(source.path, target, samples, switches, folder)
        stages.annotate(name, _summary(result.report))
        artifact = None
        if result.path is not None:
            path = Path(shutil.copyfile(result.path, folder / source.key))
            artifact = Artifact(path, "onnx", "fp32")
        made[target.name] = _Made(result.report, artifact)
    return made


def legalize_stage(inputs: BuildInputs, floats: list[Artifact], graph: Any, work: Path, stages: StageLog,
                   switches: LegalizeConfig) -> list[QuantizationGroup]:
    """Legalize the float ONNX for each of ``inputs.targets`` (one quantization group) and split the group by the
    rewritten model each target got; targets without a kept rewrite keep ``floats`` as they are."""
    source = next((a for a in floats if a.format == "onnx" and a.precision == "fp32"), None)
    made = _legalize_all(inputs, source, work, stages, switches) if source is not None else {}
    groups: dict[str | None, list[TargetProfile]] = {}
    artifacts: dict[str | None, Artifact] = {}
    for target in inputs.targets:
        mine = made.get(target.name)
        key = sha256_of(mine.artifact.path) if mine is not None and mine.artifact is not None else None
        groups.setdefault(key, []).append(target)
        if key is not None and mine is not None and mine.artifact is not None:
            artifacts.setdefault(key, mine.artifact)
    reports = {name: m.report for name, m in made.items()}
    return [QuantizationGroup(tuple(targets), [artifacts[key] if a is source and key is not None else a
                                               for a in floats], graph,
                              {t.name: reports[t.name] for t in targets if t.name in reports})
            for key, targets in groups.items()]
