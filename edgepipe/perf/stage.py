"""Per-target stage ``performance``: latency per power mode and energy per inference for every target.

NPU and GPU targets get the emulated delegate (or, for Ethos-U, Vela's own
estimate next to it). host-cpu is measured: the int8 forms are timed against
their fp32 originals, the fastest becomes the deployment artifact, and the
cost model's prediction for the float ONNX is kept beside it.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from edgepipe.perf.report import PerformanceReport

if TYPE_CHECKING:
    from edgepipe.stages.per_target import TargetContext
    from edgepipe.targets.performance import PerformanceSpec

log = logging.getLogger(__name__)

#: Host timing inside a build: short, because the build already times every artifact once.
HOST_BUDGET_S = 2.0


def _host_forms(context: TargetContext, spec: PerformanceSpec) -> tuple[list, str | None]:
    from edgepipe.bench.int8_forms import QOPERATOR_NAME, compare_int8_forms, make_qoperator
    from edgepipe.bench.measure import BenchSettings

    artifacts = {a.key: a.path for a in context.artifacts}
    data = context.inputs.calibration
    float_onnx = artifacts.get("model.onnx")
    with tempfile.TemporaryDirectory(prefix="edgepipe-qop-") as tmp:
        if float_onnx is not None and data is not None:
            samples = list(data.samples(limit=64))
            artifacts[QOPERATOR_NAME] = make_qoperator(float_onnx, Path(tmp) / QOPERATOR_NAME, samples)
        settings = BenchSettings(warmup=5, max_samples=200, budget_s=HOST_BUDGET_S)
        forms, fastest = compare_int8_forms(artifacts, settings)
        if fastest == QOPERATOR_NAME:
            shutil.copyfile(artifacts[QOPERATOR_NAME], context.folder / QOPERATOR_NAME)
    return forms, fastest


def host_performance(context: TargetContext, spec: PerformanceSpec) -> PerformanceReport:
    """host-cpu: measured int8 forms, the fastest as deployment artifact, modes from the measured p50."""
    from edgepipe.perf.calibration import is_calibrated
    from edgepipe.perf.power import all_modes, scaled_latency
    from edgepipe.perf.predict import pick_artifact, predict

    paths = [a.path for a in context.artifacts]
    float_path = pick_artifact(context.target, paths)
    predicted = predict(float_path, context.target) if float_path is not None else None
    forms, fastest = _host_forms(context, spec)
    notes = []
    if predicted is not None and predicted.delegate is not None:
        notes.append(f"cost model predicts {predicted.delegate.total_ms:.4f} ms for {float_path.name} "  # type: ignore[union-attr]
                     f"({spec.error.describe()})")
    if not is_calibrated(context.target):
        notes.append("host not calibrated: run `edgepipe calibrate host-cpu` for predictions fitted to this machine")
    chosen = next((f for f in forms if f.artifact == fastest), None)
    if chosen is None:
        report = predicted or PerformanceReport(target=context.target.name, artifact="", estimator="cost-model",
                                                default_mode=spec.default_power_mode, modes=[],
                                                error=spec.error.describe())
        return report.model_copy(update={"notes": report.notes + notes})
    mode = spec.mode()
    notes.append(f"latency per mode: measured p50 of {chosen.artifact} scaled by clock; power figures from the "
                 "profile (estimates)")
    return PerformanceReport(
        target=context.target.name, artifact=chosen.artifact, estimator="measured", default_mode=mode.name,
        modes=all_modes(spec, scaled_latency(chosen.p50_ms, mode.clock_mhz)), error=spec.error.describe(),
        delegate=predicted.delegate if predicted else None, int8_forms=forms, deployment_artifact=fastest,
        notes=notes)


def performance_stage(context: TargetContext) -> tuple[str, PerformanceReport | None]:
    """The ``performance`` report section of one target (None when its profile declares no [performance])."""
    from edgepipe.perf.calibration import effective_performance
    from edgepipe.perf.predict import pick_artifact, predict

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
