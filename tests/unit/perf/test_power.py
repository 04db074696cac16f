"""Energy, inferences per joule and throttled throughput, by hand."""

from __future__ import annotations

import pytest

from edgepipe.perf.power import all_modes, energy_at_rate_mj, energy_mj, scaled_latency
from edgepipe.targets.performance import PowerMode


def test_energy_is_watts_times_milliseconds():
    assert energy_mj(2.5, 4.0) == pytest.approx(10.0)  # 4 W × 2.5 ms = 10 mJ


def test_idle_fills_the_period_at_a_fixed_rate():
    mode = PowerMode(name="m", clock_mhz=100, active_w=2.0, idle_w=0.5)
    # 10 Hz: 100 ms period; 2 W × 3 ms + 0.5 W × 97 ms
    assert energy_at_rate_mj(3.0, mode, 10.0) == pytest.approx(6.0 + 48.5)
    # faster than the device can go: no idle time left
    assert energy_at_rate_mj(300.0, mode, 10.0) == pytest.approx(600.0)


def test_modes_scale_with_clock_and_throttle(toy_spec):
    modes = {m.mode: m for m in all_modes(toy_spec, scaled_latency(3.0, 100.0))}
    fast, slow = modes["fast"], modes["slow"]
    assert fast.latency_ms == pytest.approx(3.0) and slow.latency_ms == pytest.approx(6.0)
    assert fast.energy_mj == pytest.approx(6.0) and slow.energy_mj == pytest.approx(4.8)
    assert fast.inferences_per_j == pytest.approx(1000 / 6.0)
    assert fast.throughput_ips == pytest.approx(1000 / 3.0)
    # fast throttles to 50 MHz after 10 s: 6 ms per inference then; slow already runs at 50 MHz
    assert fast.sustained_ips == pytest.approx(1000 / 6.0) and fast.time_to_throttle_s == 10.0
    assert slow.sustained_ips == pytest.approx(slow.throughput_ips) and slow.time_to_throttle_s is None
