"""Latency statistics from timed samples: mean, std, percentiles, and a distribution-free 95 % CI of the median.

The confidence interval uses order statistics: with n samples, the k-th smallest
and k-th largest bracket the median with probability 1 − 2·P(B ≤ k−1),
B ~ Binomial(n, ½). k is the largest rank that keeps that probability ≥ 95 %.
It needs no assumption about the shape of the latency distribution (which is
skewed on any real machine).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field


class LatencyStats(BaseModel):
    """Summary of latency samples (ms)."""

    model_config = ConfigDict(extra="forbid")

    samples: int
    mean_ms: float
    std_ms: float = Field(description="Sample standard deviation (ddof=1), ms; 0 for one sample.")
    min_ms: float
    p50_ms: float
    p90_ms: float = Field(description="Single-stream p90: the headline number (MLPerf Mobile convention).")
    p99_ms: float
    max_ms: float
    median_ci_low_ms: float | None = Field(description="Lower end of the 95 % CI of the median (ms).")
    median_ci_high_ms: float | None = Field(description="Upper end of the 95 % CI of the median (ms).")
    median_ci_coverage: float | None = Field(description="Exact coverage of that interval (≥ 0.95).")


def _binom_pmf(i: int, n: int) -> float:
    """P(B = i) for B ~ Binomial(n, ½), computed in log space so any n works."""
    return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2))


def median_ci_ranks(n: int, confidence: float = 0.95) -> tuple[int, int, float] | None:
    """1-based ranks (lo, hi) of the order statistics bracketing the median, and the exact coverage.

    None when ``n`` is too small for any interval to reach ``confidence`` (n < 6 at 95 %).
    """
    tail = (1 - confidence) / 2
    best = None
    below = 0.0  # P(B <= k - 1)
    for k in range(1, n // 2 + 1):
        below += _binom_pmf(k - 1, n)
        if below > tail:
            break
        best = (k, n - k + 1, 1 - 2 * below)
    return best


def summarize(samples_ms: Sequence[float]) -> LatencyStats:
    """The statistics of ``samples_ms`` (ms). Percentiles interpolate linearly (numpy's default)."""
    if not samples_ms:
        raise ValueError("no samples")
    data = np.sort(np.asarray(samples_ms, dtype=np.float64))
    p50, p90, p99 = np.percentile(data, [50, 90, 99])
    ranks = median_ci_ranks(len(data))
    low = high = coverage = None
    if ranks is not None:
        low, high, coverage = float(data[ranks[0] - 1]), float(data[ranks[1] - 1]), ranks[2]
    return LatencyStats(samples=len(data), mean_ms=float(data.mean()),
                        std_ms=float(data.std(ddof=1)) if len(data) > 1 else 0.0, min_ms=float(data[0]),
                        p50_ms=float(p50), p90_ms=float(p90), p99_ms=float(p99), max_ms=float(data[-1]),
                        median_ci_low_ms=low, median_ci_high_ms=high, median_ci_coverage=coverage)
