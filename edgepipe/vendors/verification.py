"""Run the target's vendor compiler on the checked artifact and compare its placement with edgepipe's.

The profile's ``vendor_tool`` names the toolchain and its options (:mod:`edgepipe.vendors.registry`); a tool
that is not installed is a ``not installed`` result naming its install command, never an error. Second
opinions (ONNX Runtime's mobile-usability checker, the TFLite GPU analyzer) are reported beside it, not
counted in the agreement.
"""

from __future__ import annotations

import logging
from pathlib import Path

from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.graph.opgraph import OpGraph
from edgepipe.graph.tflite_reader import read_tflite
from edgepipe.support.report import SupportReport, Verification
from edgepipe.targets.profile import TargetProfile
from edgepipe.vendors import ort_mobile, tflite_gpu
from edgepipe.vendors.base import CompileResult
from edgepipe.vendors.compare import compare
from edgepipe.vendors.registry import toolchain_for

log = logging.getLogger(__name__)


def vendor_verification(report: SupportReport, profile: TargetProfile, model: Path, workdir: Path,
                        graph: OpGraph | None = None) -> Verification | None:
    """The profile's vendor compiler on ``model``: its placement against ``report``'s (None: the profile names
    no vendor tool)."""
    found = toolchain_for(profile)
    if found is None:
        return None
    tool, options = found
    if graph is None:
        graph = read_onnx(model) if report.format == "onnx" else read_tflite(model)
    return compare(report, tool.compile(model, graph, options, workdir))


def installed_compiler(profile: TargetProfile) -> str | None:
    """The label (tool and options) of the profile's vendor compiler when it is installed here, else None."""
    found = toolchain_for(profile)
    if found is None or not found[0].available():
        return None
    return found[0].label(found[1])


def compile_artifact(profile: TargetProfile, model: Path, workdir: Path) -> CompileResult | None:
    """The profile's vendor compiler on ``model`` (a file of the format it deploys), with the options the support
    check uses; None when the profile names no vendor tool."""
    found = toolchain_for(profile)
    if found is None:
        return None
    tool, options = found
    graph = read_tflite(model) if model.suffix == ".tflite" else read_onnx(model)
    return tool.compile(model, graph, options, workdir)


def verify_report(report: SupportReport, profile: TargetProfile, model: Path, workdir: Path,
                  second_opinions: bool = True) -> list[Verification]:
    """The vendor comparison and (with ``second_opinions``) the second opinions that apply to this artifact."""
    results: list[Verification] = []
    vendor = vendor_verification(report, profile, model, workdir)
    if vendor is not None:
        results.append(vendor)
    if second_opinions and profile.name == "mobile-npu" and report.format == "onnx":
        results.append(ort_mobile.second_opinion(model))
    if (second_opinions and report.format == "tflite" and profile.device_class in ("gpu", "npu")
            and not (profile.vendor_tool or "").startswith("vela")):
        results.append(tflite_gpu.second_opinion(model))
    for result in results:
        log.info("%s: %s %s", result.tool, result.status, result.detail)
    return results
