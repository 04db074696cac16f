"""What host-cpu deploys: the fastest faithful form on this host, fp32 and int8 alike.

Int8 is not automatically faster on a host CPU: without an 8-bit dot product (VNNI, AMX,
Arm's dot product; :mod:`edgepipe.latency.cpu_features`) int8 kernels widen 16-bit sums,
XNNPACK may leave int8 ops to LiteRT's slower built-in kernels, and ONNX Runtime runs the
QDQ form only as fast as the QuantizeLinear/DequantizeLinear pairs it manages to fuse. All
forms and their fp32 originals are timed in one interleaved session (a build's latency
stage, or ``edgepipe bench --int8-forms``). :func:`deployment_choice` reads that session:
every fp32 and int8 form is a candidate, a form is faithful when its accuracy (or label-free)
check passed on this host's arithmetic, and the fastest faithful one is deployed, fp32
included. :func:`forms_table` is the int8 forms' own table, with why each is slow.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgepipe.figures import MEASURED, FigureKind
from edgepipe.latency.interleaved import LatencyResult
from edgepipe.latency.measure import BenchSettings, precision_of, single_stream
from edgepipe.latency.op_profile import ort_time_by_op_type, xnnpack_rejected_ops
from edgepipe.quantize.host.forms import MIN_COSINE, QOPERATOR_NAME, HostMeasurement

log = logging.getLogger(__name__)
#: Artifact precisions that are int8 forms: all-int8, and the ladder's mixed precision (int8 with a few layers
#: kept higher), which is what most real models deploy; leaving it out left them without a host form.
QUANTIZED = ("int8", "mixed")
#: Runs of ONNX Runtime's profiler per form: op shares, not timings, so a few runs suffice.
PROFILE_RUNS = 5

#: Precisions host-cpu may deploy (fp16 where a build makes an fp16 form).
DEPLOYABLE = ("fp32", "fp16", *QUANTIZED)

__all__ = ["QOPERATOR_NAME", "DeploymentCandidate", "Int8Form", "compare_int8_forms", "deployment_choice",
           "forms_table"]


class Int8Form(BaseModel):
    """One int8 form of the model measured on this host."""

    model_config = ConfigDict(extra="forbid")

    artifact: str
    runtime: str
    p50_ms: float
    p90_ms: float
    ratio_to_fp32: float | None = Field(description="p50 ÷ p50 of the fp32 artifact of the same runtime.")
    fp32_artifact: str | None = Field(None, description="The fp32 artifact of that ratio (same measurement session).")
    threads: int | None = Field(None, description="Intra-op threads of the session (None: runtime default).")
    output_cosine: float | None = Field(None, description="Output cosine vs the fp32 original on calibration data.")
    reference_cosine: float | None = Field(None, description="The same with exact int8 semantics (QDQ unfused; "
                                           "ONNX forms): differs from output_cosine where the host's fused "
                                           "kernels round or saturate differently (U8S8 on AVX2 without VNNI).")
    slow_ops: list[str] = Field(default_factory=list,
                                description="Why it is slow: ops the fast path does not take, or the costliest.")
    kind: FigureKind = Field(MEASURED, description="Timed on this host with the real runtime.")


class DeploymentCandidate(BaseModel):
    """One form host-cpu could deploy, timed in the build's measurement session on this host."""

    model_config = ConfigDict(extra="forbid")

    artifact: str
    precision: str = Field(description="fp32, fp16, int8 or mixed (int8 with some layers kept higher).")
    runtime: str
    p50_ms: float
    ratio_to_fastest_fp32: float | None = Field(description="p50 ÷ the p50 of the fastest fp32 form.")
    faithful: bool = Field(description="Its accuracy (or label-free) check passed on this host's arithmetic.")
    evidence: str = Field(description="What decided faithful: the check and its figures, one line.")
    kind: FigureKind = Field(MEASURED, description="Timed on this host with the real runtime.")


