"""The regression checks: each compares one aspect of a target's report with its baseline.

A check is a function ``(baseline, current, tolerances) -> [Finding]``; its
docstring is the rule. Adding one is one function here plus one line in
:data:`CHECKS`. Reports are plain dicts (``BuildReport.model_dump()``) so that
optional sections (``support``, ``performance``) are read when present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edgepipe.config import GateConfig
from edgepipe.figures import pct
from edgepipe.report import extract

Report = dict[str, Any]


@dataclass(frozen=True)
class Finding:
    """One compared value: where (target, check, subject), both values as text, the tolerance, and the outcome."""

    target: str
    check: str
    subject: str
    baseline: str
    current: str
    tolerance: str
    regression: bool

    @property
    def changed(self) -> bool:
        return self.regression or self.baseline != self.current


Check = Callable[[Report, Report, GateConfig], list[Finding]]


def check_accuracy(baseline: Report, current: Report, tol: GateConfig) -> list[Finding]:
    """Float and int8 accuracy (per format) may fall by at most ``gate.accuracy_points`` percentage points."""
    old, new = baseline.get("accuracy") or {}, current.get("accuracy") or {}
    if not old:
        return []
    target, tolerance = current["target"], f"-{tol.accuracy_points:g} points"
    pairs = [("float", old.get("float"), new.get("float"))]
    new_int8 = new.get("int8") or {}
    pairs += [(f"int8 {fmt}", value, new_int8.get(fmt)) for fmt, value in (old.get("int8") or {}).items()]
    findings = []
    for subject, before, after in pairs:
        if before is None:
            continue
        fell = after is None or 100 * (before - after) > tol.accuracy_points + 1e-9
        findings.append(Finding(target, "accuracy", subject, pct(before),
                                "not measured" if after is None else pct(after), tolerance, fell))
    return findings


def check_int8_drop(baseline: Report, current: Report, tol: GateConfig) -> list[Finding]:
    """The float→int8 drop of each format may grow by at most ``gate.drop_points`` percentage points."""
    old = (baseline.get("accuracy") or {}).get("drop_points") or {}
    new = (current.get("accuracy") or {}).get("drop_points") or {}
    findings = []
    for fmt, before in old.items():
        after = new.get(fmt)
        grew = after is None or after - before > tol.drop_points + 1e-9
        findings.append(Finding(current["target"], "int8 drop", fmt, f"{before:+.2f} points",
                                "not measured" if after is None else f"{after:+.2f} points",
                                f"+{tol.drop_points:g} points", grew))
    return findings


def _interval(detail: dict[str, Any]) -> str:
    low, high = detail.get("ci_low_ms"), detail.get("ci_high_ms")
    median = f"{detail['median_ms']:.4g} ms"
    return median if low is None or high is None else f"{median} [{low:.4g}, {high:.4g}]"


def check_latency(baseline: Report, current: Report, tol: GateConfig) -> list[Finding]:
    """Host latency of an artifact regresses when the 95% confidence intervals of the two medians do not
    overlap and the new one is slower: new CI low > old CI high × (1 + ``gate.latency_slack_pct``/100).
    Without intervals (an old baseline) the medians are shown but not gated. An estimated target latency
    (``performance``), being deterministic, may grow by at most ``gate.latency_slack_pct`` %.
    """
    target, slack = current["target"], 1 + tol.latency_slack_pct / 100
    old, new = baseline.get("latency") or {}, current.get("latency") or {}
    findings = []
    for artifact, before in old.items():
        after = new.get(artifact)
        if after is None:
            continue
        high, low = before.get("ci_high_ms"), after.get("ci_low_ms")
        gated = high is not None and low is not None
        tolerance = (f"CI overlap{f' + {tol.latency_slack_pct:g}%' if tol.latency_slack_pct else ''}"
                     if gated else "no CI in baseline: not gated")
        findings.append(Finding(target, "latency", artifact, _interval(before), _interval(after), tolerance,
                                gated and low > high * slack))
    old_estimate, new_estimate = extract.estimated_latency_ms(baseline), extract.estimated_latency_ms(current)
    if old_estimate is not None and new_estimate is not None:
        findings.append(Finding(target, "latency", "target estimate", f"{old_estimate:.4g} ms",
                                f"{new_estimate:.4g} ms", f"+{tol.latency_slack_pct:g}%",
                                new_estimate > old_estimate * slack + 1e-12))
    return findings


def check_placement(baseline: Report, current: Report, tol: GateConfig) -> list[Finding]:
    """An op that the baseline ran on the accelerator (or did not have) and that now runs on the CPU is a
    regression, when ``gate.placement`` is on and both reports have op placement."""
    old, new = extract.placements(baseline), extract.placements(current)
    if not tol.placement or old is None or new is None:
        return []
    target = current["target"]
    findings = [Finding(target, "placement", op, old.get(op, "absent"), "cpu", "no new CPU ops", True)
                for op, unit in new.items() if unit == "cpu" and old.get(op) != "cpu"]
    old_cpu = sum(u == "cpu" for u in old.values())
    new_cpu = sum(u == "cpu" for u in new.values())
    findings.append(Finding(target, "placement", "ops on the CPU", f"{old_cpu} of {len(old)}",
                            f"{new_cpu} of {len(new)}", "no new CPU ops", bool(findings)))
    return findings


def check_size(baseline: Report, current: Report, tol: GateConfig) -> list[Finding]:
    """An artifact may grow by at most ``gate.size_pct`` % (bytes); a missing artifact is a regression."""
    old = {a["path"]: a["size_bytes"] for a in baseline.get("artifacts") or []}
    new = {a["path"]: a["size_bytes"] for a in current.get("artifacts") or []}
    findings = []
    for path, before in old.items():
        after = new.get(path)
        grew = after is None or after > before * (1 + tol.size_pct / 100)
        findings.append(Finding(current["target"], "size", path, f"{before:,} B",
                                "missing" if after is None else f"{after:,} B", f"+{tol.size_pct:g}%", grew))
    return findings


#: Every check, in the order the diff table shows them.
CHECKS: list[tuple[str, Check]] = [
    ("accuracy", check_accuracy),
    ("int8 drop", check_int8_drop),
    ("latency", check_latency),
    ("placement", check_placement),
    ("size", check_size),
]
