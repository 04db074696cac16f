"""Stage: assemble one target's report from the shared results and its own checks."""

from __future__ import annotations

from typing import Any

from edgepipe import __version__
from edgepipe.artifacts import Artifact
from edgepipe.latency import LatencyResult
from edgepipe.report import BuildReport
from edgepipe.report.schema import AccuracyInfo, ArtifactInfo, LatencyDetail, ModelInfo, StageInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile
from edgepipe.versions import tool_versions


def _label_free_verdict(accuracy: AccuracyInfo) -> tuple[str, str]:
    """The gate without labels: every compared artifact meets the label-free thresholds."""
    label_free = accuracy.label_free
    assert label_free is not None
    if not label_free.comparisons:
        return "pass", "only one artifact: nothing to compare label-free"
    if label_free.failures:
        return "fail", "label-free check failed (" + "; ".join(label_free.failures[:3]) + ")"
    worst = min((o.cosine for c in label_free.comparisons for o in c.outputs), default=1.0)
    return "pass", f"label-free: every threshold met (lowest output cosine {worst:.4f})"


def _verdict(accuracy: AccuracyInfo | None) -> tuple[str, str]:
    if accuracy is None:
        return "pass", "no evaluation data: accuracy was not gated"
    if accuracy.label_free is not None and accuracy.label_free.gated:
        return _label_free_verdict(accuracy)
    if not accuracy.int8:
        return "pass", "no int8 artifact to gate"
    failing = {f: d for f, d in accuracy.drop_points.items() if d > accuracy.threshold_points + 1e-9}
    if failing:
        worst = ", ".join(f"{f} {d:.2f}" for f, d in failing.items())
        return "fail", f"int8 accuracy drop above {accuracy.threshold_points:g} points ({worst})"
    worst = max(accuracy.drop_points.values())
    return "pass", f"largest int8 drop {worst:.2f} points ≤ {accuracy.threshold_points:g}"


def make_report(inputs: BuildInputs, target: TargetProfile, artifacts: list[Artifact],
                accuracy: AccuracyInfo | None, latency: dict[str, LatencyResult], stages: StageLog,
                sections: dict[str, Any] | None = None) -> BuildReport:
    """The report of one target from the shared results and its per-target ``sections``."""
    verdict, reason = _verdict(accuracy)
    model = inputs.model
    return BuildReport(
        edgepipe_version=__version__, target=target.name,
        model=ModelInfo(path=str(model.path), format=model.format, sha256=model.sha256),
        artifacts=[ArtifactInfo(path=a.key, format=a.format, precision=a.precision, size_bytes=a.size_bytes)
                   for a in artifacts],
        accuracy=accuracy,
        latency_ms={k: round(v.median_ms, 4) for k, v in latency.items()},
        latency={k: LatencyDetail(runtime=v.runtime, median_ms=v.median_ms, min_ms=v.min_ms, runs=v.runs,
                                  init_ms=v.init_ms, ci_low_ms=v.ci_low_ms, ci_high_ms=v.ci_high_ms,
                                  threads=v.threads)
                 for k, v in latency.items()},
        stages=[StageInfo(name=r.name, status=r.status, seconds=round(r.seconds, 3), detail=r.detail)
                for r in stages.records],
        tool_versions=tool_versions(), verdict=verdict, verdict_reason=reason, **(sections or {}))
