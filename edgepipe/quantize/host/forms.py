"""The int8 forms host-cpu may deploy, made once per build and checked for fidelity before they are timed.

Int8 is not automatically faster on a host CPU. ONNX Runtime's x86 kernels
multiply uint8 activations by int8 weights (U8S8: VPMADDUBSW on AVX2, VPDPBUSD
with VNNI); int8 × int8 activations first have to be shifted to uint8. So
besides the build's QDQ ``model_int8.onnx`` (int8 × int8, what NPUs want) and
``model_int8.tflite``, host-cpu gets ``model_int8_qdq_u8.onnx``: the build's own QDQ
model (the ladder's result: its recipe, ranges, layers kept in float or int16) with
uint8 activations, which ONNX Runtime fuses into its U8S8 kernels (QLinearConv,
QLinearMul, …; :mod:`edgepipe.quantize.host.qdq_uint8`) — the same integers, no second
calibration. Without a QDQ model to shift, ``model_int8_qoperator.onnx``: QOperator
form, uint8 activations × int8 per-channel weights, calibrated afresh with min/max
(also what ``edgepipe bench --int8-forms`` makes from a float model).

Every form carries its output cosine against its fp32 original on calibration
samples (never the evaluation split), as this host computes it (fused kernels:
on AVX2 without VNNI the U8S8 multiply-add can saturate 16-bit pair sums) and,
for ONNX forms, with exact int8 semantics (``reference_int8``, QDQ left unfused):
a form whose host cosine is below :data:`MIN_COSINE` cannot be the deployment
artifact however fast it is.
"""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgepipe.artifacts import Artifact
from edgepipe.data.dataset import Dataset
from edgepipe.latency.cpu_features import HostCpu, host_cpu
from edgepipe.latency.interleaved import LatencyResult
from edgepipe.load.onnx_quantized import quantized_kind
from edgepipe.metrics.similarity import cosine
from edgepipe.quantize.host.qdq_uint8 import uint8_activations
from edgepipe.runtimes import open_runner

log = logging.getLogger(__name__)

QOPERATOR_NAME = "model_int8_qoperator.onnx"
QDQ_U8_NAME = "model_int8_qdq_u8.onnx"
#: The U8S8 QOperator form with 7-bit weights, made on hosts without an int8 dot product (AVX2 alone), where
#: ONNX Runtime adds pairs of u8 x s8 products into 16 bits: with 7-bit weights a pair (255 x 64, twice) fits.
REDUCE_RANGE_NAME = "model_int8_reduce_range.onnx"
#: Smallest output cosine (int8 form vs its fp32 original) a deployment artifact must keep.
MIN_COSINE = 0.99
#: Calibration samples the QOperator form is calibrated on, and samples its fidelity is checked on.
CALIBRATION_SAMPLES = 64
FIDELITY_SAMPLES = 4


@dataclass(frozen=True)
class Faithfulness:
    """Whether one artifact keeps the model's accuracy as this host computes it, and the evidence (one line)."""

    ok: bool
    evidence: str


@dataclass(frozen=True)
class HostMeasurement:
    """One measurement session of a build: every artifact's latency at one thread count, and fidelity.

    ``latency``: artifact key → its timing, all from one interleaved run; ``cosine``:
    int8 artifact key → output cosine against its fp32 original (0..1) as this host computes it;
    ``reference_cosine``: the same with exact int8 semantics (ONNX forms only); ``faithful``: artifact key →
    whether its accuracy (or label-free) check passed on this host's arithmetic (an artifact without one is not
    faithful, the float reference is).
    """

    latency: dict[str, LatencyResult]
    cosine: dict[str, float] = field(default_factory=dict)
    threads: int | None = None
    reference_cosine: dict[str, float] = field(default_factory=dict)
    faithful: dict[str, Faithfulness] = field(default_factory=dict)


def make_qoperator(float_onnx: Path, out: Path, calibration: Dataset, scratch: Path, *,
                   reduce_range: bool = False) -> Path:
    """Int8 ONNX in QOperator form: uint8 activations × int8 per-channel weights, min/max calibration.

    Uses the pre-processed float model the build's QDQ quantization left in
    ``scratch`` when there is one (the same file, not converted twice).
    """
    from edgepipe.quantize.onnx_qdq import calibration_reader, preprocess

    name = f"{float_onnx.stem}_prep.onnx"
    prepared = next((p for p in (scratch / "ladder" / name, scratch / name) if p.is_file()), scratch / name)
    preprocess(float_onnx, prepared)
    with open_runner(prepared) as runner:
        names = [spec.name for spec in runner.signature.inputs]
    return quantize_u8s8(prepared, out, calibration_reader(calibration, names, CALIBRATION_SAMPLES),
                         reduce_range=reduce_range)


