"""``fleet.html``: one self-contained page (no network): the matrix, and a sortable, filterable cell table.

Every cell links to its target's ``report.md``. Sorting (click a column
header) and filtering (a text box, a verdict menu) are a few lines of inline
JavaScript; numbers sort by value, not text.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from edgepipe.fleet.cells import FleetCell
from edgepipe.fleet.render_md import cpu_ops_text, fidelity_text
from edgepipe.fleet.report import FleetReport

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .5em;font-size:.9em}
th{background:#f3f3f3;cursor:pointer;user-select:none}td.num{text-align:right}
.pass{background:#e6f6e6}.fail{background:#fde8e8}.unfinished{background:#fff3d6}
a{color:inherit}.note{color:#555;font-size:.9em}
"""
_SCRIPT = """
function sortBy(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th),
b=t.tBodies[0],d=th.dataset.dir==='asc'?'desc':'asc';th.dataset.dir=d;
const v=r=>{const c=r.children[i],s=c.dataset.v!==undefined?c.dataset.v:c.textContent;const n=parseFloat(s);
return isNaN(n)?s.toLowerCase():n};
[...b.rows].sort((x,y)=>{const a=v(x),c=v(y);const r=a<c?-1:a>c?1:0;return d==='asc'?r:-r})
.forEach(r=>b.appendChild(r))}
function filterRows(){const q=document.getElementById('q').value.toLowerCase(),
s=document.getElementById('verdict').value;
for(const r of document.getElementById('cells').tBodies[0].rows){
const ok=(!q||r.textContent.toLowerCase().includes(q))&&(!s||r.dataset.verdict===s);r.style.display=ok?'':'none'}}
"""
_COLUMNS = ("model", "target", "verdict", "int8 fidelity", "CPU-fallback ops", "partitions",
            "est. latency (ms)", "est. energy (mJ)", "int8 size (bytes)", "cache", "reason")


def _css(cell: FleetCell) -> str:
    if cell.status not in ("built", "restored"):
        return "unfinished"
    return "pass" if cell.verdict == "pass" else "fail"


def _num(value: float | int | None, fmt: str) -> str:
    if value is None:
        return '<td class="num" data-v="-1">–</td>'
    return f'<td class="num" data-v="{value}">{format(value, fmt)}</td>'


def _link(cell: FleetCell, text: str) -> str:
    return f'<a href="{escape(cell.report)}">{escape(text)}</a>' if cell.report else escape(text)


def _matrix(report: FleetReport) -> str:
    head = "".join(f"<th>{escape(t)}</th>" for t in report.targets)
    rows = []
    for model in report.models:
        tds = []
        for target in report.targets:
            cell = report.cell(model, target)
            tds.append("<td></td>" if cell is None else
                       f'<td class="{_css(cell)}" title="{escape(cell.reason)}">{_link(cell, cell.verdict)}</td>')
        rows.append(f"<tr><th>{escape(model)}</th>{''.join(tds)}</tr>")
    return f"<table><thead><tr><th>model</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _row(c: FleetCell) -> str:
    fidelity = c.fidelity
    key = None if fidelity is None else fidelity.int8_top1 if fidelity.int8_top1 is not None else fidelity.min_cosine
    cpu = sum(c.cpu_ops.values()) if c.cpu_ops is not None else -1
    cache = "hit" if c.status == "restored" else c.status
    return (f'<tr class="{_css(c)}" data-verdict="{escape(c.verdict)}"><td>{escape(c.model)}</td>'
            f"<td>{_link(c, c.target)}</td><td>{escape(c.verdict)}</td>"
            f'<td data-v="{-1 if key is None else key}">{escape(fidelity_text(c))}</td>'
            f'<td data-v="{cpu}">{escape(cpu_ops_text(c))}</td>{_num(c.partitions, "d")}'
            f"{_num(c.latency_ms_estimate, '.3f')}{_num(c.energy_mj_estimate, '.4f')}{_num(c.size_bytes, ',')}"
            f"<td>{cache}</td><td>{escape(' '.join(c.reason.split())[:300])}</td></tr>")


def render_fleet_html(report: FleetReport) -> str:
    """The whole page."""
    verdicts = sorted({c.verdict for c in report.cells})
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in verdicts)
    head = "".join(f'<th onclick="sortBy(this)">{escape(c)}</th>' for c in _COLUMNS)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>edgepipe fleet</title>"
            f"<style>{_STYLE}</style></head><body><h1>edgepipe fleet: {escape(report.verdict)}</h1>"
            f"<p>{len(report.models)} model(s) × {len(report.targets)} target(s), {len(report.cells)} cells, "
            f"{report.cache_hits} restored from the build cache; {len(report.jobs)} jobs on "
            f"{escape(report.executor)} in {report.wall_seconds:.1f} s. Each cell links to its target report.</p>"
            f"{_matrix(report)}"
            f"<p class='note'>Latency and energy are the target's <b>estimates</b> in its default power mode "
            f"(estimator and known error in each target report); host-cpu figures are measured.</p>"
            f"<p><input id='q' placeholder='filter' oninput='filterRows()'> "
            f"<select id='verdict' onchange='filterRows()'><option value=''>any verdict</option>{options}</select></p>"
            f"<table id='cells'><thead><tr>{head}</tr></thead><tbody>"
            f"{''.join(_row(c) for c in report.cells)}</tbody></table><script>{_SCRIPT}</script></body></html>\n")


def write_fleet_html(report: FleetReport, path: Path) -> Path:
    path.write_text(render_fleet_html(report), encoding="utf-8")
    return path
