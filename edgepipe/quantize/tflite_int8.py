"""Full-integer TFLite through the TFLite converter, with int8 (or int16) input and output.

The converter calibrates with min/max ranges, per-channel or per-tensor weights.
Mixed precision (some layers left in float) goes through TF's own selective
quantization: ``QuantizationDebugger`` with ``denylisted_nodes``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.export.tf_function import TFGraph
from edgepipe.export.to_tflite import tflite_converter
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import QuantRecipe


def representative(dataset: Dataset, limit: int | None = None) -> Callable[[], Iterator[list[np.ndarray]]]:
    """The converter's ``representative_dataset``: batch-1 samples of ``dataset``."""

    def samples() -> Iterator[list[np.ndarray]]:
        yield from dataset.samples(limit)

    return samples


def int8_converter(graph: TFGraph, calibration: Dataset, recipe: QuantRecipe) -> Any:
    """A converter set up for full-integer conversion following ``recipe`` (not yet run)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    converter = tflite_converter(graph)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative(calibration)
    if recipe.activation_bits == 16:
        converter.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        io_type = tf.int16
    else:
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        io_type = tf.int8
    converter.inference_input_type = io_type
    converter.inference_output_type = io_type
    if not recipe.per_channel:
        converter._experimental_disable_per_channel = True  # noqa: SLF001 - the converter's only switch for it
    return converter


def quantize_tflite(graph: TFGraph, out_path: Path, calibration: Dataset, recipe: QuantRecipe, *,
                    memo: QuantizationMemo | None = None) -> Path:
    """Write the full-integer TFLite of ``graph`` to ``out_path``, calibrated on ``calibration``.

    int16 activations use the converter's 16x8 op set with int16 input and
    output; layers in ``recipe.keep_float`` (output tensor names) stay float.
    """
    memo = memo or QuantizationMemo()
    key = memo.key(graph, recipe, calibration)
    if memo.reuse(key, out_path) is not None:
        return out_path
    converter = int8_converter(graph, calibration, recipe)
    from edgepipe.native_logs import native_stderr_to_log

    with native_stderr_to_log():  # the converter prints "fully_quantize: ..." from C++
        if recipe.keep_float:
            out_path.write_bytes(selective_debugger(converter, calibration, recipe.keep_float)
                                 .get_nondebug_quantized_model())
        else:
            out_path.write_bytes(converter.convert())
    memo.remember(key, out_path)
    return out_path


def selective_debugger(converter: Any, dataset: Dataset, keep_float: tuple[str, ...] = (),
                       compare: dict[str, Callable[..., float]] | None = None, limit: int | None = None) -> Any:
    """TF's ``QuantizationDebugger`` over ``converter``: ``keep_float`` layers denylisted, ``compare`` metrics."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    options = tf.lite.experimental.QuantizationDebugOptions(
        layer_direct_compare_metrics=compare, denylisted_nodes=list(keep_float) or None, fully_quantize=True)
    with warnings.catch_warnings():  # the debugger builds TF's deprecated tf.lite.Interpreter; it is TF's own tool
        warnings.simplefilter("ignore", UserWarning)
        return tf.lite.experimental.QuantizationDebugger(
            converter=converter, debug_dataset=representative(dataset, limit), debug_options=options)
