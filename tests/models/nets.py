"""Small Keras nets with the op mix of the ONNX "light" architectures, and their int8 TFLite conversion.

Used by the support tests and ``benchmarks/agreement.py``: the TFLite/Vela comparison needs int8 TFLite
models, and converting the 224x224 ONNX light models through onnx2tf is too slow for CI, so each net below
rebuilds its architecture's characteristic blocks at 32x32 (resnet: bottlenecks with ADD; squeezenet: fire
modules with CONCATENATION; shufflenet: depthwise + channel shuffle via RESHAPE/TRANSPOSE; inception:
multi-branch 1x1/3x3/5x5/pool + concat; densenet: dense concat blocks + average-pool transitions; vgg:
conv stacks + FULLY_CONNECTED; stress: ops and geometries the Ethos-U leaves on the CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

SIZE = 32


def _keras() -> Any:
    from edgepipe.frameworks import import_keras

    return import_keras()


def resnet_like(k: Any, x: Any) -> Any:
    x = k.layers.Conv2D(16, 7, strides=2, padding="same")(x)
    x = k.layers.ReLU()(k.layers.BatchNormalization()(x))
    x = k.layers.MaxPooling2D(3, strides=2, padding="same")(x)
    for _ in range(2):
        y = k.layers.Conv2D(8, 1, activation="relu")(x)
        y = k.layers.Conv2D(8, 3, padding="same", activation="relu")(y)
        y = k.layers.Conv2D(16, 1)(y)
        x = k.layers.ReLU()(k.layers.Add()([x, y]))
    return k.layers.Dense(10, activation="softmax")(k.layers.GlobalAveragePooling2D()(x))


def squeezenet_like(k: Any, x: Any) -> Any:
    x = k.layers.Conv2D(16, 3, strides=2, activation="relu")(x)
    x = k.layers.MaxPooling2D(3, strides=2)(x)
    for squeeze in (8, 8):
        s = k.layers.Conv2D(squeeze, 1, activation="relu")(x)
        x = k.layers.Concatenate()([k.layers.Conv2D(16, 1, activation="relu")(s),
                                    k.layers.Conv2D(16, 3, padding="same", activation="relu")(s)])
    x = k.layers.Conv2D(10, 1, activation="relu")(k.layers.Dropout(0.5)(x))
    return k.layers.Softmax()(k.layers.GlobalAveragePooling2D()(x))


def shufflenet_like(k: Any, x: Any) -> Any:
    x = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    for _ in range(2):
        y = k.layers.Conv2D(16, 1, activation="relu")(x)
        h, w = y.shape[1], y.shape[2]
        y = k.layers.Reshape((h, w, 4, 4))(y)
        y = k.layers.Permute((1, 2, 4, 3))(y)
        y = k.layers.Reshape((h, w, 16))(y)
        y = k.layers.DepthwiseConv2D(3, padding="same")(y)
        y = k.layers.Conv2D(16, 1)(y)
        x = k.layers.ReLU()(k.layers.Add()([x, y]))
    x = k.layers.AveragePooling2D(3, strides=2, padding="same")(x)
    return k.layers.Dense(10)(k.layers.Flatten()(x))


def inception_like(k: Any, x: Any) -> Any:
    x = k.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu")(x)
    branches = [k.layers.Conv2D(8, 1, activation="relu")(x),
                k.layers.Conv2D(8, 3, padding="same", activation="relu")(k.layers.Conv2D(4, 1)(x)),
                k.layers.Conv2D(8, 5, padding="same", activation="relu")(k.layers.Conv2D(4, 1)(x)),
                k.layers.Conv2D(8, 1)(k.layers.MaxPooling2D(3, strides=1, padding="same")(x))]
    x = k.layers.Concatenate()(branches)
    x = k.layers.AveragePooling2D(8, strides=1)(x)
    return k.layers.Dense(10, activation="softmax")(k.layers.Flatten()(x))


def densenet_like(k: Any, x: Any) -> Any:
    x = k.layers.Conv2D(16, 3, strides=2, padding="same")(x)
    for _ in range(2):
        for _ in range(2):
            y = k.layers.Conv2D(8, 3, padding="same")(k.layers.ReLU()(k.layers.BatchNormalization()(x)))
            x = k.layers.Concatenate()([x, y])
        x = k.layers.AveragePooling2D(2, strides=2)(k.layers.Conv2D(16, 1)(x))
    return k.layers.Dense(10)(k.layers.GlobalAveragePooling2D()(x))


def vgg_like(k: Any, x: Any) -> Any:
    for filters in (8, 16):
        x = k.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = k.layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = k.layers.MaxPooling2D(2)(x)
    x = k.layers.Dense(32, activation="relu")(k.layers.Flatten()(x))
    return k.layers.Dense(10, activation="softmax")(k.layers.Dropout(0.5)(x))


def stress(k: Any, x: Any) -> Any:
    """Geometries and ops the Ethos-U55 leaves on the CPU next to ones it runs."""
    a = k.layers.Conv2D(8, 5, strides=4, padding="same", activation="relu")(x)   # stride 4 with SAME: CPU
    b = k.layers.Conv2D(8, 4, strides=4, padding="valid", activation="relu")(x)  # stride 4 with VALID: NPU
    x = k.layers.Concatenate()([a, b])
    x = k.layers.AveragePooling2D(3, strides=1, padding="same")(x)
    y = k.layers.AveragePooling2D(9, strides=1, padding="same")(x)               # SAME kernel 9 > 8: CPU
    x = k.layers.Add()([x, y])
    x = k.layers.Activation("tanh")(x)
    x = k.layers.Dense(10)(k.layers.Flatten()(x))
    return k.layers.Lambda(lambda t: k.ops.log_softmax(t))(x)                    # LOG_SOFTMAX: CPU


NETS: dict[str, Callable[[Any, Any], Any]] = {
    "resnet_like": resnet_like, "squeezenet_like": squeezenet_like, "shufflenet_like": shufflenet_like,
    "inception_like": inception_like, "densenet_like": densenet_like, "vgg_like": vgg_like, "stress": stress,
}


def build_net(name: str, channels: int = 3) -> Any:
    """The Keras model ``name`` with input (32, 32, channels), fixed seed."""
    k = _keras()
    k.utils.set_random_seed(0)
    inputs = k.Input((SIZE, SIZE, channels), batch_size=1, name="image")
    return k.Model(inputs, NETS[name](k, inputs), name=name)


def to_int8_tflite(model: Any, path: Path, samples: int = 8) -> Path:
    """Full-integer TFLite (int8 in and out) of a Keras model, calibrated on seeded random data."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    shape = tuple(model.inputs[0].shape)
    rng = np.random.default_rng(0)

    def representative() -> Any:
        for _ in range(samples):
            yield [rng.random(shape, dtype=np.float32)]

    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = tf.int8
    converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


def probe(k: Any, x: Any) -> Any:
    """A small net whose TFLite ops exercise the reader and the TFLite-only constraints."""
    x = k.layers.Conv2D(8, 3, padding="same", activation="relu")(x)
    x = k.layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same")(x)
    x = k.layers.Conv2D(8, 5, strides=4, padding="same")(x)
    x = k.layers.AveragePooling2D(2)(x)
    return k.layers.Dense(4, activation="softmax")(k.layers.Flatten()(x))


NETS_FOR_TESTS: dict[str, Callable[[Any, Any], Any]] = {"probe": probe}


def to_float_tflite(model: Any, path: Path) -> Path:
    """Float TFLite of a Keras model (no quantization parameters anywhere)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    path.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    return path


def build_probe(channels: int = 3) -> Any:
    k = _keras()
    k.utils.set_random_seed(0)
    inputs = k.Input((SIZE, SIZE, channels), batch_size=1, name="image")
    return k.Model(inputs, probe(k, inputs), name="probe")
