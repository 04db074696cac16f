"""Which int8 form is fastest on this host: LiteRT/XNNPACK int8, ONNX Runtime QDQ, ONNX Runtime QOperator.

Int8 is not automatically faster on a host CPU: XNNPACK may leave int8 ops to
LiteRT's slower built-in kernels, and ONNX Runtime runs the QDQ form only as fast
as the QuantizeLinear/DequantizeLinear pairs it manages to fuse. All forms and
their fp32 originals are timed in one interleaved session (a build's latency
stage, or ``edgepipe bench --int8-forms``); the table is read from that session
alone, names the fastest faithful form and, for each, why it is slow.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from edgepipe.figures import MEASURED, FigureKind
from edgepipe.latency.measure import BenchSettings, precision_of, single_stream
from edgepipe.latency.op_profile import ort_time_by_op_type, xnnpack_rejected_ops
from edgepipe.latency.session import LatencyResult
from edgepipe.quantize.host.forms import MIN_COSINE, QOPERATOR_NAME, HostMeasurement

log = logging.getLogger(__name__)
#: Artifact precisions that are int8 forms: all-int8, and the ladder's mixed precision (int8 with a few layers
#: kept higher), which is what most real models deploy; leaving it out left them without a host form.
QUANTIZED = ("int8", "mixed")
#: Runs of ONNX Runtime's profiler per form: op shares, not timings, so a few runs suffice.
PROFILE_RUNS = 5

__all__ = ["QOPERATOR_NAME", "Int8Form", "compare_int8_forms", "forms_table"]


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
    """The int8-forms table from one measurement session, and the deployment artifact.

    Every p50 and every ratio is read from ``measured.latency`` — the same numbers
    the artifacts table shows — so the two tables cannot disagree. The deployment
    artifact is the fastest form whose output cosine is at least :data:`MIN_COSINE`
    (with no cosine known, the fastest form).
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
