"""Per-layer sensitivity of the ladder's current PTQ setting, in every format it quantizes."""

from __future__ import annotations

from pathlib import Path

from edgepipe.data.dataset import Dataset
from edgepipe.quantize.ladder_context import LadderContext
from edgepipe.quantize.quantized_once import data_key
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import LayerSensitivity
from edgepipe.quantize.sensitivity_onnx import onnx_sensitivity
from edgepipe.quantize.sensitivity_tflite import tflite_sensitivity


def measure_sensitivity(context: LadderContext) -> None:
    """Fill ``context.sensitivity`` for the best PTQ recipe so far (ONNX and TFLite), on the selection split.

    Falls back to the calibration split when there is no selection split; never
    touches the evaluation split.
    """
    dataset = context.selection or context.calibration
    limit = context.settings.sensitivity_samples
    folder = context.folder("sensitivity")
    rows = []
    labels = []
    for fmt in context.formats:
        recipe = context.best_recipe.get(fmt, context.settings.start)
        recipe = QuantRecipe(method=recipe.method, per_channel=recipe.per_channel,
                             symmetric_activations=recipe.symmetric_activations)
        labels.append(f"{fmt} {recipe.label}")
        int8 = context.quantize(fmt, recipe, folder / f"model_int8.{fmt}")
        if fmt == "onnx":
            rows += _onnx_rows(context, int8, dataset, recipe, limit)
        else:
            assert context.graph is not None
            rows += tflite_sensitivity(context.graph, context.floats["tflite"], int8, context.calibration, dataset,
                                       recipe, limit)
    context.sensitivity = rows
    context.sensitivity_recipe = f"{', '.join(labels)}; {min(limit, len(dataset))} samples of {dataset.path.name}"


def _onnx_rows(context: LadderContext, int8: Path, dataset: Dataset, recipe: QuantRecipe,
               limit: int) -> list[LayerSensitivity]:
    """:func:`onnx_sensitivity` of ``int8``, measured once per build (copies: each report owns its rows)."""
    memo, source = context.memo, context.floats["onnx"]
    key = ("ONNX sensitivity", memo.digest(source), memo.digest(int8), data_key(dataset), recipe, limit)
    rows = memo.recall(key, lambda: onnx_sensitivity(source, int8, context.calibration, dataset, recipe,
                                                    context.work, limit, memo=memo))
    return [row.model_copy() for row in rows]
