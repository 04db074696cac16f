"""Which int8 form is fastest on this host: LiteRT/XNNPACK int8, ONNX Runtime QDQ, ONNX Runtime QOperator.

Int8 is not automatically faster on a host CPU: XNNPACK may leave int8 ops to
LiteRT's slower built-in kernels, and ONNX Runtime runs the QDQ form only as fast
as the QuantizeLinear/DequantizeLinear pairs it manages to fuse. All forms and
their fp32 originals are timed in one interleaved run; the report names the
fastest and, for each, why it is slow.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from edgepipe.bench.measure import ArtifactTiming, BenchSettings, single_stream
from edgepipe.bench.op_profile import ort_time_by_op_type, xnnpack_rejected_ops
from edgepipe.perf.report import Int8Form

log = logging.getLogger(__name__)

QOPERATOR_NAME = "model_int8_qoperator.onnx"


def make_qoperator(float_onnx: Path, out: Path, samples: list[list[np.ndarray]]) -> Path:
    """Int8 ONNX in QOperator form (QLinearConv, QGemm…): uint8 activations, int8 per-channel weights.

    uint8 activations × int8 weights (U8S8) is the combination ONNX Runtime's x86
    kernels are fastest on (VPMADDUBSW / VNNI); calibrated on ``samples``.
    """
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    model = onnx.load(str(float_onnx))
    initializers = {init.name for init in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._it = iter(samples)

        def get_next(self) -> dict[str, np.ndarray] | None:
            sample = next(self._it, None)
            return None if sample is None else dict(zip(names, sample))

    quantize_static(str(float_onnx), str(out), _Reader(), quant_format=QuantFormat.QOperator,
                    per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return out


def _why_slow(timing: ArtifactTiming, path: Path, feed: list[np.ndarray] | None) -> list[str]:
    if timing.runtime == "litert":
        rejected = xnnpack_rejected_ops(path)
        return [f"not taken by XNNPACK: {op}" for op in rejected] or ["XNNPACK takes every op"]
    shares = ort_time_by_op_type(path, feed)
    return [f"{op}: {100 * share:.0f}% of node time" for op, share in list(shares.items())[:4]]


def compare_int8_forms(artifacts: dict[str, Path], settings: BenchSettings,
                       feed: list[np.ndarray] | None = None) -> tuple[list[Int8Form], str | None]:
    """Time the int8 forms among ``artifacts`` (key → file) next to their fp32 originals; returns forms, fastest.

    Keys ending in ``.onnx``/``.tflite`` choose the runtime; ``int8`` in a key marks an int8 form.
    """
    paths = list(artifacts.values())
    timings = single_stream(paths, settings, inputs=feed)
    fp32 = {t.runtime: t.stats.p50_ms for t in timings if t.precision == "fp32"}
    forms = []
    for timing, path in zip(timings, paths):
        if timing.precision != "int8":
            continue
        base = fp32.get(timing.runtime)
        forms.append(Int8Form(artifact=timing.artifact, runtime=timing.runtime, p50_ms=timing.stats.p50_ms,
                              p90_ms=timing.stats.p90_ms, ratio_to_fp32=timing.stats.p50_ms / base if base else None,
                              slow_ops=_why_slow(timing, path, feed)))
    fastest = min(forms, key=lambda f: f.p50_ms).artifact if forms else None
    log.info("fastest int8 form on this host: %s", fastest)
    return forms, fastest
