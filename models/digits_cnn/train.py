"""Train the bundled reference model ``digits_cnn.keras`` (deterministic, CPU, ~20 s).

A small Keras 3 CNN for the 8x8 digits in calib/digits/ (see make_data.py):
Conv(16)-BN-ReLU, Conv(32, stride 2)-BN-ReLU, Conv(32)-ReLU, global average pool,
Dense(10) logits. Trained on the train split only; the float accuracy on the
evaluation split is printed and recorded in MODEL.md.

Run: ``python models/digits_cnn/train.py``
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_DETERMINISTIC_OPS", "1")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "calib" / "digits"
SEED = 0


def build_model() -> keras.Model:
    """The architecture; input (8, 8, 1) float32 in [0, 1], output 10 logits."""
    inputs = keras.Input((8, 8, 1), name="input")
    x = keras.layers.Conv2D(16, 3, padding="same", use_bias=False)(inputs)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.Conv2D(32, 3, strides=2, padding="same", use_bias=False)(x)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.ReLU()(x)
    x = keras.layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(10, name="logits")(x)
    return keras.Model(inputs, outputs, name="digits_cnn")


def load(split: str) -> tuple[np.ndarray, np.ndarray]:
    with np.load(DATA / f"{split}.npz", allow_pickle=False) as npz:
        return npz["input"], npz["labels"]


def main() -> None:
    keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    x_train, y_train = load("train")
    x_eval, y_eval = load("evaluation")
    model = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.fit(x_train, y_train, batch_size=32, epochs=40, shuffle=True, verbose=0)
    _, accuracy = model.evaluate(x_eval, y_eval, verbose=0)
    path = HERE / "digits_cnn.keras"
    model.save(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    print(f"evaluation top-1 {accuracy:.4f}; params {model.count_params()}; {path.name} sha256 {digest}")


if __name__ == "__main__":
    main()
