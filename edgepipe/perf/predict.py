"""Estimate one model on one target: placement, emulated delegate, power modes, Vela where it applies.

The artifact a target is estimated on is the one it deploys: int8 TFLite for
NPUs that take TFLite, the float ONNX for a GPU and for host-cpu predictions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from edgepipe.errors import MissingToolchain, ProfileError, ToolFailed
from edgepipe.figures import MODEL_ESTIMATE, VENDOR_ESTIMATE
from edgepipe.perf.calibration import effective_performance, held_out_error
from edgepipe.perf.cost_model import default_placement, estimate
from edgepipe.perf.graph import GraphWork, read_work
from edgepipe.perf.power import LatencyAtClock, all_modes
from edgepipe.perf.report import PerformanceReport, VelaComparison
from edgepipe.perf.vela_estimate import run_vela
from edgepipe.support import check_graph
from edgepipe.targets.performance import PerformanceSpec
from edgepipe.targets.profile import TargetProfile

log = logging.getLogger(__name__)


def require_performance(profile: TargetProfile) -> PerformanceSpec:
    """The profile's effective performance spec, or a user error saying it has none."""
    spec = effective_performance(profile)
    if spec is None:
        raise ProfileError(f"target '{profile.name}' declares no [performance]",
                           path=f"targets/{profile.name}.toml",
                           fix="Add a [performance] table (docs/guide/performance.md)")
    return spec


def placement(graph: GraphWork, profile: TargetProfile, spec: PerformanceSpec) -> list[bool]:
    """Accelerator (True) or CPU per op: the support check's verdicts where the profile has an op table."""
    if spec.fallback_cpu is None:
        return [True] * len(graph.ops)
    try:
        verdicts = {v.index: v.placement == "accelerator" for v in check_graph(graph.source, profile).node_verdicts}
    except ProfileError:
        return default_placement(graph, spec)
    return [verdicts.get(op.index, True) for op in graph.ops]


def pick_artifact(profile: TargetProfile, paths: Sequence[Path]) -> Path | None:
    """The artifact ``profile`` deploys among ``paths``: for NPUs the profile's checked artifact (else int8 in
    a deploy format), for CPU and GPU the float ONNX (host predictions are calibrated on fp32)."""
    def find(suffix: str, int8: bool) -> Path | None:
        return next((p for p in paths if p.suffix == suffix and ("int8" in p.stem) == int8), None)

    if profile.device_class == "npu":
        deployed = getattr(profile, "artifact", None)  # the support check's choice, when the profile says
        order = [(f".{deployed.format}", deployed.precision == "int8")] if deployed is not None else []
        order += [(f".{fmt}", True) for fmt in profile.deploy_formats] + [(".tflite", True), (".onnx", True)]
    else:
        order = [(".onnx", False), (".tflite", False)]
    for suffix, int8 in order:
        found = find(suffix, int8)
        if found is not None:
            return found
    return paths[0] if paths else None


def _vela(path: Path, spec: PerformanceSpec, graph: GraphWork, places: list[bool]) -> VelaComparison:
    vela = run_vela(path, spec)
    ours = estimate(graph, spec, vela.clock_mhz, places).total_ms
    return VelaComparison(accelerator=vela.accelerator, system_config=vela.system_config, clock_mhz=vela.clock_mhz,
                          cycles=vela.cycles, vela_ms=vela.inference_ms, edgepipe_ms=ours,
                          ratio=ours / vela.inference_ms if vela.inference_ms else float("nan"),
                          npu_ops=vela.npu_ops, cpu_ops=vela.cpu_ops)


def predict(path: Path, profile: TargetProfile, mode: str | None = None) -> PerformanceReport:
    """Estimate ``path`` on ``profile``: per op, per power mode, and (Ethos-U) against Vela."""
    spec = require_performance(profile)
    if mode is not None:
        try:
            spec.mode(mode)
        except KeyError as exc:
            raise ProfileError(str(exc.args[0]), path=f"targets/{profile.name}.toml",
                               fix="Pick one of the profile's power modes") from None
    graph = read_work(path)
    places = placement(graph, profile, spec)
    vela = None
    latency_at: LatencyAtClock = lambda clock: estimate(graph, spec, clock, places).total_ms  # noqa: E731
    notes = []
    if spec.estimator == "vela" and path.suffix == ".tflite":
        try:
            vela = _vela(path, spec, graph, places)
        except (MissingToolchain, ToolFailed) as missing:  # profile-based estimate without Vela, saying why
            notes.append(f"Vela's estimate is not available ({missing.one_line()}); edgepipe's cost model instead")
    if vela is not None and vela.cycles <= 0:  # 0 cycles would make every per-mode figure infinite
        notes.append(f"Vela put no op on the NPU (0 cycles, {vela.cpu_ops} ops on the CPU: Vela compiles int8 "
                     "models only); edgepipe's cost model instead")
        vela = None
    if vela is not None:
        cycles = vela.cycles
        latency_at = lambda clock: cycles / (clock * 1e3)  # noqa: E731 - cycles at the mode's clock, in ms
        notes.append(f"Vela's estimate is the delegate estimate; edgepipe's cost model ÷ Vela = {vela.ratio:.2f}")
    chosen = spec.mode(mode)
    kind = VENDOR_ESTIMATE if vela else MODEL_ESTIMATE
    modes = [m.model_copy(update={"kind": kind}) for m in all_modes(spec, latency_at)]
    return PerformanceReport(
        target=profile.name, artifact=path.name, estimator="vela" if vela else "cost-model",
        default_mode=chosen.name, modes=modes, error=held_out_error(profile), kind=kind,
        delegate=estimate(graph, spec, chosen.clock_mhz, places), vela=vela, notes=notes)
