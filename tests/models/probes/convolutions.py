"""Probe graphs of convolutions and pooling: padding, strides, 1-D and 3-D convolutions, their biases and
activations, built with onnx.helper and seeded weights."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.probes.onnx_files import save_opset, save_opset14


def conv_net_onnx(path: Path, tail: list[str], size: int = 16, opset: int = 17) -> Path:
    """Conv(3->8) -> each op of ``tail`` in turn -> Conv(8->8) -> GlobalAveragePool, float, 1x3xSIZExSIZE input."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.normal(0, 0.3, (8, 8, 1, 1)).astype(np.float32), "w2")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["t0"], name="conv1", pads=[1, 1, 1, 1])]
    for i, op in enumerate(tail):
        nodes.append(helper.make_node(op, [f"t{i}"], [f"t{i + 1}"], name=f"{op.lower()}{i}"))
    nodes += [helper.make_node("Conv", [f"t{len(tail)}", "w2"], ["c2"], name="conv2"),
              helper.make_node("GlobalAveragePool", ["c2"], ["y"], name="pool")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def spp_onnx(path: Path, pools: list[tuple[int, int]], size: int = 32) -> Path:
    """YOLO's spatial pyramid pooling: Conv(3->8), then one MaxPool per (kernel, stride) of ``pools`` side by side
    ('same' padding; strided ones resized back by a Conv of the same stride would change the shape, so each pool
    feeds its own GlobalAveragePool), concatenated."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1")]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1])]
    for i, (kernel, stride) in enumerate(pools):
        nodes += [helper.make_node("MaxPool", ["c1"], [f"p{i}"], name=f"maxpool{kernel}s{stride}",
                                   kernel_shape=[kernel, kernel], pads=[kernel // 2] * 4, strides=[stride, stride]),
                  helper.make_node("GlobalAveragePool", [f"p{i}"], [f"g{i}"], name=f"gap{i}")]
    nodes.append(helper.make_node("Concat", [f"g{i}" for i in range(len(pools))], ["y"], name="concat", axis=1))
    graph = helper.make_graph(nodes, "spp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8 * len(pools), 1, 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def channel_pads_onnx(path: Path, pads: list[tuple[int, int, int, int]], size: int = 16) -> Path:
    """One branch per (channels, before, after, spatial) of ``pads``: Conv(3->channels), a Pad adding ``before``
    and ``after`` channels (and ``spatial`` pixels on every side), and a residual block after it as BlazeFace
    has: Add(the Pad, a Conv of the padded channels) then Relu, which the compiler fuses into a "ConvAddRelu"
    layer whichever input of the Add the Conv is."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, outputs = [], [], []
    for i, (channels, before, after, spatial) in enumerate(pads):
        padded, side = channels + before + after, size + 2 * spatial
        inits += [numpy_helper.from_array(rng.normal(0, 0.3, (channels, 3, 3, 3)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(np.array([0, before, spatial, spatial, 0, after, spatial, spatial],
                                                   np.int64), f"pads{i}"),
                  numpy_helper.from_array(rng.normal(0, 0.3, (padded, padded, 1, 1)).astype(np.float32), f"v{i}")]
        name = f"pad_c{channels}_b{before}_a{after}_s{spatial}"
        nodes += [helper.make_node("Conv", ["x", f"w{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]),
                  helper.make_node("Pad", [f"c{i}", f"pads{i}"], [f"p{i}"], name=name),
                  helper.make_node("Conv", [f"p{i}", f"v{i}"], [f"d{i}"], name=f"residual{i}"),
                  helper.make_node("Add", [f"p{i}", f"d{i}"], [f"a{i}"], name=f"add{i}"),
                  helper.make_node("Relu", [f"a{i}"], [f"y{i}"], name=f"relu{i}")]
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, padded, side, side]))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])]
    graph = helper.make_graph(nodes, "channel_pads", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def focus_onnx(path: Path, size: int = 32) -> Path:
    """YOLOv5's "Focus" input: four pairs of step-2 Slices (H, then W) of the image, concatenated and convolved;
    beside it a step-2 Slice of a Conv's output, convolved again."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def strided(name: str, source: str, axis: int, start: int) -> None:
        names = [f"{name}_{k}" for k in ("starts", "ends", "axes", "steps")]
        inits.extend(numpy_helper.from_array(np.array([v], np.int64), n)
                     for n, v in zip(names, (start, 2 ** 62, axis, 2), strict=True))
        nodes.append(helper.make_node("Slice", [source, *names], [name], name=name))

    for i, (row, column) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        strided(f"rows{i}", "x", 2, row)
        strided(f"cols{i}", f"rows{i}", 3, column)
    inits += [numpy_helper.from_array(rng.normal(0, 0.3, (8, 12, 3, 3)).astype(np.float32), "w_focus"),
              numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w_stem"),
              numpy_helper.from_array(rng.normal(0, 0.3, (8, 8, 3, 3)).astype(np.float32), "w_after")]
    nodes += [helper.make_node("Concat", [f"cols{i}" for i in range(4)], ["focus"], name="focus", axis=1),
              helper.make_node("Conv", ["focus", "w_focus"], ["y"], name="focus_conv", pads=[1, 1, 1, 1]),
              helper.make_node("Conv", ["x", "w_stem"], ["stem"], name="stem_conv", pads=[1, 1, 1, 1])]
    strided("stem_rows", "stem", 2, 0)
    nodes.append(helper.make_node("Conv", ["stem_rows", "w_after"], ["z"], name="after_conv", pads=[1, 1, 1, 1]))
    half = size // 2
    image = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])
    graph = helper.make_graph(nodes, "focus", [image],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, half, half]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 8, half, size])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def hard_swish_1d_onnx(path: Path, branches: list[tuple[int, str]]) -> Path:
    """PP-OCRv6's 1-D HardSwish, one branch per ``(W, middle)``: an input [1, 16, 1, W], a 1x1 Conv, a Squeeze of
    axis 2 to [1, 16, W], then ``middle`` ("bn_hswish": a BatchNormalization with real statistics, then
    x * HardSigmoid(x); "hsig": a lone HardSigmoid; "relu": a Relu), an Unsqueeze back to [1, 16, 1, W] and a
    1x1 Conv to the branch's output."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    channels = 16
    nodes, inits, inputs, outputs = [], [numpy_helper.from_array(np.array([2], np.int64), "axis")], [], []
    for i, (width, middle) in enumerate(branches):
        inits += [numpy_helper.from_array(rng.normal(0, .3, (channels, channels, 1, 1)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(rng.normal(0, .3, (channels, channels, 1, 1)).astype(np.float32), f"v{i}")]
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, channels, 1, width]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, channels, 1, width]))
        nodes += [helper.make_node("Conv", [f"x{i}", f"w{i}"], [f"c{i}"], name=f"conv{i}"),
                  helper.make_node("Squeeze", [f"c{i}", "axis"], [f"s{i}"], name=f"squeeze{i}")]
        if middle == "bn_hswish":
            stats = {f"{k}{i}": rng.uniform(.5, 2, channels) if k in ("scale", "var") else rng.normal(0, .3, channels)
                     for k in ("scale", "bias", "mean", "var")}
            inits += [numpy_helper.from_array(v.astype(np.float32), k) for k, v in stats.items()]
            nodes += [helper.make_node("BatchNormalization", [f"s{i}", *stats], [f"n{i}"], name=f"bn{i}"),
                      helper.make_node("HardSigmoid", [f"n{i}"], [f"g{i}"], name=f"hsig{i}", alpha=1 / 6, beta=.5),
                      helper.make_node("Mul", [f"n{i}", f"g{i}"], [f"m{i}"], name=f"hswish{i}")]
        else:
            op = {"hsig": "HardSigmoid", "relu": "Relu"}[middle]
            nodes.append(helper.make_node(op, [f"s{i}"], [f"m{i}"], name=f"{middle}{i}"))
        nodes += [helper.make_node("Unsqueeze", [f"m{i}", "axis"], [f"u{i}"], name=f"unsqueeze{i}"),
                  helper.make_node("Conv", [f"u{i}", f"v{i}"], [f"y{i}"], name=f"out{i}")]
    graph = helper.make_graph(nodes, "hard_swish_1d", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def transposed_gelu_onnx(path: Path, stride: int) -> Path:
    """[1, 16, 60] -> Relu -> 1-D ConvTranspose (kernel = stride) -> GELU written out (Div by sqrt 2, Erf, Add 1, Mul,
    Mul 0.5) -> Conv: OpenSpindleNet's upsampling neck in small."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, .1, (16, 16, stride)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.normal(0, .1, (8, 16, 3)).astype(np.float32), "w2")]
    inits += [numpy_helper.from_array(np.float32(v), n) for v, n in ((1.4142135, "root2"), (1, "one"), (0.5, "half"))]
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("ConvTranspose", ["r", "w"], ["c"], kernel_shape=[stride], strides=[stride], name="up"),
             helper.make_node("Div", ["c", "root2"], ["d"], name="gelu_div"),
             helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="gelu_add"),
             helper.make_node("Mul", ["c", "a"], ["m"], name="gelu_mul"),
             helper.make_node("Mul", ["m", "half"], ["g"], name="gelu_half"),
             helper.make_node("Conv", ["g", "w2"], ["y"], pads=[1, 1], name="conv")]
    graph = helper.make_graph(nodes, "transposed_gelu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 60])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 60 * stride])], inits)
    return save_opset14(graph, path)


def dilated_conv1d_onnx(path: Path, channels: int, length: int, dilation: int, padded: bool = False) -> Path:
    """A 1-D Conv (kernel 3, ``channels`` in, 64 out) with ``dilation`` over ``[1, channels, length]`` and a Relu;
    unpadded like OpenSpindleNet's circularly padded convolutions, or ``padded`` by its own pads to keep the
    length."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(64, channels, 3)).astype(np.float32) * 0.1
    pads = [dilation, dilation] if padded else [0, 0]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", dilations=[dilation], kernel_shape=[3], pads=pads),
         helper.make_node("Relu", ["c"], ["y"], name="relu")], "dilated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, length])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(weights, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def spectrogram_channel_onnx(path: Path, rows: int, columns: int, axis: int = 1) -> Path:
    """A [1, rows, columns] graph input given an axis of size 1 at ``axis`` (Unsqueeze) and read by a 5 x 5 Conv of 8
    filters (a 1 x 5 or 5 x 1 Conv of ``rows`` channels when ``axis`` is 2 or 3): brainmaze's seizure network turns
    its [1, 100, 59] spectrogram into a one-channel image this way."""
    from onnx import TensorProto, helper, numpy_helper

    shape = [1, rows, columns]
    kernel = {1: [5, 5], 2: [1, 5], 3: [5, 1]}[axis]
    weights = np.random.default_rng(0).normal(size=(8, 1 if axis == 1 else rows, *kernel)).astype(np.float32) * 0.3
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["u"], name="unsqueeze"),
         helper.make_node("Conv", ["u", "w"], ["y"], name="conv")], "spectrogram_channel",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array([axis], np.int64), "axes")])
    return save_opset14(graph, path)


