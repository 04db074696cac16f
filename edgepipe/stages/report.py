"""Stage: assemble one target's report from the shared results and its own checks.

The verdict comes from evidence (:mod:`edgepipe.gate.verdict`): the target's int8 artifact,
its accuracy on evaluation data, the profile's compatibility requirements and, where required
and installed, the vendor compile. Tool failures of the build are listed with their next step.
"""

from __future__ import annotations

from typing import Any

from edgepipe import __version__
from edgepipe.artifacts import Artifact
from edgepipe.gate.verdict import VerdictInputs, decide
from edgepipe.latency.interleaved import LatencyResult
from edgepipe.report import BuildReport
from edgepipe.report.schema import AccuracyInfo, ArtifactInfo, LatencyDetail, ModelInfo, StageInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile
from edgepipe.versions import tool_versions


def make_report(inputs: BuildInputs, target: TargetProfile, artifacts: list[Artifact],
                accuracy: AccuracyInfo | None, latency: dict[str, LatencyResult], stages: StageLog,
                sections: dict[str, Any] | None = None) -> BuildReport:
    """The report of one target from the shared results and its per-target ``sections``."""
    model = inputs.model
    infos = [ArtifactInfo(path=a.key, format=a.format, precision=a.precision, size_bytes=a.size_bytes,
                          route=a.route or None) for a in artifacts]
    sections = sections or {}
    verdict, reason, evidence = decide(VerdictInputs(
        target=target, artifacts=infos, accuracy=accuracy, support=sections.get("support"),
        failures=list(stages.failures), accuracy_gate=inputs.accuracy_gate,
        source_is_int8=bool(infos) and all(a.precision != "fp32" for a in infos), source_format=model.format))
    return BuildReport(
        edgepipe_version=__version__, target=target.name,
        model=ModelInfo(path=str(model.path), format=model.format, sha256=model.sha256),
        artifacts=infos,
        accuracy=accuracy,
        latency_ms={k: round(v.median_ms, 4) for k, v in latency.items()},
        latency={k: LatencyDetail(runtime=v.runtime, median_ms=v.median_ms, min_ms=v.min_ms, runs=v.runs,
                                  init_ms=v.init_ms, ci_low_ms=v.ci_low_ms, ci_high_ms=v.ci_high_ms,
                                  threads=v.threads)
                 for k, v in latency.items()},
        stages=[StageInfo(name=r.name, status=r.status, seconds=round(r.seconds, 3), detail=r.detail)
                for r in stages.records],
        tool_versions=tool_versions(), verdict=verdict, verdict_reason=reason, evidence=evidence,
        failures=list(stages.failures), **sections)
