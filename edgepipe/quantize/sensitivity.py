"""Per-layer sensitivity of the ladder's current PTQ setting, in every format it quantizes."""

from __future__ import annotations

from edgepipe.quantize.ladder_context import LadderContext
from edgepipe.quantize.recipe import QuantRecipe
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
            rows += onnx_sensitivity(context.floats["onnx"], int8, context.calibration, dataset, recipe,
                                     context.work, limit, memo=context.memo)
        else:
            assert context.graph is not None
            rows += tflite_sensitivity(context.graph, context.floats["tflite"], int8, context.calibration, dataset,
                                       recipe, limit)
    context.sensitivity = rows
    context.sensitivity_recipe = f"{', '.join(labels)}; {min(limit, len(dataset))} samples of {dataset.path.name}"
