"""The baseline regression gate: compare each target's report with its baseline, check by check.

``compare`` runs every check in :data:`edgepipe.gate.checks.CHECKS` for every
target the current build and the baseline share; a regression anywhere fails
the gate (exit code 2), and the diff table says which target, check and
subject regressed, from what to what, and the tolerance it broke.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from edgepipe.config import GateConfig
from edgepipe.gate.baseline import load_baseline, load_reports, write_baseline
from edgepipe.gate.checks import CHECKS, Finding
from edgepipe.gate.diff import render_diff_markdown, render_diff_text
from edgepipe.output import write_text_atomic
from edgepipe.report.extract import as_dict
from edgepipe.report.summary import SUMMARY_MD

__all__ = ["GateResult", "apply_baseline", "compare", "load_baseline", "load_reports", "render_diff_markdown",
           "render_diff_text", "write_baseline"]


@dataclass
class GateResult:
    """Every finding of one comparison, plus the targets without a baseline."""

    findings: list[Finding] = field(default_factory=list)
    compared: list[str] = field(default_factory=list)
    without_baseline: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[Finding]:
        return [f for f in self.findings if f.regression]

    @property
    def passed(self) -> bool:
        return not self.regressions

    def for_target(self, target: str, check: str) -> list[Finding]:
        return [f for f in self.findings if f.target == target and f.check == check]


def compare(current: Mapping[str, Any], baseline: Mapping[str, Any], tolerances: GateConfig) -> GateResult:
    """Compare each target of ``current`` with the same target of ``baseline`` (reports as ``BuildReport`` or
    plain dicts; targets only in the baseline are not compared: a CI matrix job builds one target against a
    baseline of all of them)."""
    result = GateResult()
    for name, report in current.items():
        if name not in baseline:
            result.without_baseline.append(name)
            continue
        result.compared.append(name)
        old, new = as_dict(baseline[name]), as_dict(report)
        for _, check in CHECKS:
            result.findings.extend(check(old, new, tolerances))
    return result


def apply_baseline(current: Mapping[str, Any], baseline: Mapping[str, Any], tolerances: GateConfig,
                   root: Path) -> GateResult:
    """The baseline gate of a finished build: compare, and add the diff to ``<root>/summary.md`` (the file
    posted to a pull request), so every caller of ``run_build`` gets it, not only the CLI."""
    result = compare(current, baseline, tolerances)
    path = root / SUMMARY_MD
    if path.is_file():
        write_text_atomic(path, path.read_text(encoding="utf-8").rstrip("\n") + "\n\n" + render_diff_markdown(result))
    return result
