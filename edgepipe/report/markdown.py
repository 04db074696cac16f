"""``report.md``: a short human summary of a :class:`BuildReport`."""

from __future__ import annotations

from edgepipe.report.schema import BuildReport


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.2f}%"


def render_markdown(report: BuildReport) -> str:
    """The Markdown summary: verdict, accuracy, artifacts, latency, stages."""
    icon = "✅" if report.verdict == "pass" else "❌"
    lines = [
        f"# edgepipe build: {report.model.path} → {report.target}",
        "",
        f"**Verdict: {icon} {report.verdict}** — {report.verdict_reason}",
        "",
    ]
    if report.accuracy:
        acc = report.accuracy
        lines += [f"## Accuracy ({acc.metric}, {acc.samples} evaluation samples, "
                  f"threshold {acc.threshold_points:g} points)", "",
                  "| format | float | int8 | drop (points) |", "|---|---|---|---|"]
        for fmt, int8 in acc.int8.items():
            lines.append(f"| {fmt} | {_pct(acc.float_by_format.get(fmt, acc.float))} | {_pct(int8)} | "
                         f"{acc.drop_points[fmt]:+.2f} |")
        lines.append("")
    lines += ["## Artifacts", "", "| file | format | precision | size (bytes) | host latency p50 (ms) |",
              "|---|---|---|---|---|"]
    for art in report.artifacts:
        latency = report.latency_ms.get(art.path)
        shown = "–" if latency is None else f"{latency:.3f}"
        lines.append(f"| {art.path} | {art.format} | {art.precision} | {art.size_bytes:,} | {shown} |")
    lines += ["", "## Stages", "", "| stage | status | time (s) | note |", "|---|---|---|---|"]
    for stage in report.stages:
        lines.append(f"| {stage.name} | {stage.status} | {stage.seconds:.2f} | {stage.detail} |")
    lines += ["", f"<sub>edgepipe {report.edgepipe_version}, report schema {report.schema_version}; model sha256 "
              f"`{report.model.sha256[:16]}…`</sub>", ""]
    return "\n".join(lines)
