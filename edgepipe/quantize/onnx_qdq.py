"""Int8 ONNX in QDQ form through ``onnxruntime.quantization`` (pre-process, then ``quantize_static``).

Calibration is ONNX Runtime's own: its ``MinMax``, ``Percentile`` and
``Entropy`` calibrators. Mixed precision keeps layers float by editing the fully
quantized model (:mod:`.qdq_float_nodes`: the int8 rest stays exactly as it was) and
gives chosen layers int16 activations with ONNX Runtime's ``TensorQuantOverrides``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import logging
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.quantize.native_ops import restore_native_ops
from edgepipe.quantize.onnx_prepare import PER_CHANNEL_OPSET, default_opset, needs_bias_adjust_off, prepare_onnx
from edgepipe.quantize.qdq_params import QdqModel, read_qdq
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import QuantRecipe

log = logging.getLogger(__name__)

_METHODS = {"minmax": "MinMax", "percentile": "Percentile", "entropy": "Entropy"}
#: Op types that carry weights and are quantized as layers (the unit of sensitivity and mixed precision).
LAYER_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")


def calibration_reader(dataset: Dataset, input_names: list[str], limit: int | None = None) -> Any:
    """An ``onnxruntime.quantization.CalibrationDataReader`` over ``dataset`` (batch size 1, model order).

    It has a length and takes ``set_range``, so ONNX Runtime can calibrate it in chunks
    (:func:`calibration_chunk`).
    """
    from onnxruntime.quantization import CalibrationDataReader

    count = len(dataset) if limit is None else min(limit, len(dataset))

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._range = (0, count)
            self.rewind()

        def __len__(self) -> int:
            return count

        def get_next(self) -> dict[str, Any] | None:
            sample = next(self._samples, None)
            return None if sample is None else dict(zip(input_names, sample))

        def set_range(self, start_index: int, end_index: int) -> None:
            self._range = (start_index, min(end_index, count))
            self.rewind()

        def rewind(self) -> None:
            start, end = self._range
            self._samples = itertools.islice(dataset.samples(end), start, None)

    return _Reader()


#: Bytes of activations ONNX Runtime's calibrators may hold at once. Its histogram calibrators (percentile,
#: entropy) keep every activation of every sample they are given (13 GB for a layout detector at
#: 800x608 on 32 samples: out of memory on a 24 GiB machine), so larger calibrations run in chunks.
CALIBRATION_BUDGET_BYTES = 2 << 30


def activation_bytes(model: Any) -> int:
    """Bytes of one sample's activations: every float tensor whose static shape shape inference recorded."""
    from onnx import TensorProto

    sizes = {TensorProto.FLOAT: 4, TensorProto.FLOAT16: 2, TensorProto.DOUBLE: 8}
    total = 0
    for value in model.graph.value_info:
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor.shape.dim]
        total += sizes.get(tensor.elem_type, 0) * int(np.prod(dims)) if dims else 0
    return total


