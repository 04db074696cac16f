"""The legalization section of ``report.md``: placement before and after, and each rewrite's outcome."""

from __future__ import annotations

from edgepipe.legalize.report import LegalizationReport, PlacementSummary
from edgepipe.support.report import SupportReport

_STATUS = {"kept": "✅ kept", "refused": "– refused", "off": "– off"}


def _ops(placement: PlacementSummary) -> str:
    return ", ".join(f"{op} x{count}" for op, count in placement.cpu_ops.items()) or "none"


def render_legalization(report: LegalizationReport, support: SupportReport | None = None) -> list[str]:
    """Markdown lines; ``support`` (the deployed artifact's check) adds the vendor tool's agreement on it."""
    before, after = report.before, report.after
    lines = [f"## Legalization ({report.artifact}, outputs compared on {report.samples} {report.sample_source} "
             "samples)", "",
             f"Placement of the float model: CPU nodes {before.cpu_nodes} → {after.cpu_nodes}, accelerator "
             f"partitions {before.partitions} → {after.partitions}. CPU ops before: {_ops(before)}; after: "
             f"{_ops(after)}.", ""]
    if report.rewrites:
        lines += ["| rewrite | outcome | nodes | max output error | detail |", "|---|---|---|---|---|"]
        for r in report.rewrites:
            error = "–" if r.max_relative_error is None else f"{r.max_relative_error:.1e}"
            lines.append(f"| {r.name} | {_STATUS[r.status]} | {r.nodes} | {error} | {r.rule} {r.reason} |")
        lines.append("")
    else:
        lines += ["No op this target runs on its CPU has a rewrite.", ""]
    if report.kept and support is not None:
        ran = [v for v in support.verification if v.status == "ran"]
        confirm = "; ".join(f"{v.tool} agrees on {v.agree} of {v.compared} nodes" for v in ran)
        lines += [f"The deployed {support.artifact} carries the kept rewrites"
                  + (f" ({confirm})." if confirm else " (no vendor tool ran on it here)."), ""]
    return lines
