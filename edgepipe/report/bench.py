"""The result of ``edgepipe bench``: typed (for ``--json``) and as text (for people)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.latency.measure import ArtifactTiming, ConcurrentTiming
from edgepipe.latency.system import HostInfo
from edgepipe.perf.report import Int8Form, PerformanceReport


class Ratio(BaseModel):
    """int8 ÷ fp32 of one runtime, from the same interleaved run (what holds on a shared machine)."""

    model_config = ConfigDict(extra="forbid")

    runtime: str
    int8: str
    fp32: str
    p50_ratio: float
    p90_ratio: float


class BenchReport(BaseModel):
    """Everything one ``edgepipe bench`` run measured (times in ms, memory in bytes)."""

    model_config = ConfigDict(extra="forbid")

    host: HostInfo
    settings: dict[str, float | int | None]
    artifacts: list[ArtifactTiming]
    ratios: list[Ratio]
    headline: dict[str, float] = Field(description="Single-stream p90 per artifact (ms), MLPerf Mobile's convention.")
    peak_rss_bytes: int
    concurrent: list[ConcurrentTiming] = Field(default_factory=list)
    int8_forms: list[Int8Form] = Field(default_factory=list)
    fastest_int8: str | None = None
    estimate: PerformanceReport | None = None


def ratios(timings: list[ArtifactTiming]) -> list[Ratio]:
    """int8 ÷ fp32 for every runtime with both."""
    out = []
    for int8 in (t for t in timings if t.precision == "int8"):
        fp32 = next((t for t in timings if t.precision == "fp32" and t.runtime == int8.runtime), None)
        if fp32 is not None:
            out.append(Ratio(runtime=int8.runtime, int8=int8.artifact, fp32=fp32.artifact,
                             p50_ratio=int8.stats.p50_ms / fp32.stats.p50_ms,
                             p90_ratio=int8.stats.p90_ms / fp32.stats.p90_ms))
    return out


def _ci(timing: ArtifactTiming) -> str:
    s = timing.stats
    if s.median_ci_low_ms is None or s.median_ci_high_ms is None:
        return "n/a"
    return f"[{s.median_ci_low_ms:.4g}, {s.median_ci_high_ms:.4g}]"


def render_text(report: BenchReport) -> str:
    """A plain-text summary: host, per-artifact statistics, ratios, load test, estimate."""
    h = report.host
    lines = [f"host: {h.cpu_model or 'unknown CPU'} ({h.logical_cpus} logical CPUs), governor "
             f"{h.governor or 'n/a'}, load {h.load_avg_1min if h.load_avg_1min is not None else 'n/a'}",
             "", f"{'artifact':<28}{'runtime':<12}{'init':>9}{'first':>9}{'mean±std':>18}{'p50':>9}"
             f"{'95% CI of p50':>22}{'p90':>9}{'p99':>9}{'n':>6}{'thr':>5}", ]
    for t in report.artifacts:
        s = t.stats
        lines.append(f"{t.artifact:<28}{t.runtime:<12}{t.init_ms:9.2f}{t.first_inference_ms:9.3f}"
                     f"{f'{s.mean_ms:.4g}±{s.std_ms:.2g}':>18}{s.p50_ms:9.4g}{_ci(t):>22}{s.p90_ms:9.4g}"
                     f"{s.p99_ms:9.4g}{s.samples:6d}{t.threads_added if t.threads_added is not None else '-':>5}")
    lines.append("(ms; init = session creation; thr = OS threads the session added)")
    for r in report.ratios:
        lines.append(f"int8/fp32 {r.runtime}: p50 {r.p50_ratio:.2f}×, p90 {r.p90_ratio:.2f}× "
                     f"({r.int8} vs {r.fp32}, same run)")
    lines.append("headline (single-stream p90): " + ", ".join(f"{k} {v:.4g} ms" for k, v in report.headline.items()))
    lines.append(f"peak RSS: {report.peak_rss_bytes / 2**20:.1f} MiB")
    for c in report.concurrent:
        lines.append(f"concurrency {c.concurrency} on {c.artifact}: {c.throughput_ips:,.0f} inf/s, p50 "
                     f"{c.stats.p50_ms:.4g} ms, p90 {c.stats.p90_ms:.4g} ms, p99 {c.stats.p99_ms:.4g} ms "
                     f"({c.requests} requests in {c.wall_s:.1f} s)")
    for f in report.int8_forms:
        ratio = "n/a" if f.ratio_to_fp32 is None else f"{f.ratio_to_fp32:.2f}×"
        lines.append(f"int8 form {f.artifact} ({f.runtime}): p50 {f.p50_ms:.4g} ms, {ratio} fp32 — "
                     + "; ".join(f.slow_ops[:3]))
    if report.fastest_int8:
        lines.append(f"fastest int8 form on this host: {report.fastest_int8}")
    if report.estimate is not None:
        e = report.estimate
        lines += ["", f"estimate for {e.target} ({e.estimator}, error: {e.error}) on {e.artifact}:"]
        for m in e.modes:
            lines.append(f"  {m.mode:<28} {m.clock_mhz:>7g} MHz  {m.latency_ms:9.4g} ms  {m.energy_mj:9.4g} mJ  "
                         f"{m.inferences_per_j:12,.0f} inf/J  sustained {m.sustained_ips:,.0f} inf/s")
        if e.vela is not None:
            lines.append(f"  Vela {e.vela.vela_ms:.4g} ms vs edgepipe {e.vela.edgepipe_ms:.4g} ms: ratio "
                         f"{e.vela.ratio:.2f}")
        lines += [f"  note: {n}" for n in e.notes]
    return "\n".join(lines)