def conv1d_input_onnx(path: Path, length: int) -> Path:
    """A Keras Conv1D's input as tf2onnx writes it (ecg-quality's Omni-Scale CNN): a [1, length, 1] graph input
    unsqueezed to [1, 1, length, 1], reshaped to [1, 1, 1, length] and read by a 1 x 3 Conv of 4 filters."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(4, 1, 1, 3)).astype(np.float32) * 0.3
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["u"], name="unsqueeze"),
         helper.make_node("Reshape", ["u", "shape"], ["r"], name="reshape"),
         helper.make_node("Conv", ["r", "w"], ["y"], pads=[0, 1, 0, 1], name="conv")], "conv1d_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, length, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array([-3], np.int64), "axes"),
         numpy_helper.from_array(np.array([1, 1, 1, length], np.int64), "shape")])
    return save_opset14(graph, path)


def conv_then_onnx(path: Path, shape: list[int], op: str, constants: dict[str, np.ndarray] | None = None,
                   last: str = "Relu", **attrs: object) -> Path:
    """A Conv over ``shape`` (3-D or 4-D, same channels), then ``op`` reading its output and ``constants`` (in that
    order), then ``last`` (a Relu): one op of a real network, probed inside a graph rather than at its ends."""
    from onnx import TensorProto, helper, numpy_helper

    constants = constants or {}
    kernel = [3] * (len(shape) - 2)
    weights = np.random.default_rng(0).normal(size=(shape[1], shape[1], *kernel)).astype(np.float32) * 0.2
    operands = ["a", "a"] if op == "Einsum" else ["a", *constants]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1] * 2 * len(kernel), name="conv"),
         helper.make_node(op, operands, ["b"], name="op", **attrs),
         helper.make_node(last, ["b"], ["y"], name="last")], f"conv_then_{op}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w"), *(numpy_helper.from_array(v, k) for k, v in constants.items())])
    return save_opset(graph, path, 17)


def channel_gate_onnx(path: Path) -> Path:
    """A squeeze-excitation gate of GTCRN's kind: a 1-D Conv of [1, 8, 16] to [1, 8, 1], Sigmoid, Unsqueeze to
    [1, 8, 1, 1], multiplied into a [1, 8, 4, 4] feature map."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(8, 8, 16)).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
         helper.make_node("Sigmoid", ["c"], ["g"], name="gate"),
         helper.make_node("Unsqueeze", ["g", "axes"], ["g4"], name="unsqueeze"),
         helper.make_node("Mul", ["features", "g4"], ["y"], name="mul")], "channel_gate",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array([3], np.int64), "axes")])
    return save_opset14(graph, path)


