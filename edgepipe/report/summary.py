"""``summary.json`` and ``summary.md``: one build across all its targets, beside the per-target folders."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from edgepipe.figures import pct
from edgepipe.report.files import Record as _Record
from edgepipe.report.files import write_record
from edgepipe.report.schema import BuildReport, ModelInfo
from edgepipe.report.verdict import Verdict

SUMMARY_JSON = "summary.json"
SUMMARY_MD = "summary.md"
SUMMARY_VERSION = "1.1"


class TargetSummary(_Record):
    """One target's line in the summary."""

    target: str
    verdict: Verdict
    verdict_reason: str
    report: str = Field(description="Path of the target's report.json, relative to the summary.")
    int8_accuracy: dict[str, float] = Field(description="Int8 accuracy per format (0..1).")
    worst_drop_points: float | None = Field(description="Largest float→int8 drop, percentage points.")
    latency_ms: dict[str, float] = Field(description="Median host latency per artifact (ms).")
    size_bytes: dict[str, int] = Field(description="Size per artifact (bytes).")
    cached: bool = Field(description="True when this run restored the target from the build cache.")
    cache_key: str | None = Field(None, description="The target's build-cache key (sha256), when cached.")


class BuildSummary(_Record):
    """Every target of one build, and the build's overall verdict."""

    summary_version: str = SUMMARY_VERSION
    edgepipe_version: str
    model: ModelInfo
    targets: list[TargetSummary]
    verdict: Verdict = Field(description="'fail' if any target failed, else 'not proven' if any was not proven, "
                                         "else 'pass'.")
    failures: list[str] = Field(default_factory=list,
                                description="Third-party tools that failed in the build, one line each with the "
                                            "next step.")


def summarise(reports: dict[str, BuildReport], cached: dict[str, bool],
              keys: dict[str, str]) -> BuildSummary:
    """The summary of ``reports`` (by target, in build order)."""
    first = next(iter(reports.values()))
    lines = []
    for name, report in reports.items():
        accuracy = report.accuracy
        drops = accuracy.drop_points if accuracy else {}
        lines.append(TargetSummary(
            target=name, verdict=report.verdict, verdict_reason=report.verdict_reason,
            report=f"{name}/report.json", int8_accuracy=dict(accuracy.int8) if accuracy else {},
            worst_drop_points=max(drops.values()) if drops else None, latency_ms=dict(report.latency_ms),
            size_bytes={a.path: a.size_bytes for a in report.artifacts}, cached=cached.get(name, False),
            cache_key=keys.get(name)))
    failures = list(dict.fromkeys(f"{f.tool} ({f.stage}{', ' + f.artifact if f.artifact else ''}): {f.message} — "
                                  f"next step: {f.next_step}" for r in reports.values() for f in r.failures))
    return BuildSummary(edgepipe_version=first.edgepipe_version, model=first.model, targets=lines,
                        verdict=overall_verdict([r.verdict for r in reports.values()]), failures=failures)


def overall_verdict(verdicts: list[Verdict]) -> Verdict:
    """``fail`` if any target failed, else ``not proven`` if any was not proven, else ``pass``."""
    if "fail" in verdicts:
        return "fail"
    return "not proven" if "not proven" in verdicts else "pass"


def _icon(verdict: str) -> str:
    return {"pass": "✅", "fail": "❌"}.get(verdict, "⚠️")


def render_summary_markdown(summary: BuildSummary) -> str:
    """A table of targets fit for a pull-request comment."""
    icon = _icon(summary.verdict)
    lines = [f"# edgepipe build summary: {Path(summary.model.path).name}", "",
             f"**Verdict: {icon} {summary.verdict}** ({len(summary.targets)} target(s))", "",
             "| target | verdict | int8 accuracy | worst drop (points) | int8 TFLite (bytes) | cache | reason |",
             "|---|---|---|---|---|---|---|"]
    for line in summary.targets:
        best = max(line.int8_accuracy.values()) if line.int8_accuracy else None
        drop = "–" if line.worst_drop_points is None else f"{line.worst_drop_points:+.2f}"
        size = line.size_bytes.get("model_int8.tflite")
        lines.append(f"| {line.target} | {_icon(line.verdict)} {line.verdict} | {pct(best)} | "
                     f"{drop} | {'–' if size is None else f'{size:,}'} | {'hit' if line.cached else 'built'} | "
                     f"{line.verdict_reason} |")
    lines.append("")
    if summary.failures:
        lines += ["## Tool failures (the build went on without their output)", ""]
        lines += [f"- {line}" for line in summary.failures] + [""]
    return "\n".join(lines)


def write_summary(summary: BuildSummary, folder: Path) -> list[Path]:
    """Write ``summary.json`` and ``summary.md`` into ``folder``."""
    return write_record(folder, summary, SUMMARY_JSON, render_summary_markdown(summary), SUMMARY_MD)
