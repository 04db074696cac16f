"""Tiny ONNX models shaped like real exports, generated deterministically with onnx.helper.

- :func:`paddle_like`: what paddle2onnx writes — opset 11, a ``-1`` batch and two spatial
  dims sharing the name ``?``; Conv → HardSigmoid gate → Conv → GlobalAveragePool → MatMul
  + Add with a ``(1, N)`` bias (fused to a Gemm whose 2-D bias crashed ORT's per-channel
  quantizer) → Softmax over 6 classes, and a Sigmoid map output (a regression output).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def paddle_like(path: Path, opset: int = 11) -> Path:
    """The model above; input ``x [-1, 3, ?, ?]``, outputs ``probs [-1, 6]`` and ``map [-1, 1, ?, ?]``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)

    def init(name: str, shape: tuple[int, ...], scale: float) -> object:
        return numpy_helper.from_array((rng.normal(0, scale, shape)).astype(np.float32), name)

    # per-channel scales that differ a lot: per-tensor weights lose the small channels
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32) * np.logspace(-2, 0, 8, dtype=np.float32)[:, None, None,
                                                                                                          None]
    inits = [numpy_helper.from_array(w1, "w1"), init("b1", (8,), 0.1), init("w2", (8, 8, 3, 3), 0.2),
             init("b2", (8,), 0.1), init("fc", (8, 6), 0.5), init("fcb", (1, 6), 0.1), init("wm", (1, 8, 1, 1), 0.3)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("HardSigmoid", ["c1"], ["g1"], name="gate"),
        helper.make_node("Mul", ["c1", "g1"], ["h1"], name="hswish"),
        helper.make_node("Conv", ["h1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "wm"], ["m"], name="conv_map"),
        helper.make_node("Sigmoid", ["m"], ["map"], name="map_sigmoid"),
        helper.make_node("GlobalAveragePool", ["r2"], ["pooled"], name="pool"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("MatMul", ["flat", "fc"], ["mm"], name="fc_matmul"),
        helper.make_node("Add", ["mm", "fcb"], ["logits"], name="fc_add"),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1, name="softmax"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 3, "?", "?"])
    outputs = [helper.make_tensor_value_info("probs", TensorProto.FLOAT, [-1, 6]),
               helper.make_tensor_value_info("map", TensorProto.FLOAT, [-1, 1, "?", "?"])]
    graph = helper.make_graph(nodes, path.stem, [x], outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 6
    onnx.save(model, str(path))
    return path


def image_batches(count: int, height: int, width: int, seed: int = 0) -> np.ndarray:
    """``(count, 3, height, width)`` smooth random images in [-1, 1] (blurred noise, so channels correlate)."""
    rng = np.random.default_rng(seed)
    coarse = rng.uniform(-1, 1, (count, 3, height // 4 + 1, width // 4 + 1)).astype(np.float32)
    return np.repeat(np.repeat(coarse, 4, axis=2), 4, axis=3)[:, :, :height, :width].copy()


def shared_bias(path: Path, shape: list[int]) -> Path:
    """Three 3x3 Convs of 3 channels that share one bias initializer ``b``, and the first Conv's output is ``b0``.

    tf2onnx writes such graphs (equal constants merged; its names end in digits); ORT's quantizer names its copy
    of a shared bias ``b`` + ``0`` (its largest numeric suffix + 1) without looking at activation names.
    """
    import onnx
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array((rng.standard_normal((3, 3, 3, 3)) * 0.3).astype(np.float32), f"w{i}")
             for i in range(3)] + [numpy_helper.from_array(np.array([0.1, -0.2, 0.3], np.float32), "b")]
    nodes = [helper.make_node("Conv", ["x", "w0", "b"], ["b0"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["b0"], ["r"]),
             helper.make_node("Conv", ["r", "w1", "b"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["r", "w2", "b"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Concat", ["c1", "c2", "b0"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "shared_bias",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 9, *shape[2:]])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def decomposed_ops(path: Path, opset: int = 13) -> Path:
    """What PP-LCNet-style Paddle exports write: Conv -> Mul by a scalar -> Add of a (1, C, 1, 1) constant
    (a learnable affine block), then HardSwish written as ``x * Clip(x + 3, 0, 6) / 6``, then a Conv whose
    output is shifted by a ``(C,)`` constant (broadcasts over the last axis, not the channels: not foldable).
    Input ``x [1, 3, 16, 16]``, output ``y [1, 4, 16, 16]``.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)

    def const(name: str, value: np.ndarray) -> object:
        return numpy_helper.from_array(np.asarray(value, np.float32), name)

    inits = [const("w1", rng.normal(0, 0.4, (8, 3, 3, 3))), const("b1", rng.normal(0, 0.1, (8,))),
             const("scale", [1.9]), const("shift", rng.normal(0, 0.5, (1, 8, 1, 1))), const("three", [3.0]),
             const("zero", 0.0), const("six", 6.0), const("six_div", 6.0),
             const("w2", rng.normal(0, 0.3, (4, 8, 1, 1))), const("row", rng.normal(0, 0.2, (16,)))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Mul", ["c1", "scale"], ["s1"], name="affine_scale"),
        helper.make_node("Add", ["s1", "shift"], ["a1"], name="affine_shift"),
        helper.make_node("Add", ["a1", "three"], ["p3"], name="hs_add"),
        helper.make_node("Clip", ["p3", "zero", "six"], ["relu6"], name="hs_clip"),
        helper.make_node("Mul", ["a1", "relu6"], ["prod"], name="hs_mul"),
        helper.make_node("Div", ["prod", "six_div"], ["h1"], name="hs_div"),
        helper.make_node("Conv", ["h1", "w2"], ["c2"], name="conv2"),
        helper.make_node("Add", ["c2", "row"], ["y"], name="row_shift"),
    ]
    graph = helper.make_graph(nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


#: Output-channel scales of the first convolution: four decades apart.
SCALES = np.logspace(-2, 2, 8, dtype=np.float32)


def conv_relu_conv(path: Path, bias: float | None = None) -> Path:
    """``x [1, 3, 16, 16]`` -> Conv(8) -> ReLU -> Conv(4) -> ``y``; the convolutions leave ``group`` implicit
    (as tf2onnx writes them). The first convolution's output channels span four decades (:data:`SCALES`, no batch
    normalisation): what per-tensor int8 rounds away, and cross-layer equalization or bias correction repair.
    ``bias``: every bias this constant instead of random (large enough that NNCF's bias correction applies: it skips
    a shift larger than twice the bias)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32) * SCALES[:, None, None, None]
    b1 = (rng.normal(0, 0.1, 8) * SCALES).astype(np.float32)
    w2 = (rng.normal(0, 0.3, (4, 8, 3, 3)) / SCALES[None, :, None, None]).astype(np.float32)
    b2 = rng.normal(0, 0.1, 4).astype(np.float32)
    if bias is not None:
        b1, b2 = np.full(8, bias, np.float32), np.full(4, bias, np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], pads=[1, 1, 1, 1], name="conv2")]
    graph = helper.make_graph(
        nodes, "conv_relu_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path
