"""Train the second reference model ``digits_nobn.keras``: a CNN without batch norm that plain PTQ breaks.

Same real data as ``digits_cnn`` (calib/digits/, sklearn's UCI digits), trained
deterministically on the train split. The net has no normalisation layers, so
nothing ties the scale of one channel to another: a ReLU net computes the same
function when an output channel of one conv is multiplied by ``s`` and the
matching input weights of the next conv are divided by ``s`` (positive
homogeneity). Training leaves these scales wherever the optimiser happened to
put them; here they are set on purpose, after training, so the pattern is
reproducible: ``OUTLIER_CHANNELS`` of the first conv are scaled by
``OUTLIER_GAIN``. The float outputs do not change (checked below, to 1e-4), but
those few channels now dominate the activation range of their tensor — the
outlier-channel pattern of Nagel et al., "Data-Free Quantization" (ICCV 2019) —
and per-tensor int8 PTQ loses several points of top-1.

Run: ``python models/digits_nobn/train.py``
"""

from __future__ import annotations

import hashlib
import os
import zipfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "calib" / "digits"
SEED = 0
OUTLIER_CHANNELS = (3, 11)
OUTLIER_GAIN = 100.0


def build_model() -> keras.Model:
    """Input (8, 8, 1) float32 in [0, 1]; Conv(16)-ReLU, Conv(32, /2)-ReLU, Conv(32)-ReLU, GAP, Dense(10)."""
    inputs = keras.Input((8, 8, 1), name="input")
    x = keras.layers.Conv2D(16, 3, padding="same", activation="relu", name="conv1")(inputs)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", activation="relu", name="conv2")(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu", name="conv3")(x)
    x = keras.layers.GlobalAveragePooling2D(name="pool")(x)
    outputs = keras.layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name="digits_nobn")


def unbalance(model: keras.Model, channels: tuple[int, ...], gain: float) -> None:
    """Scale ``channels`` of conv1's output by ``gain`` and conv2's matching inputs by ``1/gain`` (same function)."""
    kernel1, bias1 = model.get_layer("conv1").get_weights()
    kernel2, bias2 = model.get_layer("conv2").get_weights()
    for c in channels:
        kernel1[..., c] *= gain
        bias1[c] *= gain
        kernel2[:, :, c, :] /= gain
    model.get_layer("conv1").set_weights([kernel1, bias1])
    model.get_layer("conv2").set_weights([kernel2, bias2])


def load(split: str) -> tuple[np.ndarray, np.ndarray]:
    with np.load(DATA / f"{split}.npz", allow_pickle=False) as npz:
        return npz["input"], npz["labels"]


def main() -> None:
    keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    x_train, y_train = load("train")
    x_eval, y_eval = load("evaluation")
    model = build_model()
    model.compile(optimizer=keras.optimizers.Adam(3e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    model.fit(x_train, y_train, batch_size=32, epochs=40, shuffle=True, verbose=0)
    before = model.predict(x_eval, verbose=0)
    unbalance(model, OUTLIER_CHANNELS, OUTLIER_GAIN)
    after = model.predict(x_eval, verbose=0)
    np.testing.assert_allclose(after, before, atol=1e-4, rtol=1e-4)
    _, accuracy = model.evaluate(x_eval, y_eval, verbose=0)
    path = HERE / "digits_nobn.keras"
    model.save(path)
    with zipfile.ZipFile(path) as archive:  # the .keras zip stamps the save time; its weights are reproducible
        digest = hashlib.sha256(archive.read("model.weights.h5")).hexdigest()
    print(f"evaluation top-1 {accuracy:.4f}; params {model.count_params()}; weights sha256 {digest}")


if __name__ == "__main__":
    main()
