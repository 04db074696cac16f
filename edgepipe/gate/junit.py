"""``--junit out.xml``: one JUnit test case per target × check, for CI test-report views.

The file follows the common JUnit XML format (Ant's ``XMLJUnitResultFormatter``,
as the Jenkins xUnit plugin's ``junit-10.xsd`` and GitLab's ``artifacts:reports:junit``
read it): ``<testsuites>`` → one ``<testsuite>`` per target → ``<testcase>`` per check,
with ``<failure>`` for a failed check and ``<skipped>`` for one that does not apply.
Checks: the verdict's evidence (int8 artifact, accuracy gate, compatibility and, where the
profile requires it, vendor compile: "not proven" is a failure, "not gated"/"not checked" a
skip), op support, the latency budget and, with a baseline, one case per baseline comparison
(accuracy, int8 drop, latency, placement, size).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from edgepipe.config import GateConfig
from edgepipe.output import write_text_atomic
from edgepipe.report import extract
from edgepipe.report.schema import BuildReport

if TYPE_CHECKING:
    from edgepipe.gate import GateResult


@dataclass(frozen=True)
class CaseResult:
    """One test case: its name, outcome and the message CI shows."""

    name: str
    outcome: Literal["passed", "failed", "skipped"]
    message: str
    detail: str = ""


_CASE_NAMES = {"accuracy": "accuracy gate"}
_OUTCOMES: dict[str, Literal["passed", "failed", "skipped"]] = {
    "met": "passed", "failed": "failed", "not proven": "failed", "not gated": "skipped", "not checked": "skipped"}


def evidence_cases(report: BuildReport) -> list[CaseResult]:
    """One case per piece of the verdict's evidence; a 'not proven' one fails, saying so."""
    cases = []
    for item in report.evidence:
        message = f"not proven: {item.detail}" if item.outcome == "not proven" else item.detail
        cases.append(CaseResult(_CASE_NAMES.get(item.requirement, item.requirement), _OUTCOMES[item.outcome],
                                message))
    if not report.evidence:  # a report from before evidence was recorded
        cases.append(CaseResult("accuracy gate", "passed" if report.verdict == "pass" else "failed",
                                report.verdict_reason))
    return cases


def support_case(report: BuildReport, device_class: str | None) -> CaseResult:
    """Op support: every op runs on the target's accelerator (any op on a CPU-only target)."""
    placed = extract.placements(report)
    if placed is None:
        return CaseResult("op support", "skipped", "no support check ran for this target")
    if device_class == "cpu":
        return CaseResult("op support", "passed", f"CPU target: all {len(placed)} ops run on the CPU")
    on_cpu = sorted(op for op, unit in placed.items() if unit == "cpu")
    if on_cpu:
        return CaseResult("op support", "failed", f"{len(on_cpu)} of {len(placed)} ops fall back to the CPU",
                          "\n".join(on_cpu))
    return CaseResult("op support", "passed", f"all {len(placed)} ops run on the accelerator")


def latency_case(report: BuildReport, budget_ms: float | None) -> CaseResult:
    """The latency budget (``gate.latency_budget_ms``): the target's latency at most the budget (ms)."""
    latency = extract.deployed_latency_ms(report)
    if budget_ms is None:
        return CaseResult("latency budget", "skipped", "no latency budget set (gate.latency_budget_ms)")
    if latency is None:
        return CaseResult("latency budget", "skipped", "no latency measured or estimated")
    value, source = latency
    ok = value <= budget_ms
    return CaseResult("latency budget", "passed" if ok else "failed",
                      f"{value:.4g} ms ({source}) {'≤' if ok else '>'} budget {budget_ms:g} ms")


def baseline_cases(target: str, gate: GateResult) -> list[CaseResult]:
    """One case per baseline check for ``target``."""
    from edgepipe.gate.checks import CHECKS

    if target not in gate.compared:
        return [CaseResult("baseline", "skipped", "no baseline for this target")]
    cases = []
    for check, _ in CHECKS:
        findings = gate.for_target(target, check)
        bad = [f for f in findings if f.regression]
        name = f"baseline {check}"
        if not findings:
            cases.append(CaseResult(name, "skipped", "nothing to compare in the baseline"))
        elif bad:
            cases.append(CaseResult(name, "failed", f"{len(bad)} regression(s)", "\n".join(
                f"{f.subject}: {f.baseline} → {f.current} (tolerance {f.tolerance})" for f in bad)))
        else:
            cases.append(CaseResult(name, "passed", f"{len(findings)} value(s) within tolerance"))
    return cases


def _suite(parent: ET.Element, target: str, cases: list[CaseResult], seconds: float) -> None:
    suite = ET.SubElement(parent, "testsuite", name=target, tests=str(len(cases)),
                          failures=str(sum(c.outcome == "failed" for c in cases)), errors="0",
                          skipped=str(sum(c.outcome == "skipped" for c in cases)), time=f"{seconds:.3f}")
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=f"edgepipe.{target}", name=case.name, time="0")
        if case.outcome == "failed":
            failure = ET.SubElement(element, "failure", message=case.message, type=case.name)
            failure.text = case.detail or case.message
        elif case.outcome == "skipped":
            ET.SubElement(element, "skipped", message=case.message)
        else:
            ET.SubElement(element, "system-out").text = case.message


def render_junit(reports: list[BuildReport], tolerances: GateConfig, gate: GateResult | None = None,
                 device_classes: dict[str, str] | None = None) -> str:
    """The JUnit XML document for ``reports`` (one suite per target)."""
    root = ET.Element("testsuites", name="edgepipe")
    totals = {"tests": 0, "failures": 0}
    for report in reports:
        cases = [*evidence_cases(report), support_case(report, (device_classes or {}).get(report.target)),
                 latency_case(report, tolerances.latency_budget_ms)]
        if gate is not None:
            cases += baseline_cases(report.target, gate)
        seconds = sum(stage.seconds for stage in report.stages)
        _suite(root, report.target, cases, seconds)
        totals["tests"] += len(cases)
        totals["failures"] += sum(c.outcome == "failed" for c in cases)
    root.set("tests", str(totals["tests"]))
    root.set("failures", str(totals["failures"]))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(reports: list[BuildReport], path: Path, tolerances: GateConfig, gate: GateResult | None = None,
                device_classes: dict[str, str] | None = None) -> Path:
    """Write the JUnit XML for ``reports`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, render_junit(reports, tolerances, gate, device_classes))
