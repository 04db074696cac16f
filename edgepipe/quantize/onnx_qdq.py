"""Int8 ONNX in QDQ form through ``onnxruntime.quantization`` (pre-process, then ``quantize_static``)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from edgepipe.data import Dataset
from edgepipe.quantize.recipe import QuantRecipe

log = logging.getLogger(__name__)

_METHODS = {"minmax": "MinMax", "percentile": "Percentile", "entropy": "Entropy"}


def calibration_reader(dataset: Dataset, input_names: list[str]) -> Any:
    """An ``onnxruntime.quantization.CalibrationDataReader`` over ``dataset`` (batch 1, model order)."""
    from onnxruntime.quantization import CalibrationDataReader

    class _Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self._samples = dataset.samples()

        def get_next(self) -> dict[str, Any] | None:
            sample = next(self._samples, None)
            return None if sample is None else dict(zip(input_names, sample))

        def rewind(self) -> None:
            self._samples = dataset.samples()

    return _Reader()


def preprocess(float_path: Path, out_path: Path) -> Path:
    """ONNX Runtime's recommended pre-processing (shape inference, graph optimisation) before PTQ."""
    from onnxruntime.quantization.shape_inference import quant_pre_process

    quant_pre_process(str(float_path), str(out_path), skip_symbolic_shape=False)
    return out_path


def quantize_onnx(float_path: Path, out_path: Path, calibration: Dataset, recipe: QuantRecipe,
                  scratch: Path) -> Path:
    """Write the QDQ quantized ``float_path`` to ``out_path`` following ``recipe``."""
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    prepared = preprocess(float_path, scratch / f"{float_path.stem}_prep.onnx")
    model = onnx.load(str(prepared))
    initializers = {init.name for init in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in initializers]
    activation_type = QuantType.QInt8 if recipe.activation_bits == 8 else QuantType.QInt16
    quantize_static(
        str(prepared), str(out_path), calibration_reader(calibration, input_names),
        quant_format=QuantFormat.QDQ,
        per_channel=recipe.per_channel,
        activation_type=activation_type,
        weight_type=QuantType.QInt8,
        calibrate_method=getattr(CalibrationMethod, _METHODS[recipe.method]),
        nodes_to_exclude=list(recipe.keep_float),
        extra_options={
            "ActivationSymmetric": recipe.symmetric_activations,
            "WeightSymmetric": True,
            "CalibTensorRangeSymmetric": recipe.symmetric_activations,
        },
    )
    log.info("quantized %s -> %s (%s)", float_path.name, out_path.name, recipe.label)
    return out_path
