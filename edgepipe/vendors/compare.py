"""Op-by-op agreement between edgepipe's placement and a vendor compiler's, with per-class (CPU-op) figures.

Every node edgepipe placed is compared: one the vendor did not report counts as a disagreement
(``edgepipe_unmatched``), and so does every vendor node or layer edgepipe's graph lacks (``vendor_unmatched``).
CPU is the class that matters for deployment: ``extra`` carries ``vendor_cpu`` (ops the vendor leaves on the
CPU, unmatched ones included), ``edgepipe_cpu`` and ``both_cpu``, from which CPU-op recall
(``both_cpu / vendor_cpu``) and precision (``both_cpu / edgepipe_cpu``) follow.
"""

from __future__ import annotations

from typing import Literal

from edgepipe.support.report import OpAgreement, SupportReport, Verification
from edgepipe.vendors.base import CompileResult

VerificationStatus = Literal["ran", "not installed", "failed", "compile_failed"]
_STATUS: dict[str, VerificationStatus] = {"compiled": "ran", "compile_failed": "compile_failed", "failed": "failed",
                                          "not installed": "not installed"}


def compare(report: SupportReport, result: CompileResult) -> Verification:
    """The vendor's placement against ``report``'s, or the reason there is none."""
    verification = Verification(tool=result.tool, status=_STATUS[result.status], detail=result.detail,
                                extra={**result.extra, **result.estimate})
    if result.status != "compiled":
        return verification
    missing: list[str] = []
    counts = {"vendor_cpu": 0, "edgepipe_cpu": 0, "both_cpu": 0}
    for verdict in report.node_verdicts:
        verification.compared += 1
        theirs = result.placement.get(verdict.name)
        counts["edgepipe_cpu"] += verdict.placement == "cpu"
        if theirs is None:
            missing.append(verdict.name)
            continue
        counts["vendor_cpu"] += theirs == "cpu"
        counts["both_cpu"] += theirs == "cpu" == verdict.placement
        if theirs == verdict.placement:
            verification.agree += 1
            continue
        if verdict.placement == "accelerator":
            verification.edgepipe_only += 1
        else:
            verification.vendor_only += 1
        verification.disagreements.append(OpAgreement(name=verdict.name, op=verdict.op, edgepipe=verdict.placement,
                                                      vendor=theirs))
    verification.compared += len(result.unmatched)
    counts["vendor_cpu"] += sum(1 for p in result.unmatched.values() if p == "cpu")
    verification.extra.update({k: float(v) for k, v in counts.items()})
    verification.extra["edgepipe_unmatched"] = float(len(missing))
    verification.extra["vendor_unmatched"] = float(len(result.unmatched))
    if missing or result.unmatched:
        verification.extra["unmatched_names"] = "; ".join([*missing, *result.unmatched][:20])
    wrong = verification.compared - verification.agree
    if wrong:
        verification.detail = (f"{wrong} of {verification.compared} op(s) placed differently or unmatched: "
                               f"a bug in the '{report.target}' profile")
    return verification
