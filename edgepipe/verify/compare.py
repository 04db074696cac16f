"""Op-by-op agreement between edgepipe's placement and a vendor tool's, and the dispatch to the right tool."""

from __future__ import annotations

import logging
from pathlib import Path

from edgepipe.support.report import OpAgreement, Placement, SupportReport, Verification
from edgepipe.targets.profile import TargetProfile

log = logging.getLogger(__name__)


def compare(tool: str, report: SupportReport, vendor: dict[str, Placement]) -> Verification:
    """Agreement on every node both placed (matched by name); a disagreement is a profile bug."""
    result = Verification(tool=tool, status="ran")
    for verdict in report.node_verdicts:
        theirs = vendor.get(verdict.name)
        if theirs is None:
            continue
        result.compared += 1
        if theirs == verdict.placement:
            result.agree += 1
            continue
        if verdict.placement == "accelerator":
            result.edgepipe_only += 1
        else:
            result.vendor_only += 1
        result.disagreements.append(OpAgreement(name=verdict.name, op=verdict.op, edgepipe=verdict.placement,
                                                vendor=theirs))
    if result.disagreements:
        result.detail = (f"{len(result.disagreements)} op(s) placed differently: a bug in the "
                         f"'{report.target}' profile")
    return result


def verify_report(report: SupportReport, profile: TargetProfile, model: Path, workdir: Path) -> list[Verification]:
    """Run every vendor tool that applies to this target and artifact; missing tools are reported, not fatal."""
    from edgepipe.verify import gpu_analyzer, mobile_usability, qnn, vela

    results: list[Verification] = []
    if profile.name.startswith("ethos-u") and report.format == "tflite":
        accelerator = "ethos-u85-256" if profile.name == "ethos-u85" else "ethos-u55-128"
        results.append(vela.verify(report, model, accelerator, workdir))
    if profile.name == "mobile-npu" and report.format == "onnx":
        results.append(qnn.verify(report, model))
        results.append(mobile_usability.second_opinion(model))
    if report.format == "tflite" and profile.device_class in ("gpu", "npu") and not profile.name.startswith("ethos"):
        results.append(gpu_analyzer.second_opinion(model))
    for result in results:
        log.info("%s: %s %s", result.tool, result.status, result.detail)
    return results