def conv3d_net_onnx(path: Path, pool: str, activation: str) -> Path:
    """PhysNet's 3-D blocks, float, [1, 3, 8, 8, 8] in: Conv3D(3->8) -> Relu -> ``pool`` [1, 2, 2] -> Conv3D(8->8) ->
    ``activation`` -> Conv3D(8->8) -> ReduceMean over D, H, W -> Sqrt (a reduce_std, float between the two
    reductions)."""
    from onnx import TensorProto, helper, numpy_helper, save_model

    rng = np.random.default_rng(0)
    weights = {"w1": (8, 3, 3, 3, 3), "w2": (8, 8, 3, 3, 3), "w3": (8, 8, 3, 3, 3)}
    inits = [numpy_helper.from_array(rng.normal(0, 0.2, shape).astype(np.float32), name)
             for name, shape in weights.items()]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1] * 6, name="conv1"),
         helper.make_node("Relu", ["c1"], ["r1"], name="relu"),
         helper.make_node(pool, ["r1"], ["p"], kernel_shape=[1, 2, 2], strides=[1, 2, 2], name="pool"),
         helper.make_node("Conv", ["p", "w2"], ["c2"], pads=[1] * 6, name="conv2"),
         helper.make_node(activation, ["c2"], ["a"], name="activation"),
         helper.make_node("Conv", ["a", "w3"], ["c3"], pads=[1] * 6, name="conv3"),
         helper.make_node("ReduceMean", ["c3"], ["m"], axes=[2, 3, 4], keepdims=1, name="mean"),
         helper.make_node("Abs", ["m"], ["m_abs"], name="abs"),
         helper.make_node("Sqrt", ["m_abs"], ["y"], name="sqrt")], "conv3d_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1, 1])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save_model(model, str(path))
    return path


