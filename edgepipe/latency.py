"""Stage 5, latency: a simple host measurement of one artifact (warm-up, then N timed runs)."""

from __future__ import annotations

import math
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

    The bounds are order statistics: the widest symmetric ranks ``(j, n-1-j)`` whose
    binomial(n, 1/2) coverage is still at least ``confidence``. With fewer than 6
    runs no rank pair reaches 95 %, and the interval is the full range.
    """
    ordered = sorted(times)
    n = len(ordered)
    if n == 0:
        raise ValueError("no timings")
    alpha = 1.0 - confidence
    cumulative, j = 0.0, -1
    while True:  # largest j with P(X <= j) <= alpha / 2, X ~ Binomial(n, 1/2)
        cumulative += math.comb(n, j + 1) / 2**n
        if cumulative > alpha / 2 or j + 1 >= n // 2:
            break
        j += 1
    low = max(j, 0)
    return ordered[low], ordered[n - 1 - low]
