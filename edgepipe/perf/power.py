"""Latency and energy per power mode, and sustained throughput under the thermal envelope.

Energy per inference is the mode's active power times the latency
(W × ms = mJ); inferences per joule is its inverse. At a fixed rate the idle
power fills the time between inferences. Once the thermal envelope's time to
throttle has passed, the clock drops to the throttled clock and throughput
follows.
"""

from __future__ import annotations

from collections.abc import Callable

from edgepipe.perf.report import ModeEstimate
from edgepipe.targets.performance import PerformanceSpec, PowerMode

#: latency (ms) of one inference at a given accelerator clock (MHz)
LatencyAtClock = Callable[[float], float]


def energy_mj(latency_ms: float, active_w: float) -> float:
    """Energy of one inference while busy (mJ): W × ms."""
    return active_w * latency_ms


def energy_at_rate_mj(latency_ms: float, mode: PowerMode, rate_hz: float) -> float:
    """Energy per inference when running ``rate_hz`` inferences per second, idle time included (mJ).

    Above the rate the device can sustain, there is no idle time and this equals :func:`energy_mj`.
    """
    period_ms = 1e3 / rate_hz
    idle_ms = max(period_ms - latency_ms, 0.0)
    return mode.active_w * latency_ms + mode.idle_w * idle_ms


def mode_estimate(mode: PowerMode, spec: PerformanceSpec, latency_at: LatencyAtClock) -> ModeEstimate:
    """One mode's latency (ms), energy (mJ), inferences/J and throughput (inferences/s) before and after throttling."""
    latency = latency_at(mode.clock_mhz)
    throttle = spec.thermal
    throttles = throttle is not None and throttle.throttled_clock_mhz < mode.clock_mhz
    sustained_latency = latency_at(throttle.throttled_clock_mhz) if throttles and throttle else latency
    energy = energy_mj(latency, mode.active_w)
    return ModeEstimate(
        mode=mode.name, clock_mhz=mode.clock_mhz, latency_ms=latency, energy_mj=energy,
        inferences_per_j=1e3 / energy if energy > 0 else float("inf"),
        energy_mj_at_10hz=energy_at_rate_mj(latency, mode, 10.0),
        throughput_ips=1e3 / latency if latency > 0 else float("inf"),
        sustained_ips=1e3 / sustained_latency if sustained_latency > 0 else float("inf"),
        time_to_throttle_s=throttle.time_to_throttle_s if throttles and throttle else None)


def all_modes(spec: PerformanceSpec, latency_at: LatencyAtClock) -> list[ModeEstimate]:
    """:func:`mode_estimate` for every power mode of ``spec``, in profile order."""
    return [mode_estimate(mode, spec, latency_at) for mode in spec.power_modes]


def scaled_latency(measured_ms: float, reference_mhz: float) -> LatencyAtClock:
    """A measured latency scaled to other clocks by reference ÷ clock (for measured host numbers)."""
    return lambda clock_mhz: measured_ms * reference_mhz / clock_mhz
