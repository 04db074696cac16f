"""Tiny models for the tests, generated deterministically (no download, a second or two each).

``python tests/models/make_models.py OUT`` writes them all; the tests call the
functions directly into a temporary folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SHAPE = (6, 6, 2)
CLASSES = 4


def tiny_keras(path: Path) -> Path:
    """A small Keras 3 CNN (conv → pool → dense), input (6, 6, 2), 4 logits, fixed seed weights."""
    from edgepipe.frameworks import import_keras

    keras = import_keras()
    keras.utils.set_random_seed(1)
    inputs = keras.Input(SHAPE, name="image")
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    outputs = keras.layers.Dense(CLASSES)(x)
    keras.Model(inputs, outputs).save(path)
    return path


def tiny_data(folder: Path, count: int = 40) -> tuple[Path, Path]:
    """Calibration and labelled evaluation ``.npz`` files for :func:`tiny_keras` (random, seeded)."""
    rng = np.random.default_rng(0)
    calib = folder / "calib.npz"
    np.savez(calib, image=rng.random((count, *SHAPE), dtype=np.float32))
    evaluation = folder / "eval.npz"
    np.savez(evaluation, image=rng.random((count, *SHAPE), dtype=np.float32),
             labels=rng.integers(0, CLASSES, count))
    return calib, evaluation


def tiny_onnx(path: Path) -> Path:
    """A float ONNX graph built with onnx.helper: Conv → Relu → GlobalAveragePool → Flatten → Gemm (NCHW)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(2)
    w = numpy_helper.from_array(rng.normal(0, 0.5, (8, 2, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(8, np.float32), "b")
    fc = numpy_helper.from_array(rng.normal(0, 0.5, (8, CLASSES)).astype(np.float32), "fc")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("MatMul", ["f", "fc"], ["y"], name="fc"),
    ]
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CLASSES])], [w, b, fc])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def tiny_onnx_data(folder: Path, count: int = 40) -> tuple[Path, Path]:
    """Calibration and labelled evaluation data for :func:`tiny_onnx` (NCHW)."""
    rng = np.random.default_rng(3)
    calib = folder / "onnx_calib.npz"
    np.savez(calib, x=rng.random((count, 2, 6, 6), dtype=np.float32))
    evaluation = folder / "onnx_eval.npz"
    np.savez(evaluation, x=rng.random((count, 2, 6, 6), dtype=np.float32), labels=rng.integers(0, CLASSES, count))
    return calib, evaluation


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tiny_keras(out / "tiny.keras")
    tiny_data(out)
    tiny_onnx(out / "tiny.onnx")
    tiny_onnx_data(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
