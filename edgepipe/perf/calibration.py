"""``edgepipe calibrate host-cpu``: measure this machine, write a local profile override, use it in predictions.

A short microbenchmark through ONNX Runtime (the runtime host predictions are
for; see :mod:`edgepipe.perf.host_probes`) gives the effective MAC rates, memory
bandwidths, overheads and a few kernel rates of this machine.

The override is a TOML file with a ``[performance]`` table, merged over the
bundled profile's ``[performance]`` whenever edgepipe predicts for that target:
``$EDGEPIPE_OVERRIDES_DIR/<target>.toml`` if that variable is set, else
``$XDG_CONFIG_HOME/edgepipe/<target>.toml`` (``~/.config/edgepipe/<target>.toml``).
"""

from __future__ import annotations

import logging
import os
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from edgepipe.errors import ProfileError
from edgepipe.figures import UNVALIDATED
from edgepipe.perf.host_probes import HostProbes
from edgepipe.targets.performance import MeasuredError, PerformanceSpec
from edgepipe.targets.profile import TargetProfile

log = logging.getLogger(__name__)

OVERRIDES_ENV = "EDGEPIPE_OVERRIDES_DIR"


def override_path(target: str) -> Path:
    """Where the local override for ``target`` lives (see the module docstring)."""
    folder = os.environ.get(OVERRIDES_ENV)
    if folder:
        return Path(folder) / f"{target}.toml"
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config_home / "edgepipe" / f"{target}.toml"


@dataclass(frozen=True)
class HostMeasurement:
    """What the microbenchmark found (GMAC/s, GB/s, µs)."""

    conv_gmacs: float
    gemm_gmacs: float
    depthwise_gmacs: float
    bandwidth_gbps: float
    weight_bandwidth_gbps: float
    per_op_overhead_us: float
    per_run_overhead_us: float
    op_gelems: dict[str, float] = field(default_factory=dict)


def measure_host(threads: int | None = None, runs: int = 20) -> HostMeasurement:
    """Run the microbenchmark (:mod:`edgepipe.perf.host_probes`, a few seconds) and return this host's rates."""
    probes = HostProbes(threads)
    result = HostMeasurement(**probes.rates([probes.run_round() for _ in range(runs)]))
    log.info("host calibration: %s", result)
    return result


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(round(value, 4)) if isinstance(value, float) else str(value)


def write_override(target: str, measured: HostMeasurement, path: Path | None = None) -> Path:
    """Write the measured rates as ``[performance.accelerator]`` of ``target``'s override file; returns its path."""
    path = path or override_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    efficiency = {"gemm": min(measured.gemm_gmacs / measured.conv_gmacs, 1.5),
                  "depthwise": min(measured.depthwise_gmacs / measured.conv_gmacs, 1.5)}
    lines = [f"# Written by `edgepipe calibrate {target}` on {stamp}; delete this file to use the bundled profile.",
             "[performance.accelerator]",
             f"fp32_gmacs = {_toml_value(measured.conv_gmacs)}",
             f"memory_bandwidth_gbps = {_toml_value(measured.bandwidth_gbps)}",
             f"weight_bandwidth_gbps = {_toml_value(measured.weight_bandwidth_gbps)}",
             f"per_op_overhead_us = {_toml_value(measured.per_op_overhead_us)}",
             f"per_run_overhead_us = {_toml_value(measured.per_run_overhead_us)}",
             "[performance.accelerator.efficiency]",
             *(f"{kind} = {_toml_value(value)}" for kind, value in efficiency.items()),
             "[performance.accelerator.op_gelems]",
             *(f"{op} = {_toml_value(value)}" for op, value in measured.op_gelems.items()), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(
            merged.get(key), dict) else value
    return merged


def _profile_facts(profile: TargetProfile) -> dict[str, Any]:
    """Accelerator facts the profile already states in [compute] / [memory] (read, not duplicated)."""
    compute = getattr(profile, "compute", None)
    memory = getattr(profile, "memory", None)
    facts = {"clock_mhz": getattr(compute, "clock_mhz", None),
             "peak_int8_tops": getattr(compute, "int8_tops", None),
             "peak_fp16_tflops": getattr(compute, "fp16_tflops", None),
             "memory_bandwidth_gbps": getattr(memory, "bandwidth_gb_s", None)}
    return {key: value for key, value in facts.items() if value}


def effective_performance(profile: TargetProfile) -> PerformanceSpec | None:
    """``profile.performance`` completed from [compute]/[memory], with the local override merged over it.

    Raises :class:`ProfileError` when the result lacks a clock or a bandwidth, or the override is malformed.
    """
    if profile.performance is None:
        return None
    raw = profile.performance.model_dump(exclude_none=True)
    raw["accelerator"] = {**_profile_facts(profile), **raw["accelerator"]}
    path = override_path(profile.name)
    if path.is_file():
        try:
            raw = _merge(raw, tomllib.loads(path.read_text(encoding="utf-8")).get("performance", {}))
        except tomllib.TOMLDecodeError as exc:
            raise ProfileError(f"malformed performance override ({exc})", path=path,
                               fix=f"Re-run `edgepipe calibrate {profile.name}` or delete the file") from None
    try:
        spec = PerformanceSpec.model_validate(raw)
        _ = spec.accelerator.clock, spec.accelerator.bandwidth
    except ValueError as exc:
        where = path if path.is_file() else f"targets/{profile.name}.toml"
        raise ProfileError(f"incomplete [performance] ({exc})", path=where,
                           fix="Give the accelerator's clock_mhz and memory bandwidth") from None
    return spec


def is_calibrated(profile: TargetProfile) -> bool:
    """Whether a local override exists for ``profile``."""
    return override_path(profile.name).is_file()


def held_out_error(profile: TargetProfile) -> str:
    """The error text a model estimate for ``profile`` carries: the one measured on the held-out benchmark models
    on this machine (``[performance.error]`` of the local override, written by
    ``benchmarks/predict_vs_measure.py --write-error`` right after calibrating), else ``'unvalidated'``.

    A figure in the profile itself is ignored: a bundled profile cannot know how wrong it is on this machine.
    Recalibrating rewrites the override without an error, so a stale figure never outlives its calibration.
    """
    path = override_path(profile.name)
    if not path.is_file():
        return UNVALIDATED
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8")).get("performance", {}).get("error")
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"malformed performance override ({exc})", path=path,
                           fix=f"Re-run `edgepipe calibrate {profile.name}` or delete the file") from None
    if not raw:
        return UNVALIDATED
    error = MeasuredError.model_validate(raw)
    if error.median_abs_pct is None or error.models == 0:
        return UNVALIDATED
    within = "" if error.within_25_pct_share is None else f", {error.within_25_pct_share:.0%} within ±25%"
    return (f"±{error.median_abs_pct:.0f}% median on {error.models} held-out models{within} "
            f"({error.measured_on or 'this host'})")
