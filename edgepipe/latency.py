"""Stage 5, latency: a simple host measurement of one artifact (warm-up, then N timed runs)."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgepipe.runtimes import open_runner


@dataclass(frozen=True)
class LatencyResult:
    """Single-stream latency of one artifact on this host, in milliseconds."""

    runtime: str
    median_ms: float
    min_ms: float
    runs: int
    init_ms: float


def measure_latency(path: Path, sample: list[np.ndarray], *, warmup: int, runs: int) -> LatencyResult:
    """Time ``runs`` inferences on ``sample`` after ``warmup`` untimed ones (ms)."""
    with open_runner(path) as runner:
        for _ in range(warmup):
            runner.infer(sample)
        times = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            runner.infer(sample)
            times.append((time.perf_counter_ns() - start) / 1e6)
        return LatencyResult(runtime=runner.runtime, median_ms=statistics.median(times), min_ms=min(times),
                             runs=runs, init_ms=runner.init_ms or 0.0)
