"""A hand-checkable target: round numbers so every expected time below can be worked out on paper."""

from __future__ import annotations

import pytest

from edgepipe.targets.performance import PerformanceSpec


@pytest.fixture
def toy_spec() -> PerformanceSpec:
    """An int8-only accelerator (1 GMAC/s, 1 GB/s, 10 µs/op at 100 MHz), a CPU, a slow bus, two modes."""
    return PerformanceSpec.model_validate({
        "default_power_mode": "fast",
        "accelerator": {"name": "toy npu", "clock_mhz": 100, "int8_gmacs": 1.0, "memory_bandwidth_gbps": 1.0,
                        "per_op_overhead_us": 10.0},
        "fallback_cpu": {"name": "toy cpu", "clock_mhz": 1000, "fp32_gmacs": 0.5, "memory_bandwidth_gbps": 2.0,
                         "per_op_overhead_us": 20.0},
        "bus": {"bandwidth_gbps": 0.5, "latency_us": 100.0},
        "power_modes": [{"name": "fast", "clock_mhz": 100, "active_w": 2.0, "idle_w": 0.5},
                        {"name": "slow", "clock_mhz": 50, "active_w": 0.8, "idle_w": 0.2}],
        "thermal": {"time_to_throttle_s": 10.0, "throttled_clock_mhz": 50},
    })
