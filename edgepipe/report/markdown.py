"""``report.md``: a short human summary of a :class:`BuildReport`."""

from __future__ import annotations

from edgepipe.figures import pct
from edgepipe.legalize.markdown import render_legalization
from edgepipe.perf.render import render_performance_markdown
from edgepipe.quantize.markdown import render_quantization
from edgepipe.report.accuracy_stats import render_interval
from edgepipe.report.custom_ops import render_custom_ops
from edgepipe.report.label_free import ARITHMETIC, render_label_free
from edgepipe.report.schema import BuildReport
from edgepipe.support.render import render_support_markdown


def render_markdown(report: BuildReport) -> str:
    """The Markdown summary: verdict, accuracy, artifacts, latency, stages."""
    icon = {"pass": "✅", "fail": "❌"}.get(report.verdict, "⚠️")
    lines = [
        f"# edgepipe build: {report.model.path} → {report.target}",
        "",
        f"**Verdict: {icon} {report.verdict}** — {report.verdict_reason}",
        "",
    ]
    lines += render_evidence(report)
    if report.accuracy and report.accuracy.metric == "label_free" and report.accuracy.label_free is not None:
        lines += render_label_free(report.accuracy.label_free)
    elif report.accuracy:
        acc = report.accuracy
        lines += [f"## Accuracy ({acc.metric}, {acc.kind} on {acc.samples} evaluation samples, "
                  f"threshold {acc.threshold_points:g} points; int8 on {ARITHMETIC[acc.arithmetic]})", "",
                  "| format | float | int8 | drop (points) | drop 95% CI (paired) |", "|---|---|---|---|---|"]
        for fmt, int8 in acc.int8.items():
            drop = acc.drop_points.get(fmt)
            lines.append(f"| {fmt} | {pct(acc.float_by_format.get(fmt, acc.float))} | {pct(int8)} | "
                         f"{'–' if drop is None else f'{drop:+.2f}'} | {render_interval(acc.drop_interval.get(fmt))} |")
        lines.append("")
        lines += [f"> ⚠️ {warning}" for warning in acc.resolution_warnings]
        lines += [""] if acc.resolution_warnings else []
        if acc.label_free is not None:
            lines += render_label_free(acc.label_free)
    if report.legalization is not None:
        lines += render_legalization(report.legalization, report.support)
    if report.quantization is not None:
        lines += render_quantization(report.quantization)
    lines += ["## Artifacts", "",
              "| file | format | precision | size (bytes) | host latency p50 [95% CI] (ms, measured) |",
              "|---|---|---|---|---|"]
    for art in report.artifacts:
        latency = report.latency_ms.get(art.path)
        shown = "–" if latency is None else f"{latency:.3f}"
        detail = report.latency.get(art.path)
        if detail is not None and detail.ci_low_ms is not None and detail.ci_high_ms is not None:
            shown += f" [{detail.ci_low_ms:.3f}, {detail.ci_high_ms:.3f}]"
        made = f" (made by {art.route})" if art.route else ""
        lines.append(f"| {art.path}{made} | {art.format} | {art.precision} | {art.size_bytes:,} | {shown} |")
    if report.support is not None:
        lines += ["", *render_support_markdown(report.support)]
    if report.performance is not None:
        lines += ["", *render_performance_markdown(report.performance)]
    if report.custom_ops is not None and report.custom_ops.ops:
        lines += ["", *render_custom_ops(report.custom_ops)]
    lines += ["", "## Stages", "", "| stage | status | time (s) | note |", "|---|---|---|---|"]
    for stage in report.stages:
        lines.append(f"| {stage.name} | {stage.status} | {stage.seconds:.2f} | {stage.detail} |")
    lines += ["", f"<sub>edgepipe {report.edgepipe_version}, report schema {report.schema_version}; model sha256 "
              f"`{report.model.sha256[:16]}…`</sub>", ""]
    return "\n".join(lines)


def render_evidence(report: BuildReport) -> list[str]:
    """What the verdict rests on, and the third-party tools that failed (with their next step)."""
    lines = []
    if report.evidence:
        lines += ["| requirement | outcome | detail |", "|---|---|---|"]
        lines += [f"| {e.requirement} | {e.outcome} | {e.detail.replace('|', '/')} |" for e in report.evidence]
        lines.append("")
    if report.failures:
        lines += ["## Tool failures (the build went on without their output)", "",
                  "| stage | tool | artifact | message | next step |", "|---|---|---|---|---|"]
        lines += [f"| {f.stage} | {f.tool} | {f.artifact or '–'} | {f.message.replace('|', '/')} | "
                  f"{f.next_step.replace('|', '/')} |" for f in report.failures]
        lines.append("")
    return lines