def calibration_chunk(count: int, per_sample_bytes: int, budget: int = CALIBRATION_BUDGET_BYTES) -> int | None:
    """None when ``count`` samples fit the budget at once; else the largest chunk within it that divides
    ``count`` (ONNX Runtime needs equal chunks). Chunks only when needed: merging histograms across chunks
    widens them, and ONNX Runtime's entropy search is slow on wide histograms."""
    if per_sample_bytes * count <= budget:
        return None
    most = max(1, budget // max(per_sample_bytes, 1))
    return next(size for size in range(min(most, count), 0, -1) if count % size == 0)


def preprocess(float_path: Path, out_path: Path) -> Path:
    """ONNX Runtime's pre-processing and edgepipe's fixes for real exports (:mod:`.onnx_prepare`); cached.

    HardSwish stays HardSwish (NPUs run it natively; :mod:`.native_ops`).
    """
    prepared = prepare_onnx(float_path, out_path).path
    return restore_native_ops(float_path, prepared)  # idempotent: fuses nothing the second time


def graph_inputs(model: Any) -> list[str]:
    """Names of the real (non-initializer) inputs of an ``onnx.ModelProto``."""
    initializers = {init.name for init in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


def weight_layers(path: Path) -> list[tuple[str, str]]:
    """(node name, op type) of every weight-carrying node of the ONNX model at ``path``, in graph order."""
    import onnx

    model = onnx.load(str(path))
    return [(n.name, n.op_type) for n in model.graph.node if n.op_type in LAYER_OPS]


def _int16_overrides(model: Any, nodes: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """``TensorQuantOverrides`` giving every activation in and out of ``nodes`` int16."""
    from onnxruntime.quantization import QuantType

    initializers = {init.name for init in model.graph.initializer}
    tensors = {t for n in model.graph.node if n.name in nodes for t in (*n.input, *n.output)
               if t and t not in initializers}
    return {t: [{"quant_type": QuantType.QUInt16}] for t in sorted(tensors)}


def ranges_cache(prepared: Path, calibration: Dataset, recipe: QuantRecipe, scratch: Path) -> Path:
    """Where ONNX Runtime keeps the activation ranges of one (prepared model, data, method, symmetry).

    Ranges depend on nothing else a recipe says (granularity, int16 or float layers, which nodes are
    quantized), so the ladder's candidates and the per-layer sensitivity calibrate once per method and
    quantize from the cache: a mixed-precision try costs one graph rewrite, not one calibration pass.
    """
    stat = prepared.stat()
    key = hashlib.sha256(repr((str(prepared.resolve()), stat.st_mtime_ns, stat.st_size, calibration.sha256,
                               len(calibration), recipe.method, recipe.symmetric_activations)).encode())
    folder = scratch / "calibration_ranges"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{recipe.method}_{key.hexdigest()[:16]}.json"


def _file_label(recipe: QuantRecipe) -> str:
    return recipe.label.replace("/", "_")


def orts_quantization(float_path: Path, calibration: Dataset, recipe: QuantRecipe,
                      scratch: Path, *, memo: QuantizationMemo | None = None) -> tuple[Path, QdqModel]:
    """The graph :func:`quantize_onnx` quantizes for ``float_path``, and how its int8 model quantizes
    it (activations, weights, biases and constants, :mod:`.qdq_params`).

    What QAT trains on (:mod:`.qat_onnx`): the same prepared graph at the same quantization
    (``recipe`` on ``calibration``; quantized here when no earlier step did it already).
    """
    prepared = preprocess(float_path, scratch / f"{float_path.stem}_prep.onnx")
    reference = quantize_onnx(float_path, scratch / f"{float_path.stem}_{_file_label(recipe)}.onnx",
                              calibration, recipe, scratch, memo=memo)
    return prepared, read_qdq(reference, prepared)


def _share_ranges(source: Path, prepared: Path, calibration: Dataset, recipe: QuantRecipe, scratch: Path,
                  memo: QuantizationMemo | None) -> None:
    """Make ``prepared``'s ranges cache a copy of ``source``'s, calibrating ``source`` first if needed."""
    source_prepared = preprocess(source, scratch / f"{source.stem}_prep.onnx")
    cache = ranges_cache(source_prepared, calibration, recipe, scratch)
    if not cache.is_file():  # never calibrated in this scratch: its int8 model, if any, was copied from another group's
        quantize_onnx(source, scratch / f"{source.stem}_ranges_{_file_label(recipe)}.onnx", calibration,
                      recipe, scratch, reuse=False, memo=memo)
    shutil.copyfile(cache, ranges_cache(prepared, calibration, recipe, scratch))


def quantize_onnx(float_path: Path, out_path: Path, calibration: Dataset, recipe: QuantRecipe,
                  scratch: Path, *, explicit_activations: bool = False, ranges_of: Path | None = None,
                  reuse: bool = True, memo: QuantizationMemo | None = None) -> Path:
    """Write the QDQ quantized ``float_path`` to ``out_path`` following ``recipe``.

    ``explicit_activations`` keeps every Relu/Clip as a node between its QDQ pairs instead of
    letting the QuantizeLinear's range do the clamping (the base that float layers are cut from).
    Activation ranges come from :func:`ranges_cache` once a first run computed them; ``ranges_of``
    (a float model of the same graph, e.g. before QAT changed its weights) takes that model's
    ranges instead of calibrating this one. ``reuse=False`` quantizes even when an identical
    quantization was done (``memo``, the build's :class:`QuantizationMemo`), which leaves this ``scratch``'s ranges
    cache; a copy does not.
    """
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    memo = memo or QuantizationMemo()
    key = memo.key(float_path, recipe, calibration, (explicit_activations, ranges_of and memo.digest(ranges_of)))
    if reuse and memo.reuse(key, out_path) is not None:
        return out_path
    prepared = preprocess(float_path, scratch / f"{float_path.stem}_prep.onnx")
    if ranges_of is not None:
        _share_ranges(ranges_of, prepared, calibration, recipe, scratch, memo)
    if recipe.keep_float:
        return _with_float_nodes(float_path, out_path, calibration, recipe, scratch, prepared, memo, key)
    model = onnx.load(str(prepared))
    activation_type = QuantType.QInt8 if recipe.activation_bits == 8 else QuantType.QUInt16
    extra: dict[str, Any] = {
        "ActivationSymmetric": recipe.symmetric_activations,
        "WeightSymmetric": True,
        "CalibTensorRangeSymmetric": recipe.symmetric_activations,
        "QDQKeepRemovableActivations": explicit_activations,
    }
    if needs_bias_adjust_off(model):
        extra["QDQDisableWeightAdjustForInt32Bias"] = True
    if recipe.keep_a16w8:
        extra["TensorQuantOverrides"] = _int16_overrides(model, recipe.keep_a16w8)
    chunk = calibration_chunk(len(calibration), activation_bytes(model))
    if chunk is not None:
        extra["CalibStridedMinMax"] = chunk  # ONNX Runtime chunks every method with it, despite the name
    chatter = io.StringIO()  # the calibrators print progress to stdout; keep it in the log instead
    with contextlib.redirect_stdout(chatter):
        quantize_static(
            str(prepared), str(out_path), calibration_reader(calibration, graph_inputs(model)),
            quant_format=QuantFormat.QDQ,
            # below opset 13 the upgrade was refused (prepare_onnx says why): per-tensor is all it can load
            per_channel=recipe.per_channel and default_opset(model) >= PER_CHANNEL_OPSET,
            activation_type=activation_type,
            weight_type=QuantType.QInt8,
            calibrate_method=getattr(CalibrationMethod, _METHODS[recipe.method]),
            extra_options=extra,
            calibration_cache_path=str(ranges_cache(prepared, calibration, recipe, scratch)),
        )
    log.debug("%s", chatter.getvalue().strip())
    log.info("quantized %s -> %s (%s)", float_path.name, out_path.name, recipe.label)
    memo.remember(key, out_path)
    return out_path


def mixed_base(float_path: Path, calibration: Dataset, recipe: QuantRecipe, scratch: Path, *,
               memo: QuantizationMemo | None = None) -> Path:
    """The fully quantized model (``recipe`` without its float layers, activations explicit) that
    :mod:`.qdq_float_nodes` cuts float layers from; made once per recipe and build."""
    base = replace(recipe, keep_float=())
    folder = scratch / "mixed_base"
    folder.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(repr((str(float_path.resolve()), base, calibration.sha256)).encode()).hexdigest()[:16]
    return quantize_onnx(float_path, folder / f"{digest}.onnx", calibration, base, scratch, explicit_activations=True,
                         memo=memo)


def _with_float_nodes(float_path: Path, out_path: Path, calibration: Dataset, recipe: QuantRecipe, scratch: Path,
                      prepared: Path, memo: QuantizationMemo, key: tuple[Any, ...]) -> Path:
    import onnx

    from edgepipe.quantize.qdq_float_nodes import keep_nodes_float

    base = mixed_base(float_path, calibration, recipe, scratch, memo=memo)
    model, made = keep_nodes_float(onnx.load(str(base)), onnx.load(str(prepared)), recipe.keep_float)
    onnx.save(model, str(out_path))
    log.info("quantized %s -> %s (%s; %d of %d kept nodes read float inputs)", float_path.name, out_path.name,
             recipe.label, len(made), len(recipe.keep_float))
    memo.remember(key, out_path)
    return out_path
