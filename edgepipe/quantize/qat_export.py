"""QAT artifacts: the fine-tuned fake-quant Keras model as full-int8 TFLite and QDQ ONNX."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.quantize.ladder_context import LadderContext
from edgepipe.quantize.qat import QatSettings, train_qat
from edgepipe.quantize.recipe import QuantRecipe


def run_qat(context: LadderContext, recipe: QuantRecipe, folder: Path) -> dict[str, Artifact]:
    """Fine-tune, then convert: TFLite through the converter (FakeQuant ranges, int8 I/O), ONNX through tf2onnx.

    The ONNX keeps tf2onnx's QDQ activations and gets its weights stored as int8.
    """
    from edgepipe.export.tf_function import build_tf_graph
    from edgepipe.export.to_onnx import export_onnx
    from edgepipe.quantize.tflite_int8 import quantize_tflite

    assert context.train is not None
    settings = QatSettings(epochs=context.settings.qat_epochs, learning_rate=context.settings.qat_learning_rate,
                           per_channel=recipe.per_channel)
    trained = train_qat(context.model.handle, context.train, settings)
    graph = build_tf_graph(dataclasses.replace(context.model, handle=trained), folder)
    artifacts = {}
    if "onnx" in context.formats:
        from edgepipe.quantize.qdq_weights import store_int8_weights

        path = store_int8_weights(export_onnx(graph, folder / "model_int8.onnx"), recipe.per_channel)
        artifacts["onnx"] = Artifact(path, "onnx", "int8")
    if "tflite" in context.formats:
        path = quantize_tflite(graph, folder / "model_int8.tflite", context.calibration, recipe, memo=context.memo)
        artifacts["tflite"] = Artifact(path, "tflite", "int8")
    return artifacts
