"""``report.html``: every target of a build on one self-contained page (inline CSS and SVG, no network).

Sections (each a ``<section id=…>``): ``summary`` (verdicts), ``pareto``
(accuracy vs latency vs energy across targets, with the Pareto front),
``sensitivity`` (per-layer quantization sensitivity, from the ``quantization``
section when a build has it), ``placement`` (ops on the accelerator vs the CPU
per target, from ``support`` or the performance estimate) and ``targets``
(each target's accuracy and artifacts). A section without data says why.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from edgepipe.figures import pct
from edgepipe.output import write_text_atomic
from edgepipe.report import extract, plots
from edgepipe.report.accuracy_stats import render_interval
from edgepipe.report.schema import AccuracyInfo, BuildReport
from edgepipe.report.summary import overall_verdict

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:60rem;color:#1b1f23;
background:#fff;padding:0 1rem}
h1{font-size:1.6rem;border-bottom:3px solid #0b6e4f;padding-bottom:.4rem}
h2{font-size:1.25rem;margin-top:2rem;color:#0b6e4f}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.9rem}
th,td{border:1px solid #d0d7de;padding:.3rem .6rem;text-align:left}
th{background:#f0f4f2}
.pass{color:#0b6e4f;font-weight:600}.fail{color:#b42318;font-weight:600}.not-proven{color:#b54708;font-weight:600}
.note{color:#57606a;font-style:italic}.warn{color:#9a6700}
figure{margin:0}svg{max-width:100%;height:auto}
"""


def _verdict(verdict: str) -> str:
    css = verdict.replace(" ", "-")
    return f'<span class="{escape(css)}">{"✓" if verdict == "pass" else "✗"} {escape(verdict)}</span>'


def _evidence(report: BuildReport) -> str:
    """The verdict's evidence and the tools that failed, as two small tables."""
    html = ""
    if report.evidence:
        html += ("<table><tr><th>requirement</th><th>outcome</th><th>detail</th></tr>" + "".join(
            f"<tr><td>{escape(e.requirement)}</td><td>{escape(e.outcome)}</td><td>{escape(e.detail)}</td></tr>"
            for e in report.evidence) + "</table>")
    if report.failures:
        html += ("<table><tr><th>stage</th><th>tool</th><th>message</th><th>next step</th></tr>" + "".join(
            f"<tr><td>{escape(f.stage)}</td><td>{escape(f.tool)}</td><td>{escape(f.message)}</td>"
            f"<td>{escape(f.next_step)}</td></tr>" for f in report.failures) + "</table>")
    return html


def _summary(reports: list[BuildReport]) -> str:
    rows = []
    for report in reports:
        latency = extract.deployed_latency_ms(report)
        energy = extract.energy_mj(report)
        rows.append(f"<tr><td>{escape(report.target)}</td><td>{_verdict(report.verdict)}</td>"
                    f"<td>{pct(extract.best_int8_accuracy(report))}</td>"
                    f"<td>{'–' if latency is None else f'{latency[0]:.4g} ({escape(latency[1])})'}</td>"
                    f"<td>{'–' if energy is None else f'{energy:.4g} (model estimate)'}</td>"
                    f"<td>{escape(report.verdict_reason)}</td></tr>")
    return ("<table><tr><th>target</th><th>verdict</th><th>int8 accuracy (measured)</th><th>latency (ms)</th>"
            "<th>energy (mJ)</th><th>reason</th></tr>" + "".join(rows) + "</table>")


def _pareto(reports: list[BuildReport]) -> str:
    points = []
    for report in reports:
        accuracy, latency = extract.best_int8_accuracy(report), extract.deployed_latency_ms(report)
        if accuracy is not None and latency is not None:
            points.append(plots.TargetPoint(report.target, 100 * accuracy, latency[0], extract.energy_mj(report)))
    if not points:
        return '<p class="note">No target has both an accuracy and a latency: nothing to plot.</p>'
    front = ", ".join(escape(p.target) for p in plots.pareto_front(points))
    return (f"<figure>{plots.pareto_svg(points)}</figure><p>Pareto front (no other target is both faster and "
            f"more accurate): {front}. Latency is the target's estimate (vendor or model estimate) where the build "
            f"has one, else the measured host median of the int8 TFLite model; energy is a model estimate.</p>")


#: Layers shown per sensitivity plot: the most sensitive ones.
SENSITIVITY_LAYERS = 20


