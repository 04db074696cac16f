"""Text renderings of a :class:`SupportReport`: the terminal table and the Markdown section."""

from __future__ import annotations

from edgepipe.support.report import SupportReport, Verification


def _bytes(value: int | None) -> str:
    return "–" if value is None else f"{value / 1024:,.1f} KiB"


def summary_line(report: SupportReport) -> str:
    """One line: shares on the accelerator, partitions, memory against SRAM."""
    sram = "" if report.sram_bytes is None else (
        f", peak activations {_bytes(report.peak_activation_bytes)} "
        f"{'≤' if report.fits_sram else '>'} SRAM {_bytes(report.sram_bytes)}")
    return (f"{report.target}: {report.accelerator_nodes}/{report.nodes} nodes "
            f"({100 * report.node_share:.1f}%) and {100 * report.mac_share:.1f}% of MACs on the accelerator, "
            f"{report.partitions} accelerator partition(s), {report.transitions} transition(s){sram}")


def blocker_line(report: SupportReport) -> str:
    """One line naming the nodes the target's compiler rejects with the whole graph; '' when there are none."""
    if not report.compile_blockers:
        return ""
    named = "; ".join(b.named() for b in report.compile_blockers[:4])
    more = f" (+{len(report.compile_blockers) - 4} more)" if len(report.compile_blockers) > 4 else ""
    return f"{report.target}: the compiler cannot compile this graph: {named}{more} — {report.compile_blockers[0].rule}"


def _verification_rows(verifications: list[Verification]) -> list[str]:
    rows = []
    for v in verifications:
        extra = ", ".join(f"{k}: {x:.4g}" if isinstance(x, float) else f"{k}: {x}" for k, x in v.extra.items())
        figures = (f"{v.agree}/{v.compared} agree ({100 * v.agreement:.1f}%), edgepipe only {v.edgepipe_only}, "
                   f"vendor only {v.vendor_only}" if v.compared else extra)
        note = "; ".join(part for part in (v.detail, extra if v.compared else "") if part)
        rows.append(f"| {v.tool} | {v.status} | {figures} | {note} |")
    return rows


def render_table(report: SupportReport) -> str:
    """The per-node table for the terminal: CPU nodes with their failed constraint, then the summary."""
    lines = [f"{'#':>4}  {'op':<22} {'placement':<11} reason", "-" * 80]
    for v in report.node_verdicts:
        reason = v.failed[0].detail if v.failed else ""
        lines.append(f"{v.index:>4}  {v.op[:22]:<22} {v.placement:<11} {reason}")
    lines += ["-" * 80, summary_line(report)]
    if report.compile_blockers:
        lines.append(blocker_line(report))
    for check in report.verification:
        lines.append(_verification_rows([check])[0].strip("| ").replace(" | ", " — "))
    return "\n".join(lines)


def render_support_markdown(report: SupportReport) -> list[str]:
    """The report.md section: summary, CPU nodes with reasons, vendor agreement."""
    lines = [f"## Operator support on {report.target} ({report.format}, {report.partition_semantics} partitioning)",
             "", summary_line(report) + ".", ""]
    if report.compile_blockers:
        lines += [blocker_line(report), ""]
    cpu = [v for v in report.node_verdicts if v.placement == "cpu"]
    if cpu:
        lines += ["| node | op | failed constraint | detail |", "|---|---|---|---|"]
        for v in cpu[:50]:
            failure = v.failed[0] if v.failed else None
            lines.append(f"| `{v.name[:60]}` | {v.op} | {failure.constraint if failure else ''} | "
                         f"{failure.detail if failure else ''} |")
        if len(cpu) > 50:
            lines.append(f"| … | {len(cpu) - 50} more in report.json | | |")
        lines.append("")
    if report.verification:
        lines += ["| vendor tool | status | agreement | note |", "|---|---|---|---|",
                  *_verification_rows(report.verification), ""]
    return lines
