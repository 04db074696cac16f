"""A Keras model or SavedModel as one TensorFlow graph with a fixed batch of 1.

Both converters start from it: tf2onnx from the ``tf.function``, the TFLite
converter from a batch-1 SavedModel written once into a scratch folder (the
converter freezes Keras 3 variables only on that path). A fixed batch matters:
a dynamic batch adds Shape/StridedSlice/Pack ops that NPUs reject.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.errors import ModelLoadError
from edgepipe.load import SourceModel

SERVING_ENDPOINT = "serve"


@dataclass(frozen=True)
class TFGraph:
    """The batch-1 ``tf.function``, its input signature, and the batch-1 SavedModel folder."""

    function: Any
    input_signature: tuple[Any, ...]
    saved_model: Path


def _input_signature(model: SourceModel) -> tuple[Any, ...]:
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    specs = []
    for spec in model.signature.inputs:
        rest = spec.sample_shape()
        if any(d is None for d in rest):
            raise ModelLoadError(f"input '{spec.name}' has dynamic dimensions {spec.shape}", path=model.path,
                                 fix="Give the model a fixed input shape (only the batch may be dynamic)")
        safe_name = spec.name.replace(":", "_").replace("/", "_")
        specs.append(tf.TensorSpec((1, *rest), tf.as_dtype(spec.dtype), name=safe_name))
    return tuple(specs)


def _keras_graph(model: SourceModel, signature: tuple[Any, ...], folder: Path) -> Any:
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    keras_model = model.handle
    single = len(signature) == 1

    def call(*inputs: Any) -> Any:
        return keras_model(inputs[0] if single else list(inputs), training=False)

    function = tf.function(call, input_signature=signature, autograph=False)
    keras_model.export(str(folder), format="tf_saved_model",
                       input_signature=list(signature), verbose=False)
    return function


def _saved_model_graph(model: SourceModel, signature: tuple[Any, ...], folder: Path) -> Any:
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    serving = model.handle.signatures["serving_default"]
    names = [spec.name for spec in model.signature.inputs]
    output_names = [spec.name for spec in model.signature.outputs]

    def call(*inputs: Any) -> Any:
        outputs = serving(**dict(zip(names, inputs)))
        return [outputs[name] for name in output_names]

    function = tf.function(call, input_signature=signature, autograph=False)
    module = tf.Module()
    module.source = model.handle
    module.serve = function
    tf.saved_model.save(module, str(folder), signatures={SERVING_ENDPOINT: function.get_concrete_function()})
    return function


def build_tf_graph(model: SourceModel, scratch: Path) -> TFGraph:
    """The batch-1 graph of a Keras model or SavedModel; its SavedModel goes under ``scratch``."""
    signature = _input_signature(model)
    folder = scratch / "fixed_batch_saved_model"
    if model.format == "keras":
        function = _keras_graph(model, signature, folder)
    elif model.format == "savedmodel":
        function = _saved_model_graph(model, signature, folder)
    else:
        raise ValueError(f"{model.format} models have no TensorFlow graph")
    return TFGraph(function=function, input_signature=signature, saved_model=folder)