def _sensitivity(reports: list[BuildReport]) -> str:
    """One plot per distinct sensitivity: targets quantized alike share one, named in its title."""
    groups: dict[tuple, tuple[extract.LayerScores, list[str]]] = {}
    for report in reports:
        scores = extract.layer_sensitivity(report)
        if scores is not None:
            key = (scores.label, tuple(sorted(scores.values.items())))
            groups.setdefault(key, (scores, []))[1].append(report.target)
    parts = []
    for scores, targets in groups.values():
        ranked = sorted(scores.values.items(), key=lambda kv: kv[1], reverse=scores.higher_is_worse)
        shown = dict(ranked[:SENSITIVITY_LAYERS])
        title = f"{len(shown)} most sensitive layers — {', '.join(targets)}"
        parts.append(f"<figure>{plots.sensitivity_svg('', shown, scores.label)}"
                     f"<figcaption>{escape(title)}</figcaption></figure>")
    return "".join(parts) or ('<p class="note">No per-layer sensitivity in these reports: the quantization stage '
                              "did not record one.</p>")


def _placement(reports: list[BuildReport]) -> str:
    counts = {}
    cpu_ops = []
    for report in reports:
        placed = extract.placements(report)
        if placed:
            on_cpu = sorted(op for op, unit in placed.items() if unit == "cpu")
            counts[report.target] = (len(placed) - len(on_cpu), len(on_cpu))
            if on_cpu:
                cpu_ops.append(f"<li>{escape(report.target)}: {escape(', '.join(on_cpu))}</li>")
    if not counts:
        return '<p class="note">No op placement in these reports: no support check ran.</p>'
    listing = (f"<p>Ops on the CPU:</p><ul>{''.join(cpu_ops)}</ul>" if cpu_ops
               else "<p>Every op runs on the accelerator.</p>")
    return f"<figure>{plots.placement_svg(counts)}</figure>{listing}"


def _accuracy(acc: AccuracyInfo) -> str:
    """The accuracy table (measured) with each drop's paired 95% interval, and the resolution warnings."""
    rows = "".join(f"<tr><td>{escape(fmt)}</td><td>{pct(acc.float_by_format.get(fmt, acc.float))}</td>"
                   f"<td>{pct(value)}</td><td>{acc.drop_points.get(fmt, 0.0):+.2f}</td>"
                   f"<td>{render_interval(acc.drop_interval.get(fmt))}</td></tr>" for fmt, value in acc.int8.items())
    warnings = "".join(f'<p class="warn">⚠ {escape(w)}</p>' for w in acc.resolution_warnings)
    return (f"<table><caption>{escape(acc.kind)} on {acc.samples} samples</caption><tr><th>format</th>"
            "<th>float</th><th>int8</th><th>drop (points)</th><th>drop 95% CI (paired)</th></tr>"
            f"{rows}</table>{warnings}")


def _target(report: BuildReport) -> str:
    rows = "".join(f"<tr><td>{escape(a.path)}</td><td>{a.format}</td><td>{a.precision}</td><td>{a.size_bytes:,}</td>"
                   f"<td>{report.latency_ms.get(a.path, float('nan')):.4f}</td></tr>" for a in report.artifacts)
    accuracy = _accuracy(report.accuracy) if report.accuracy else ""
    return (f'<h3 id="target-{escape(report.target)}">{escape(report.target)} — {_verdict(report.verdict)}</h3>'
            f"<p>{escape(report.verdict_reason)}</p>{_evidence(report)}{accuracy}<table><tr><th>file</th><th>format</th>"
            f"<th>precision</th><th>size (bytes)</th><th>host latency p50 (ms, measured)</th></tr>{rows}</table>")


def render_html(reports: list[BuildReport]) -> str:
    """The whole page for ``reports`` (one per target, same model)."""
    model = reports[0].model
    overall = overall_verdict([r.verdict for r in reports])
    sections = [("summary", "Summary", _summary(reports)),
                ("pareto", "Accuracy, latency and energy across targets", _pareto(reports)),
                ("sensitivity", "Per-layer quantization sensitivity", _sensitivity(reports)),
                ("placement", "Op placement per target", _placement(reports)),
                ("targets", "Targets", "".join(_target(r) for r in reports))]
    body = "".join(f'<section id="{sid}"><h2>{title}</h2>{content}</section>' for sid, title, content in sections)
    title = f"edgepipe report: {Path(model.path).name}"
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{_CSS}</style></head>'
            f"<body><h1>{escape(title)}</h1><p>Verdict: {_verdict(overall)} · {len(reports)} target(s) · "
            f"edgepipe {escape(reports[0].edgepipe_version)} · model sha256 <code>{model.sha256[:16]}…</code></p>"
            f"{body}</body></html>\n")


def write_html(reports: list[BuildReport], path: Path) -> Path:
    """Write ``report.html`` for ``reports`` to ``path``."""
    return write_text_atomic(path, render_html(reports))