def deployment_choice(measured: HostMeasurement, precision: dict[str, str]
                      ) -> tuple[list[DeploymentCandidate], str | None]:
    """Every fp32, fp16 and int8 form of ``measured`` (artifact key → precision in ``precision``), fastest first,
    and the one to deploy: the fastest faithful one (None when none is timed and faithful)."""
    floats = [r.median_ms for k, r in measured.latency.items() if precision.get(k) == "fp32"]
    fastest_fp32 = min(floats) if floats else None
    candidates = []
    for key, timing in measured.latency.items():
        if precision.get(key) not in DEPLOYABLE:
            continue
        check = measured.faithful.get(key)
        candidates.append(DeploymentCandidate(
            artifact=key, precision=precision[key], runtime=timing.runtime, p50_ms=timing.median_ms,
            ratio_to_fastest_fp32=round(timing.median_ms / fastest_fp32, 4) if fastest_fp32 else None,
            faithful=check is not None and check.ok,
            evidence=check.evidence if check is not None else "no accuracy check of it on this host"))
    candidates.sort(key=lambda c: c.p50_ms)
    chosen = next((c.artifact for c in candidates if c.faithful), None)
    log.info("host-cpu deploys %s (fastest faithful of %d forms)", chosen, len(candidates))
    return candidates, chosen


def _why_slow(runtime: str, path: Path, feed: list[np.ndarray] | None, threads: int | None) -> list[str]:
    if runtime == "litert":
        rejected = xnnpack_rejected_ops(path)
        return [f"not taken by XNNPACK: {op}" for op in rejected] or ["XNNPACK takes every op"]
    shares = ort_time_by_op_type(path, feed, runs=PROFILE_RUNS, threads=threads)
    return [f"{op}: {100 * share:.0f}% of node time" for op, share in list(shares.items())[:4]]


def _fp32_key(key: str, runtime: str, latency: dict[str, LatencyResult], precision: dict[str, str]) -> str | None:
    same = [k for k, r in latency.items() if precision[k] == "fp32" and r.runtime == runtime]
    return same[0] if same else None


def forms_table(paths: dict[str, Path], measured: HostMeasurement, feed: list[np.ndarray] | None = None,
                precision: dict[str, str] | None = None) -> tuple[list[Int8Form], str | None]:
    """The int8-forms table from one measurement session, and the fastest int8 form that keeps the float output.

    Every p50 and every ratio is read from ``measured.latency`` — the same numbers
    the artifacts table shows — so the two tables cannot disagree. The fastest int8
    form is the fastest whose output cosine is at least :data:`MIN_COSINE` (with no
    cosine known, the fastest); what a build deploys is :func:`deployment_choice`.
    """
    precision = precision or {k: precision_of(p) for k, p in paths.items()}
    forms = []
    for key, timing in measured.latency.items():
        if precision.get(key) not in QUANTIZED or key not in paths:
            continue
        base_key = _fp32_key(key, timing.runtime, measured.latency, precision)
        base = measured.latency[base_key].median_ms if base_key else None
        forms.append(Int8Form(artifact=key, runtime=timing.runtime, p50_ms=timing.median_ms,
                              p90_ms=timing.p90_ms if timing.p90_ms is not None else timing.median_ms,
                              ratio_to_fp32=timing.median_ms / base if base else None,
                              fp32_artifact=base_key, threads=measured.threads,
                              output_cosine=measured.cosine.get(key),
                              reference_cosine=measured.reference_cosine.get(key),
                              slow_ops=_why_slow(timing.runtime, paths[key], feed, measured.threads)))
    faithful = [f for f in forms if f.output_cosine is not None and f.output_cosine >= MIN_COSINE]
    if not measured.cosine:
        faithful = forms
    fastest = min(faithful, key=lambda f: f.p50_ms).artifact if faithful else None
    log.info("deployment int8 form on this host: %s", fastest)
    return forms, fastest


def compare_int8_forms(artifacts: dict[str, Path], settings: BenchSettings,
                       feed: list[np.ndarray] | None = None) -> tuple[list[Int8Form], str | None]:
    """Time the int8 forms among ``artifacts`` (key → file) next to their fp32 originals; returns forms, fastest.

    Keys ending in ``.onnx``/``.tflite`` choose the runtime; ``int8`` in a key marks an int8 form.
    One interleaved session through the shared timing loop.
    """
    timings = single_stream(list(artifacts.values()), settings, inputs=feed)
    session = f"{len(timings)} artifacts, threads={settings.threads or 'default'}"
    latency = {key: LatencyResult.from_timing(t, settings.threads, session) for key, t in zip(artifacts, timings)}
    return forms_table(artifacts, HostMeasurement(latency=latency, threads=settings.threads), feed)
