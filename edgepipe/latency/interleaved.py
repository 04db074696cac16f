"""Stage 5, latency: every artifact of a build timed in one interleaved session at one thread count.

There is one timing loop in edgepipe: :func:`edgepipe.latency.measure.single_stream`.
The build's latency figures, its fp32-vs-int8 ratios and the host-cpu int8-forms
table all come from one call of it (:func:`measure_session`), so one report can
never show two different fp32 timings for the same artifact, and every ratio is
taken under the same load and the same ``threads``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgepipe.latency.measure import ArtifactTiming, BenchSettings, single_stream
from edgepipe.latency.stats import median_ci_ranks

#: A build's session stops after ``runs`` timed runs per artifact, or earlier once every artifact has
#: :data:`MIN_RUNS` and this many seconds are spent: on a 300 ms model, 50 runs of five artifacts
#: would cost over a minute for little more certainty (the CI of the median says how much).
SESSION_BUDGET_S = 10.0
MIN_RUNS = 10


@dataclass(frozen=True)
class LatencyResult:
    """Single-stream latency of one artifact on this host, in milliseconds, and how it was measured.

    ``threads``: the intra-op thread count every session of the measurement used
    (None: the runtime's default). ``session``: an id shared by every result timed
    in the same interleaved run; ratios are only meaningful within one session.
    """

    runtime: str
    median_ms: float
    min_ms: float
    runs: int
    init_ms: float
    ci_low_ms: float | None = None
    ci_high_ms: float | None = None
    p90_ms: float | None = None
    threads: int | None = None
    session: str = ""

    @classmethod
    def from_timing(cls, timing: ArtifactTiming, threads: int | None, session: str) -> LatencyResult:
        """The build's view of one :class:`ArtifactTiming` of the shared timing loop."""
        stats = timing.stats
        return cls(runtime=timing.runtime, median_ms=stats.p50_ms, min_ms=stats.min_ms, runs=stats.samples,
                   init_ms=timing.init_ms, ci_low_ms=stats.median_ci_low_ms, ci_high_ms=stats.median_ci_high_ms,
                   p90_ms=stats.p90_ms, threads=threads, session=session)


def measure_session(paths: dict[str, Path], sample: list[np.ndarray], *, warmup: int, runs: int,
                    threads: int | None) -> dict[str, LatencyResult]:
    """Time every artifact of ``paths`` (key → file) on ``sample`` in one interleaved run (ms).

    Each artifact gets ``warmup`` untimed runs, then up to ``runs`` timed ones (at
    least ``min(runs, MIN_RUNS)``, more while :data:`SESSION_BUDGET_S` lasts), in
    blocks of 10 taken in turn, so load drifting on a shared machine hits all of
    them alike.
    """
    if not paths:
        return {}
    settings = BenchSettings(warmup=warmup, max_samples=runs, min_samples=min(runs, MIN_RUNS),
                             budget_s=SESSION_BUDGET_S, threads=threads)
    timings = single_stream(list(paths.values()), settings, inputs=sample)
    session = f"{len(paths)} artifacts, up to {runs} runs, threads={threads if threads else 'default'}"
    return {key: LatencyResult.from_timing(t, threads, session) for key, t in zip(paths, timings)}


def measure_latency(path: Path, sample: list[np.ndarray], *, warmup: int, runs: int,
                    threads: int | None = None) -> LatencyResult:
    """Time ``runs`` inferences of one artifact on ``sample`` after ``warmup`` untimed ones (ms)."""
    return measure_session({path.name: path}, sample, warmup=warmup, runs=runs, threads=threads)[path.name]


def median_ci(times: list[float], confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median of ``times`` (same unit as ``times``).

    The bounds are the order statistics :func:`edgepipe.latency.stats.median_ci_ranks` picks; with
    too few runs for any rank pair to reach ``confidence`` (n < 6 at 95 %) it is the full range.
    """
    if not times:
        raise ValueError("no timings")
    ordered = sorted(times)
    ranks = median_ci_ranks(len(ordered), confidence)
    if ranks is None:
        return ordered[0], ordered[-1]
    return ordered[ranks[0] - 1], ordered[ranks[1] - 1]
