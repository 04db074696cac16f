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
    ci_low_ms: float | None = None
    ci_high_ms: float | None = None


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
        low, high = median_ci(times)
        return LatencyResult(runtime=runner.runtime, median_ms=statistics.median(times), min_ms=min(times),
                             runs=runs, init_ms=runner.init_ms or 0.0, ci_low_ms=low, ci_high_ms=high)


def median_ci(times: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median of ``times`` (same unit as ``times``).

    The bounds are the order statistics :func:`edgepipe.bench.stats.median_ci_ranks` picks; with
    too few runs for any rank pair to reach ``confidence`` (n < 6 at 95 %) it is the full range.
    """
    from edgepipe.bench.stats import median_ci_ranks

    if not times:
        raise ValueError("no timings")
    ordered = sorted(times)
    ranks = median_ci_ranks(len(ordered), confidence)
    if ranks is None:
        return ordered[0], ordered[-1]
    return ordered[ranks[0] - 1], ordered[ranks[1] - 1]
