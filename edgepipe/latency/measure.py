"""Timing real runtimes: single-stream (interleaved across artifacts) and concurrent (N requests in flight).

Single-stream runs every artifact in rounds — a block of each in turn — until
each has ``max_samples`` or the time budget is spent, so drifting load on a
shared machine hits fp32 and int8 alike and their ratio holds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgepipe.latency.stats import LatencyStats, summarize
from edgepipe.latency.system import current_rss_bytes, thread_count
from edgepipe.runtimes import Runner, open_runner


@dataclass(frozen=True)
class BenchSettings:
    """How long to measure: ``warmup`` untimed runs, then up to ``max_samples`` timed ones within ``budget_s``
    seconds — but never fewer than ``min_samples`` (a confidence interval of the median needs at least 6)."""

    warmup: int = 10
    max_samples: int = 300
    budget_s: float = 10.0
    min_samples: int = 8
    block: int = 10
    threads: int | None = None


class ArtifactTiming(BaseModel):
    """Single-stream numbers of one artifact on this host."""

    model_config = ConfigDict(extra="forbid")

    artifact: str
    format: str
    precision: str
    runtime: str
    init_ms: float = Field(description="Session creation (ms).")
    first_inference_ms: float = Field(description="The first inference after creation, untimed in stats (ms).")
    stats: LatencyStats
    threads_added: int | None = Field(description="OS threads this session added to the process.")
    rss_after_bytes: int | None = Field(description="Process resident memory after the session ran (bytes).")


class ConcurrentTiming(BaseModel):
    """``concurrency`` requests in flight (one session each, closed loop): throughput and tail latency."""

    model_config = ConfigDict(extra="forbid")

    artifact: str
    concurrency: int
    requests: int
    wall_s: float
    throughput_ips: float = Field(description="Completed inferences per second (all workers).")
    stats: LatencyStats


def precision_of(path: Path) -> str:
    """'int8' for edgepipe's int8 artifacts (``*int8*`` in the name), else 'fp32'."""
    return "int8" if "int8" in path.stem else "fp32"


def sample_inputs(runner: Runner, seed: int = 0) -> list[np.ndarray]:
    """A deterministic random input per model input (uniform [0, 1) floats; zeros for integers; batch size 1)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in runner.signature.inputs:
        shape = tuple(d if d is not None else 1 for d in spec.shape)
        if np.issubdtype(spec.dtype, np.floating):
            arrays.append(rng.random(shape).astype(spec.dtype))
        else:
            arrays.append(np.zeros(shape, dtype=spec.dtype))
    return arrays


def time_ms(call: Callable[[], object], repeat: int = 1) -> float:
    """Wall time of one ``call()`` (ms), averaged over ``repeat`` back-to-back calls: edgepipe's one timer."""
    start = time.perf_counter_ns()
    for _ in range(repeat):
        call()
    return (time.perf_counter_ns() - start) / 1e6 / repeat


def _timed(runner: Runner, inputs: list[np.ndarray]) -> float:
    return time_ms(lambda: runner.infer(inputs))


def single_stream(paths: list[Path], settings: BenchSettings, runtime: str | None = None,
                  inputs: list[np.ndarray] | None = None) -> list[ArtifactTiming]:
    """Time every artifact in ``paths`` in one interleaved run (ms)."""
    runners, first, threads, feeds = [], [], [], []
    try:
        for path in paths:
            before = thread_count()
            runner = open_runner(path, runtime=runtime, threads=settings.threads).activate()
            runners.append(runner)
            feed = inputs if inputs is not None else sample_inputs(runner)
            feeds.append(feed)
            first.append(_timed(runner, feed))
            after = thread_count()
            threads.append(None if before is None or after is None else after - before)
        for runner, feed in zip(runners, feeds):
            for _ in range(settings.warmup):
                runner.infer(feed)
        samples: list[list[float]] = [[] for _ in runners]
        deadline = time.perf_counter() + settings.budget_s
        while any(len(s) < settings.max_samples for s in samples) and (
                time.perf_counter() < deadline or any(len(s) < settings.min_samples for s in samples)):
            for runner, feed, times in zip(runners, feeds, samples):
                for _ in range(min(settings.block, settings.max_samples - len(times))):
                    times.append(_timed(runner, feed))
        rss = current_rss_bytes()
        return [ArtifactTiming(artifact=p.name, format=p.suffix.lstrip("."), precision=precision_of(p),
                               runtime=r.runtime, init_ms=r.init_ms or 0.0, first_inference_ms=f,
                               stats=summarize(s or [f]), threads_added=t, rss_after_bytes=rss)
                for p, r, f, s, t in zip(paths, runners, first, samples, threads)]
    finally:
        for runner in runners:
            runner.close()


def concurrent(path: Path, concurrency: int, duration_s: float, runtime: str | None = None,
               threads: int | None = None) -> ConcurrentTiming:
    """``concurrency`` workers, each with its own session, inferring back to back for ``duration_s`` seconds."""
    runners = [open_runner(path, runtime=runtime, threads=threads).activate() for _ in range(concurrency)]
    feed = sample_inputs(runners[0])
    latencies: list[list[float]] = [[] for _ in runners]
    start_gate = threading.Barrier(concurrency + 1)
    stop = threading.Event()

    def work(runner: Runner, out: list[float]) -> None:
        runner.infer(feed)  # warm-up
        start_gate.wait(timeout=300)
        while not stop.is_set():
            out.append(_timed(runner, feed))

    workers = [threading.Thread(target=work, args=(r, out), daemon=True) for r, out in zip(runners, latencies)]
    try:
        for worker in workers:
            worker.start()
        start_gate.wait(timeout=300)
        begin = time.perf_counter()
        time.sleep(duration_s)
        stop.set()
        for worker in workers:
            worker.join()
        wall = time.perf_counter() - begin
    finally:
        stop.set()
        for runner in runners:
            runner.close()
    every = [t for out in latencies for t in out]
    return ConcurrentTiming(artifact=path.name, concurrency=concurrency, requests=len(every), wall_s=wall,
                            throughput_ips=len(every) / wall, stats=summarize(every))
