"""Per-target stage ``performance``: latency per power mode and energy per inference for every target.

NPU and GPU targets get the emulated delegate (or, for Ethos-U, Vela's own
estimate next to it). host-cpu gets the cost model's prediction for the float
ONNX per mode, and its fp32 and int8 forms measured on this host: the fastest
faithful one becomes the deployment artifact, with the CPU features that decide it.
"""

from __future__ import annotations

import logging

from edgepipe.latency.cpu_features import host_cpu
from edgepipe.perf.calibration import effective_performance, is_calibrated
from edgepipe.perf.power import energy_mj
from edgepipe.perf.predict import pick_artifact, predict
from edgepipe.perf.report import PerformanceReport
from edgepipe.quantize.host.fastest import DeploymentCandidate, Int8Form, deployment_choice, forms_table
from edgepipe.stages.context import TargetContext
from edgepipe.targets.performance import PerformanceSpec

log = logging.getLogger(__name__)


def _host_forms(context: TargetContext) -> tuple[list[Int8Form], list[DeploymentCandidate], str | None]:
    """The int8-forms table and the deployment choice among every form, read from the build's one measurement
    session (no second timing)."""
    if context.measured is None:
        return [], [], None
    data = context.inputs.calibration
    feed = next(data.samples()) if data is not None else None
    paths = {a.key: a.path for a in context.artifacts}
    precision: dict[str, str] = {a.key: a.precision for a in context.artifacts}
    forms, _ = forms_table(paths, context.measured, feed, precision)
    candidates, chosen = deployment_choice(context.measured, precision)
    return forms, candidates, chosen


def host_performance(context: TargetContext, spec: PerformanceSpec) -> PerformanceReport | None:
    """host-cpu: the cost model per mode (deterministic, so a baseline gate can hold it), plus the measured
    forms, the fastest faithful one as deployment artifact, and its measured energy beside the estimate."""
    float_path = pick_artifact(context.target, [a.path for a in context.artifacts])
    if float_path is None:
        return None
    report = predict(float_path, context.target)
    forms, candidates, fastest = _host_forms(context)
    notes = list(report.notes)
    chosen = next((c for c in candidates if c.artifact == fastest), None)
    if chosen is not None:
        mode = spec.mode()
        notes.append(f"energy (model estimate): {chosen.artifact}'s measured p50 {chosen.p50_ms:.4g} ms × the "
                     f"'{mode.name}' mode's assumed {mode.active_w:g} W = "
                     f"{energy_mj(chosen.p50_ms, mode.active_w):.4g} mJ; the power is not measured")
    if not is_calibrated(context.target):
        notes.append("host not calibrated: the predictions are unvalidated; run `edgepipe calibrate host-cpu` "
                     "for predictions fitted to this machine")
    return report.model_copy(update={"int8_forms": forms, "deployment_candidates": candidates,
                                     "deployment_artifact": fastest, "host_cpu": host_cpu(), "notes": notes})


def performance_stage(context: TargetContext) -> tuple[str, PerformanceReport | None]:
    """The ``performance`` report section of one target (None when its profile declares no [performance])."""
    spec = effective_performance(context.target)
    if spec is None:
        log.warning("target %s declares no [performance]: no latency or energy estimate", context.target.name)
        return "performance", None
    if context.target.device_class == "cpu":
        return "performance", host_performance(context, spec)
    path = pick_artifact(context.target, [a.path for a in context.artifacts])
    if path is None:
        return "performance", None
    return "performance", predict(path, context.target)
