"""``fleet.md``: the fleet as a models × targets matrix and a table of every cell (fits a pull request)."""

from __future__ import annotations

from edgepipe.figures import num
from edgepipe.fleet.cells import FleetCell
from edgepipe.fleet.report import FleetReport

_ICONS = {"pass": "✅", "fail": "❌"}


def fidelity_text(cell: FleetCell) -> str:
    """Int8 fidelity in one short string: top-1 and its drop with labels, else the lowest cosine."""
    f = cell.fidelity
    if f is None:
        return "–"
    if f.int8_top1 is not None:
        drop = "" if f.drop_points is None else f" ({f.drop_points:+.2f} pt)"
        return f"top-1 {100 * f.int8_top1:.2f}%{drop}"
    return "–" if f.min_cosine is None else f"cosine {f.min_cosine:.4f}"


def cpu_ops_text(cell: FleetCell) -> str:
    if cell.cpu_ops is None:
        return "not checked"
    return ", ".join(f"{op}×{n}" for op, n in sorted(cell.cpu_ops.items())) or "none"


def icon(cell: FleetCell) -> str:
    return _ICONS.get(cell.verdict, "⚠️") if cell.status in ("built", "restored") else "💥"


def _matrix(report: FleetReport) -> list[str]:
    lines = ["| model | " + " | ".join(report.targets) + " |", "|---|" + "---|" * len(report.targets)]
    for model in report.models:
        row = []
        for target in report.targets:
            cell = report.cell(model, target)
            row.append("" if cell is None else f"{icon(cell)} {cell.verdict}")
        lines.append(f"| {model} | " + " | ".join(row) + " |")
    return lines


def render_fleet_markdown(report: FleetReport) -> str:
    """The whole fleet.md."""
    verdict = _ICONS.get(report.verdict, "")
    done = sum(c.status in ("built", "restored") for c in report.cells)
    lines = ["# edgepipe fleet", "",
             f"**Verdict: {verdict} {report.verdict}** — {len(report.models)} model(s) × {len(report.targets)} "
             f"target(s): {len(report.cells)} cells, {done} finished, {report.cache_hits} restored from the build "
             f"cache; {len(report.jobs)} jobs on `{report.executor}` in {report.wall_seconds:.1f} s.", "",
             *_matrix(report), "",
             "Latency and energy are the target's **estimates** in its default power mode (the estimator and its "
             "known error are in each target report); host-cpu figures are measured.", "",
             "| model | target | verdict | int8 fidelity | CPU-fallback ops | partitions | est. latency (ms) | "
             "est. energy (mJ) | int8 size (bytes) | cache | reason |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in report.cells:
        name = f"[{c.target}]({c.report})" if c.report else c.target
        reason = " ".join(c.reason.split()).replace("|", "/")
        lines.append(f"| {c.model} | {name} | {icon(c)} {c.verdict} | {fidelity_text(c)} | {cpu_ops_text(c)} | "
                     f"{num(c.partitions, 'd')} | {num(c.latency_ms_estimate, '.3f')} | "
                     f"{num(c.energy_mj_estimate, '.4f')} | {num(c.size_bytes, ',')} | "
                     f"{'hit' if c.status == 'restored' else c.status} | {reason[:300]} |")
    lines.append("")
    return "\n".join(lines)
