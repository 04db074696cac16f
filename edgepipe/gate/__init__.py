"""The baseline regression gate: compare each target's report with its baseline, check by check.

``compare`` runs every check in :data:`edgepipe.gate.checks.CHECKS` for every
target the current build and the baseline share; a regression anywhere fails
the gate (exit code 2), and the diff table says which target, check and
subject regressed, from what to what, and the tolerance it broke.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from edgepipe.config import GateConfig
from edgepipe.gate.baseline import load_baseline, load_reports, write_baseline
from edgepipe.gate.checks import CHECKS, Finding
from edgepipe.gate.diff import render_diff_markdown, render_diff_text
from edgepipe.report.extract import as_dict

__all__ = ["GateResult", "compare", "load_baseline", "load_reports", "render_diff_markdown", "render_diff_text",
           "write_baseline"]


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
