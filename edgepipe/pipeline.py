"""The build driver: load → export → quantize → evaluate → latency → report, in that order.

Each stage (one module in ``edgepipe.stages``) hands a typed result to the next;
invariants are checked between them (every artifact loads and keeps the
model's shape). Inputs are validated before anything is written; outputs are
staged and renamed into place per target, so a failed build never leaves a
folder that looks complete.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.config import BuildConfig
from edgepipe.health import check_artifact
from edgepipe.output import StagingFolder
from edgepipe.report import BuildReport
from edgepipe.report.writer import write_report
from edgepipe.stage_log import StageLog
from edgepipe.stages.evaluate import evaluate_stage
from edgepipe.stages.export import export_stage
from edgepipe.stages.inputs import BuildInputs, validate_inputs
from edgepipe.stages.latency import latency_stage
from edgepipe.stages.per_target import TargetContext, run_target_stages
from edgepipe.stages.quantize import quantize_stage
from edgepipe.stages.report import make_report

Listener = Callable[[str, str], None]


@dataclass
class BuildResult:
    """Where each target's outputs went, and its report."""

    reports: dict[str, BuildReport] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(r.verdict == "pass" for r in self.reports.values())


def produce_artifacts(inputs: BuildInputs, scratch: Path, stages: StageLog, *, quantize: bool = True) -> list[Artifact]:
    """Export (and quantize) into ``scratch/artifacts``, checking every artifact loads and keeps its shape."""
    folder = scratch / "artifacts"
    folder.mkdir()
    floats, graph = export_stage(inputs, folder, scratch, stages)
    for artifact in floats:
        check_artifact(artifact, inputs.model.signature)
    if not quantize:
        return floats
    quantized = quantize_stage(inputs, floats, graph, folder, scratch, stages)
    for artifact in quantized:
        check_artifact(artifact, inputs.model.signature)
    return floats + quantized


def run_artifacts_only(config: BuildConfig, out: Path, *, quantize: bool,
                       listener: Listener | None = None) -> list[Path]:
    """``edgepipe export`` / ``edgepipe quantize``: only the artifacts, staged into ``out`` atomically."""
    stages = StageLog(listener)
    inputs = validate_inputs(config, stages)
    with StagingFolder(out) as staged:
        assert staged.path is not None
        with StagingFolder(out.parent / f".{out.name}.scratch") as scratch:
            assert scratch.path is not None
            artifacts = produce_artifacts(inputs, scratch.path, stages, quantize=quantize)
            for artifact in artifacts:
                shutil.copyfile(artifact.path, staged.path / artifact.key)
        staged.commit()
    return [out / a.key for a in artifacts]


def run_build(config: BuildConfig, listener: Listener | None = None) -> BuildResult:
    """Run the whole pipeline for every target in ``config``; outputs land in ``<output>/<model>/<target>/``."""
    stages = StageLog(listener)
    inputs = validate_inputs(config, stages)
    root = config.output / inputs.model.name
    result = BuildResult()
    with StagingFolder(root / ".scratch") as scratch:
        assert scratch.path is not None
        artifacts = produce_artifacts(inputs, scratch.path, stages)
        accuracy = evaluate_stage(inputs, artifacts, config.accuracy.max_drop_points, stages)
        latency = latency_stage(inputs, artifacts, config, stages)
        for target in inputs.targets:
            with stages.stage(f"report:{target.name}"), StagingFolder(root / target.name) as staged:
                assert staged.path is not None
                for artifact in artifacts:
                    shutil.copyfile(artifact.path, staged.path / artifact.key)
                sections = run_target_stages(TargetContext(inputs, target, tuple(artifacts), staged.path, stages))
                report = make_report(inputs, target, artifacts, accuracy, latency, stages, sections)
                write_report(report, staged.path)
                result.folders[target.name] = staged.commit()
                result.reports[target.name] = report
    return result