def quantize_u8s8(float_onnx: Path, out: Path, reader: object, *, reduce_range: bool = False) -> Path:
    """QOperator, uint8 activations × int8 per-channel weights (7-bit with ``reduce_range``), from ``reader`` (a
    CalibrationDataReader), after :func:`divisions_as_products`: the one way edgepipe makes this form (build and
    ``edgepipe bench``)."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static  # heavy optional dependency

    source = divisions_as_products(float_onnx, out.with_name(f".{out.stem}_products.onnx"))
    chatter = io.StringIO()  # the calibrator prints progress to stdout; keep it in the log instead
    with contextlib.redirect_stdout(chatter):
        quantize_static(str(source), str(out), reader, quant_format=QuantFormat.QOperator, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, reduce_range=reduce_range)
    log.debug("%s", chatter.getvalue().strip())
    if source != float_onnx:
        source.unlink(missing_ok=True)
    return out


def divisions_as_products(path: Path, out: Path) -> Path:
    """``Div(x, c)`` by a constant ``c`` rewritten as ``Mul(x, 1/c)``; the model at ``out`` (or ``path`` unchanged).

    ONNX Runtime's quantizer has no quantized Div, so each one (HardSwish exported as
    ``x * clip(x + 3, 0, 6) / 6`` has one) stays float between a DequantizeLinear and a
    QuantizeLinear; a Mul becomes one QLinearMul. Same values up to float rounding.
    """
    import onnx  # heavy optional dependency
    from onnx import numpy_helper

    model = onnx.load(str(path))
    constants = {t.name: t for t in model.graph.initializer}
    changed = 0
    for node in model.graph.node:
        divisor = constants.get(node.input[1]) if node.op_type == "Div" and len(node.input) == 2 else None
        if divisor is None:
            continue
        value = numpy_helper.to_array(divisor)
        if not np.issubdtype(value.dtype, np.floating) or not np.all(value != 0):
            continue
        reciprocal = numpy_helper.from_array((1.0 / value).astype(value.dtype), f"{divisor.name}_reciprocal")
        if reciprocal.name not in constants:
            model.graph.initializer.append(reciprocal)
            constants[reciprocal.name] = reciprocal
        node.op_type, node.input[1] = "Mul", reciprocal.name
        changed += 1
    if not changed:
        return path
    onnx.save(model, str(out))
    log.debug("%d constant divisions rewritten as products for the host int8 form", changed)
    return out


def _outputs(path: Path, data: Dataset, limit: int, reference_int8: bool = False) -> np.ndarray:
    """All outputs of the model at ``path`` over ``limit`` samples of ``data``, flattened into one float64 vector."""
    with open_runner(path, reference_int8=reference_int8) as runner:
        return np.concatenate([np.asarray(a, np.float64).ravel()
                               for sample in data.samples(limit) for a in runner.infer(sample)])


def outputcosine(reference: Path, candidate: Path, data: Dataset, limit: int = FIDELITY_SAMPLES) -> float:
    """Cosine similarity of all outputs of ``candidate`` and ``reference`` over ``limit`` samples of ``data``."""
    return cosine(_outputs(reference, data, limit), _outputs(candidate, data, limit))


def fp32_twin(artifact: Artifact, artifacts: list[Artifact]) -> Artifact | None:
    """The fp32 artifact an int8 one is compared with: same format, else the float ONNX."""
    floats = {a.format: a for a in artifacts if a.precision == "fp32"}
    return floats.get(artifact.format) or floats.get("onnx")


def host_forms(artifacts: list[Artifact], calibration: Dataset, folder: Path, scratch: Path,
               cpu: HostCpu | None = None) -> list[Artifact]:
    """The extra int8 forms host-cpu may deploy, written into ``folder``; on an x86 host without an int8 dot
    product (``cpu``, this host's by default) also :data:`REDUCE_RANGE_NAME`, which cannot saturate there.

    The build's QDQ ONNX with uint8 activations (:data:`QDQ_U8_NAME`): the ladder's result, fused by
    ONNX Runtime into U8S8 kernels, made without a second calibration (the ladder's mixed-precision result
    too). When there is none, or an all-int8 one that cannot be shifted: the U8S8 QOperator form, calibrated
    afresh. A mixed-precision model that cannot be shifted gets no extra form: a fresh all-int8 calibration
    would drop the layers the ladder kept above int8 (on a hand-keypoint regressor: cosine 0.99 -> 0.81).
    """
    forms = _main_form(artifacts, calibration, folder, scratch)
    cpu = cpu or host_cpu()
    float_onnx = next((a for a in artifacts if a.key == "model.onnx" and a.precision == "fp32"), None)
    if cpu.architecture in ("x86_64", "AMD64") and cpu.int8_dot_product is None and float_onnx is not None:
        path = make_qoperator(float_onnx.path, folder / REDUCE_RANGE_NAME, calibration, scratch, reduce_range=True)
        if is_quantized(path):
            forms.append(Artifact(path, "onnx", "int8"))
        else:
            path.unlink()
    return forms


def _main_form(artifacts: list[Artifact], calibration: Dataset, folder: Path, scratch: Path) -> list[Artifact]:
    qdq = build_qdq(artifacts)
    shifted = uint8_activations(qdq.path, folder / QDQ_U8_NAME) if qdq is not None else None
    if shifted is not None:
        return [Artifact(shifted, "onnx", qdq.precision)]  # type: ignore[union-attr]
    if qdq is not None and qdq.precision == "mixed":
        log.info("%s: no uint8 form and no QOperator form (it would lose the ladder's mixed precision)", qdq.key)
        return []
    float_onnx = next((a for a in artifacts if a.key == "model.onnx" and a.precision == "fp32"), None)
    if float_onnx is None:
        return []
    path = make_qoperator(float_onnx.path, folder / QOPERATOR_NAME, calibration, scratch)
    if not is_quantized(path):  # no op had a QOperator kernel (e.g. only ConvTranspose): not an int8 artifact
        log.warning("%s left out: ONNX Runtime quantized no op of the model in QOperator form", path.name)
        path.unlink()
        return []
    return [Artifact(path, "onnx", "int8")]


def build_qdq(artifacts: list[Artifact]) -> Artifact | None:
    """The build's own QDQ ONNX (``model_int8.onnx``, int8 or the ladder's mixed result), if it made one."""
    return next((a for a in artifacts if a.key == "model_int8.onnx" and a.precision in ("int8", "mixed")), None)


def exact_twin(artifact: Artifact, artifacts: list[Artifact]) -> Artifact | None:
    """The artifact whose outputs under exact int8 semantics ``artifact``'s are (the build's QDQ model, for its
    uint8-activation form: the same integers), so they are computed once; else None."""
    if artifact.key != QDQ_U8_NAME:
        return None
    return build_qdq(artifacts)


def is_quantized(path: Path) -> bool:
    """True when the ONNX model at ``path`` has integer ops (a quantizer can leave every op float)."""
    import onnx  # heavy optional dependency

    return quantized_kind(onnx.load(str(path), load_external_data=False)).is_quantized


def form_fidelity(artifacts: list[Artifact], calibration: Dataset,
                  limit: int = FIDELITY_SAMPLES) -> tuple[dict[str, float], dict[str, float]]:
    """Output cosine of every int8 artifact against its :func:`fp32_twin` on calibration samples: as this host
    computes it, and (ONNX forms) with exact int8 semantics. Each fp32 twin is run once."""
    host: dict[str, float] = {}
    reference: dict[str, float] = {}
    twins: dict[Path, np.ndarray] = {}
    for artifact in artifacts:
        twin = fp32_twin(artifact, artifacts) if artifact.precision in ("int8", "mixed") else None
        if twin is None:
            continue
        if twin.path not in twins:
            twins[twin.path] = _outputs(twin.path, calibration, limit)
        host[artifact.key] = round(cosine(twins[twin.path], _outputs(artifact.path, calibration, limit)), 6)
        same = exact_twin(artifact, artifacts)
        if same is not None and same.key in reference:
            reference[artifact.key] = reference[same.key]
        elif artifact.format == "onnx":
            exact = _outputs(artifact.path, calibration, limit, reference_int8=True)
            reference[artifact.key] = round(cosine(twins[twin.path], exact), 6)
    return host, reference