def auto_padded_conv_onnx(path: Path, rank: int, auto_pad: str) -> Path:
    """x [1, 8, 16 (, 16)] -> 3-wide Conv (1-D for rank 3, 2-D for rank 4) padded by ``auto_pad`` ("NOTSET": explicit
    pads of 1) -> Relu: DeepLC's CNN writes its 1-D convolutions with auto_pad SAME_UPPER."""
    from onnx import TensorProto, helper, numpy_helper

    kernel = [3] * (rank - 2)
    shape = [1, 8] + [16] * (rank - 2)
    padding = {"auto_pad": auto_pad} if auto_pad != "NOTSET" else {"pads": [1] * 2 * (rank - 2)}
    weights = np.random.default_rng(0).normal(0, .3, (8, 8, *kernel)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"], name="conv", **padding),
                               helper.make_node("Relu", ["c"], ["y"], name="relu")], "auto_padded",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
                              [numpy_helper.from_array(weights, "w")])
    return save_opset(graph, path, 13)


def feature_map_bias_onnx(path: Path, form: str) -> Path:
    """x (1, 16) -> MatMul -> h; Relu(h) times a 16 x 16 weight, plus Sigmoid(h): NeuralFoil's un-mirroring (held
    out), a Gemm whose bias C is another layer's output. ``form``: ``gemm`` (a Gemm with C = Sigmoid(h)),
    ``matmul_add`` (MatMul then Add, which ONNX Runtime's pre-processing fuses into that Gemm) or ``constant_bias``
    (a Gemm with a constant bias, then the Add)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(rng.normal(0, 0.3, shape).astype(np.float32), name)
                 for name, shape in (("w0", (16, 16)), ("w", (16, 16)), ("b", (16,)))]
    nodes = [helper.make_node("MatMul", ["x", "w0"], ["h"], name="first"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["h"], ["s"], name="sigmoid")]
    if form == "gemm":
        nodes.append(helper.make_node("Gemm", ["r", "w", "s"], ["g"], name="gemm"))
    elif form == "matmul_add":
        nodes += [helper.make_node("MatMul", ["r", "w"], ["m"], name="matmul"),
                  helper.make_node("Add", ["m", "s"], ["g"], name="add")]
    else:
        nodes += [helper.make_node("Gemm", ["r", "w", "b"], ["m"], name="gemm"),
                  helper.make_node("Add", ["m", "s"], ["g"], name="add")]
    nodes.append(helper.make_node("Tanh", ["g"], ["y"], name="tanh"))
    graph = helper.make_graph(nodes, "feature_map_bias",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def one_row_conv_onnx(path: Path, length: int, channels: int, before: str | None = None) -> Path:
    """tf2onnx's Keras Conv1D over a graph input: x [1, length, channels] (through ``before``, an element-wise op, if
    given) -> Unsqueeze to [1, 1, length, channels] -> Transpose to NCHW [1, channels, 1, length] -> 1 x 5 Conv of 8
    -> Relu (humanactivity's accelerometer window, cispliceai's one-hot DNA)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(rng.normal(0, 0.3, (8, channels, 1, 5)).astype(np.float32), "w"),
                 numpy_helper.from_array(np.array([1], np.int64), "axis")]
    nodes = [helper.make_node(before, ["x"], ["b"], name="before")] if before else []
    nodes += [helper.make_node("Unsqueeze", ["b" if before else "x", "axis"], ["u"], name="unsqueeze"),
              helper.make_node("Transpose", ["u"], ["t"], perm=[0, 3, 1, 2], name="to_nchw"),
              helper.make_node("Conv", ["t", "w"], ["c"], name="conv"),
              helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "one_row_conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, length, channels])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(onnx.shape_inference.infer_shapes(model), path)
    return path


def squeezed_conv_onnx(path: Path, channels: int, width: int, reader: str | None) -> Path:
    """x [1, 4, 1, width + 2] -> Relu -> 1 x 3 Conv of ``channels`` -> Squeeze of the unit axis to [1, channels,
    width] -> ``reader`` (``Add`` of a per-channel bias then a Relu, ``Relu``, or nothing) -> Flatten -> MatMul of 16:
    a Keras Conv1D's output as tf2onnx writes it (humanactivity's second Conv1D, 6 channels x 1)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(rng.normal(0, 0.3, (channels, 4, 1, 3)).astype(np.float32), "w"),
                 numpy_helper.from_array(rng.normal(0, 0.3, (channels, 1)).astype(np.float32), "bias"),
                 numpy_helper.from_array(np.array([2], np.int64), "axis"),
                 numpy_helper.from_array(rng.normal(0, 0.3, (channels * width, 16)).astype(np.float32), "dense")]
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
             helper.make_node("Conv", ["r", "w"], ["c"], name="conv"),
             helper.make_node("Squeeze", ["c", "axis"], ["s"], name="squeeze")]
    if reader == "Add":
        nodes += [helper.make_node("Add", ["s", "bias"], ["a"], name="bias_add"),
                  helper.make_node("Relu", ["a"], ["z"], name="relu1")]
    elif reader == "Relu":
        nodes.append(helper.make_node("Relu", ["s"], ["z"], name="relu1"))
    nodes += [helper.make_node("Flatten", ["z" if reader else "s"], ["f"], name="flatten"),
              helper.make_node("MatMul", ["f", "dense"], ["y"], name="head")]
    graph = helper.make_graph(nodes, "squeezed_conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 1, width + 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(onnx.shape_inference.infer_shapes(model), path)
    return path
