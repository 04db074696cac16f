"""The gate's diff table: Markdown for pull requests and step summaries, aligned text for logs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from edgepipe.gate.checks import Finding

if TYPE_CHECKING:
    from edgepipe.gate import GateResult

_COLUMNS = ("target", "check", "subject", "baseline", "current", "tolerance", "status")


def _rows(result: GateResult) -> list[tuple[str, ...]]:
    """Changed or regressed findings, regressions first."""
    shown = sorted((f for f in result.findings if f.changed), key=lambda f: not f.regression)
    return [_row(f) for f in shown]


def _row(finding: Finding) -> tuple[str, ...]:
    return (finding.target, finding.check, finding.subject, finding.baseline, finding.current, finding.tolerance,
            "REGRESSION" if finding.regression else "ok")


def _headline(result: GateResult) -> str:
    unchanged = sum(not f.changed for f in result.findings)
    regressions = len(result.regressions)
    verdict = f"{regressions} regression(s)" if regressions else "no regressions"
    line = (f"baseline gate: {verdict} in {len(result.compared)} target(s) "
            f"({len(result.findings)} values compared, {unchanged} unchanged)")
    if result.without_baseline:
        line += f"; no baseline for {', '.join(result.without_baseline)}"
    return line


def render_diff_text(result: GateResult) -> str:
    """The diff as an aligned plain-text table (for terminals and CI logs)."""
    rows = _rows(result)
    lines = [_headline(result)]
    if rows:
        widths = [max(len(r[i]) for r in [_COLUMNS, *rows]) for i in range(len(_COLUMNS))]
        for row in [_COLUMNS, *rows]:
            lines.append("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return "\n".join(lines) + "\n"


def render_diff_markdown(result: GateResult) -> str:
    """The diff as a Markdown section (for pull-request comments and ``$GITHUB_STEP_SUMMARY``)."""
    icon = "❌" if result.regressions else "✅"
    lines = ["## Baseline comparison", "", f"{icon} {_headline(result)}", ""]
    rows = _rows(result)
    if rows:
        lines += ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        for row in rows:
            cells = list(row)
            cells[-1] = f"**{cells[-1]}**" if cells[-1] == "REGRESSION" else cells[-1]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    return "\n".join(lines)
