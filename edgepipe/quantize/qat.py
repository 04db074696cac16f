"""Quantization-aware training of a Keras 3 model with Keras' own ``fake_quant_with_min_max_vars``.

The float model is cloned with fake-quantized weights (symmetric int8, per
output channel or per tensor) in every Conv2D and DepthwiseConv2D (Dense: per tensor), and
a fake-quantized activation range after every layer and on each input, tracked
by an exponential moving average of the batch min/max. On the TensorFlow
backend these lower to TF ``FakeQuantWithMinMaxVars(PerChannel)`` ops, which the
TFLite converter turns into a full-int8 TFLite and tf2onnx into QDQ ONNX.
BatchNormalization layers are frozen (inference mode) during fine-tuning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from edgepipe.data.dataset import Dataset

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class QatSettings:
    """How to fine-tune: ``epochs``, Adam ``learning_rate``, ``batch_size``, per-channel weights, EMA ``momentum``."""

    epochs: int = 3
    learning_rate: float = 1e-4
    batch_size: int = 32
    per_channel: bool = True
    momentum: float = 0.99
    seed: int = 0


def _layers(keras: Any, settings: QatSettings) -> dict[str, type]:
    """The fake-quant layer classes, defined against the lazily imported ``keras``."""
    ops = keras.ops
    fake_quant = keras.quantizers.fake_quant_with_min_max_vars

    def weights(kernel: Any, per_channel: bool = settings.per_channel) -> Any:
        """Symmetric int8 (narrow range) fake quantization of a kernel; channels on the last axis."""
        if per_channel:
            flat = ops.reshape(kernel, (-1, kernel.shape[-1]))
            bound = ops.maximum(ops.max(ops.abs(flat), axis=0), 1e-8)
            return fake_quant(kernel, -bound, bound, num_bits=8, narrow_range=True, axis=-1)
        bound = ops.maximum(ops.max(ops.abs(kernel)), 1e-8)
        return fake_quant(kernel, -bound, bound, num_bits=8, narrow_range=True)

    class FakeQuantConv2D(keras.layers.Conv2D):
        def convolution_op(self, inputs: Any, kernel: Any) -> Any:
            return super().convolution_op(inputs, weights(kernel))

    class FakeQuantDepthwiseConv2D(keras.layers.DepthwiseConv2D):
        def call(self, inputs: Any) -> Any:
            shape = self.kernel.shape
            kernel = ops.reshape(weights(ops.reshape(self.kernel, (*shape[:2], 1, -1))), shape)
            outputs = ops.depthwise_conv(inputs, kernel, strides=self.strides, padding=self.padding,
                                         dilation_rate=self.dilation_rate, data_format=self.data_format)
            if self.use_bias:
                outputs = ops.add(outputs, self.bias)
            return self.activation(outputs) if self.activation is not None else outputs

    class FakeQuantDense(keras.layers.Dense):
        def call(self, inputs: Any, training: Any = None) -> Any:
            # per-tensor: the converter transposes FC kernels and rejects a per-channel axis on them
            x = ops.matmul(inputs, weights(self.kernel, per_channel=False))
            if self.bias is not None:
                x = ops.add(x, self.bias)
            return self.activation(x) if self.activation is not None else x

    class ActivationRange(keras.layers.Layer):
        """Fake-quantizes its input with a [min, max] tracked by moving average (always containing 0)."""

        def build(self, input_shape: Any) -> None:
            self.low = self.add_weight(shape=(), initializer="zeros", trainable=False, name="low")
            self.high = self.add_weight(shape=(), initializer="zeros", trainable=False, name="high")
            self.seen = self.add_weight(shape=(), initializer="zeros", trainable=False, name="seen")

        def call(self, inputs: Any, training: Any = None) -> Any:
            if training:
                low = ops.minimum(ops.min(inputs), 0.0)
                high = ops.maximum(ops.max(inputs), 0.0)
                keep = settings.momentum * self.seen
                self.low.assign(keep * self.low + (1.0 - keep) * low)
                self.high.assign(keep * self.high + (1.0 - keep) * high)
                self.seen.assign(1.0)
            return fake_quant(inputs, self.low, ops.maximum(self.high, self.low + 1e-6), num_bits=8)

        def compute_output_shape(self, input_shape: Any) -> Any:
            return input_shape

    return {"Conv2D": FakeQuantConv2D, "DepthwiseConv2D": FakeQuantDepthwiseConv2D, "Dense": FakeQuantDense,
            "ActivationRange": ActivationRange}


def fake_quant_model(model: Any, settings: QatSettings) -> Any:
    """A trainable fake-quant clone of the functional Keras ``model``, carrying its weights."""
    from edgepipe.frameworks import import_keras

    keras = import_keras()
    classes = _layers(keras, settings)

    def clone(layer: Any) -> Any:
        kind: Any = classes.get(type(layer).__name__, type(layer))
        return kind.from_config(layer.get_config())

    def call(layer: Any, *args: Any, **kwargs: Any) -> Any:
        return classes["ActivationRange"](name=f"{layer.name}_range")(layer(*args, **kwargs))

    core = keras.models.clone_model(model, clone_function=clone, call_function=call)
    for original in model.layers:
        copy = core.get_layer(original.name)
        copy.set_weights(original.get_weights())
        if isinstance(copy, keras.layers.BatchNormalization):
            copy.trainable = False
    inputs = [keras.Input(t.shape[1:], dtype=t.dtype, name=t.name) for t in model.inputs]
    ranged = [classes["ActivationRange"](name=f"input_range_{i}")(t) for i, t in enumerate(inputs)]
    outputs = core(ranged[0] if len(ranged) == 1 else ranged)
    return keras.Model(inputs[0] if len(inputs) == 1 else inputs, outputs, name=f"{model.name}_qat")


def train_qat(model: Any, train: Dataset, settings: QatSettings) -> Any:
    """Fine-tune a fake-quant clone of ``model`` on ``train`` (integer labels, logits out); returns it."""
    from edgepipe.frameworks import import_keras, import_tensorflow

    keras = import_keras()
    import_tensorflow().config.experimental.enable_op_determinism()
    keras.utils.set_random_seed(settings.seed)
    qat = fake_quant_model(model, settings)
    qat.compile(optimizer=keras.optimizers.Adam(settings.learning_rate),
                loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = train.inputs[0] if len(train.inputs) == 1 else list(train.inputs)
    history = qat.fit(x, train.labels, batch_size=settings.batch_size, epochs=settings.epochs, shuffle=True,
                      verbose=0)
    log.info("QAT: %d epochs, loss %s", settings.epochs, [round(v, 4) for v in history.history["loss"]])
    return qat
