"""Full-integer TFLite through the TFLite converter, with int8 input and output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from edgepipe.data import Dataset
from edgepipe.export.tf_function import TFGraph
from edgepipe.export.to_tflite import tflite_converter
from edgepipe.quantize.recipe import QuantRecipe


def quantize_tflite(graph: TFGraph, out_path: Path, calibration: Dataset, recipe: QuantRecipe) -> Path:
    """Write the full-integer TFLite of ``graph`` to ``out_path``, calibrated on ``calibration``.

    The converter calibrates with min/max ranges; int16 activations use the
    converter's 16x8 op set with int16 input and output.
    """
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()

    def representative() -> Iterator[list[np.ndarray]]:
        yield from calibration.samples()

    converter = tflite_converter(graph)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
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
    out_path.write_bytes(converter.convert())
    return out_path
