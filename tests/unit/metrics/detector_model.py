"""A tiny YOLO-style detector, generated: one output ``[1, 4+C, A]`` that concatenates box coordinates (pixels)
and class probabilities (0..1), the way YOLOv8-style heads are exported. Per-tensor int8 gives that output one
scale of about 1.25 per step, which rounds every class probability to 0 or 1.25."""

from __future__ import annotations

from pathlib import Path

import numpy as np

CLASSES = 3
IMAGE = 32
STRIDE = 4
GRID = IMAGE // STRIDE
ANCHORS = GRID**2
#: Boxes are decoded in a 320-pixel frame: centres on a grid of 40 px cells, sizes 20 to 100 px.
CELL = 40.0


def make_detector(path: Path, seed: int = 0) -> Path:
    """Write the detector ONNX file (opset 17, fixed weights from ``seed``)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    feat_w = (rng.standard_normal((8, 3, 3, 3)) * 0.5).astype(np.float32)
    box_w = (rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
    cls_w = (rng.standard_normal((CLASSES, 8, 1, 1)) * 2.0).astype(np.float32)
    cls_b = np.full(CLASSES, -3.0, np.float32)
    inits = [numpy_helper.from_array(feat_w, "feat_w"), numpy_helper.from_array(box_w, "box_w"),
             numpy_helper.from_array(cls_w, "cls_w"), numpy_helper.from_array(cls_b, "cls_b"),
             numpy_helper.from_array(np.array([CELL, CELL, 2 * CELL, 2 * CELL], np.float32).reshape(1, 4, 1, 1),
                                     "box_scale"),
             numpy_helper.from_array(_box_offsets(), "box_offset"),
             numpy_helper.from_array(np.array([1, 4, ANCHORS], np.int64), "box_shape"),
             numpy_helper.from_array(np.array([1, CLASSES, ANCHORS], np.int64), "cls_shape")]
    nodes = [
        helper.make_node("Conv", ["images", "feat_w"], ["feat"], name="backbone", kernel_shape=[3, 3],
                         strides=[STRIDE, STRIDE], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["feat"], ["feat_relu"], name="backbone_relu"),
        helper.make_node("Conv", ["feat_relu", "box_w"], ["box_logits"], name="box_head"),
        helper.make_node("Sigmoid", ["box_logits"], ["box_unit"], name="box_sigmoid"),
        helper.make_node("Mul", ["box_unit", "box_scale"], ["box_scaled"], name="box_decode"),
        helper.make_node("Add", ["box_scaled", "box_offset"], ["box_pixels"], name="box_place"),
        helper.make_node("Reshape", ["box_pixels", "box_shape"], ["boxes"], name="box_flatten"),
        helper.make_node("Conv", ["feat_relu", "cls_w", "cls_b"], ["cls_logits"], name="cls_head"),
        helper.make_node("Sigmoid", ["cls_logits"], ["cls_prob"], name="cls_sigmoid"),
        helper.make_node("Reshape", ["cls_prob", "cls_shape"], ["scores"], name="cls_flatten"),
        helper.make_node("Concat", ["boxes", "scores"], ["output0"], name="head_concat", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_yolo", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, IMAGE, IMAGE])],
        [helper.make_tensor_value_info("output0", TensorProto.FLOAT, [1, 4 + CLASSES, ANCHORS])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def _box_offsets() -> np.ndarray:
    """Per anchor: the cell's corner in the 320-px frame for x and y, and the smallest size for w and h."""
    rows, cols = np.mgrid[0:GRID, 0:GRID].astype(np.float32)
    return np.stack([cols * CELL, rows * CELL, np.full_like(rows, CELL / 2), np.full_like(rows, CELL / 2)])[None]


def detector_images(count: int, seed: int) -> np.ndarray:
    """``count`` images ``[N, 3, 32, 32]`` in [0, 1]: smooth blobs, so that some anchors score high."""
    rng = np.random.default_rng(seed)
    grid = np.mgrid[0:IMAGE, 0:IMAGE].astype(np.float32)
    images = np.zeros((count, 3, IMAGE, IMAGE), np.float32)
    for image in images:
        for _ in range(3):
            centre = rng.uniform(4, IMAGE - 4, 2)
            blob = np.exp(-((grid - centre[:, None, None]) ** 2).sum(0) / (2 * rng.uniform(2, 5) ** 2))
            image += blob[None] * rng.uniform(0.3, 1.0, (3, 1, 1))
    return np.clip(images + rng.uniform(0, 0.1, images.shape), 0, 1).astype(np.float32)


def write_detector_data(folder: Path) -> tuple[Path, Path]:
    """Calibration (64 images) and evaluation (48 other images) ``.npz`` files, no labels."""
    calib, evaluation = folder / "calibration.npz", folder / "evaluation.npz"
    np.savez(calib, images=detector_images(64, seed=1))
    np.savez(evaluation, images=detector_images(48, seed=2))
    return calib, evaluation
