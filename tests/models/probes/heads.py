"""Probe graphs of dense heads and the reshapes around them: Gemm and MatMul heads of many widths, flattened
planes, stacked rows, ensembles."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.probes.onnx_files import save_opset, save_opset14

#: An output named with a JSON of class labels, as openWakeWord's timer model names its output (139 characters).
LABELS_NAME = ('{"1": "1_minute_timer", "2": "5_minute_timer", "3": "10_minute_timer", "4": "20_minute_timer", '
               '"5": "30_minute_timer", "6": "1_hour_timer"}')


def labelled_head_onnx(path: Path, output: str = LABELS_NAME) -> Path:
    """A classifier head like openWakeWord's: Flatten (1, 4, 8) -> Gemm -> Relu -> Gemm -> Softmax, float, the
    Softmax writing the graph output ``output``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (16, 32)).astype(np.float32), "w1"),
             numpy_helper.from_array(np.zeros(16, np.float32), "b1"),
             numpy_helper.from_array(rng.normal(0, 0.3, (6, 16)).astype(np.float32), "w2"),
             numpy_helper.from_array(np.zeros(6, np.float32), "b2")]
    nodes = [helper.make_node("Flatten", ["x"], ["flat"], name="Flatten_0"),
             helper.make_node("Gemm", ["flat", "w1", "b1"], ["h"], name="Gemm_1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="Relu_2"),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="Gemm_3", transB=1),
             helper.make_node("Softmax", ["logits"], [output], name="Softmax_4", axis=1)]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, [1, 6])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def gemm_heads_onnx(path: Path, columns: list[int], features: int = 64) -> Path:
    """A feature vector and one Gemm head per width of ``columns`` writing a graph output (a classifier, a
    presence score), plus one Gemm of each width read by a Sigmoid (not a graph output itself)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, outputs = [], [], []
    for n in columns:
        inits += [numpy_helper.from_array(rng.normal(0, 0.1, (n, features)).astype(np.float32), f"w{n}"),
                  numpy_helper.from_array(rng.normal(0, 0.1, (n, features)).astype(np.float32), f"v{n}")]
        nodes += [helper.make_node("Gemm", ["x", f"w{n}"], [f"head{n}"], name=f"head{n}", transB=1),
                  helper.make_node("Gemm", ["x", f"v{n}"], [f"inner{n}"], name=f"inner{n}", transB=1),
                  helper.make_node("Sigmoid", [f"inner{n}"], [f"score{n}"], name=f"sigmoid{n}")]
        outputs += [helper.make_tensor_value_info(f"head{n}", TensorProto.FLOAT, [1, n]),
                    helper.make_tensor_value_info(f"score{n}", TensorProto.FLOAT, [1, n])]
    graph = helper.make_graph(nodes, "gemm_heads", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                  [1, features])], outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def plane_reshapes_onnx(path: Path, cases: list[tuple[tuple[int, int, int], tuple[int, ...]]],
                        transposed: int = 0) -> Path:
    """One branch per case ``((C, H, W), shape)``: an input of 8 channels and H x W, a 1x1 Conv to C channels and
    a Reshape of that [1, C, H, W] tensor to ``shape``, written as a graph output (palm_detection's and
    hand_recrop's heads); in the last ``transposed`` cases (3-D shapes) a Transpose of the last two axes reads
    the Reshape and writes the output (PicoDet's and PP-OCR's heads)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes, inits, inputs, outputs = [], [], [], []
    for i, ((c, h, w), shape) in enumerate(cases):
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, 8, h, w]))
        inits += [numpy_helper.from_array(rng.normal(0, 0.1, (c, 8, 1, 1)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(np.array(shape, np.int64), f"s{i}")]
        nodes += [helper.make_node("Conv", [f"x{i}", f"w{i}"], [f"c{i}"], name=f"conv{i}"),
                  helper.make_node("Reshape", [f"c{i}", f"s{i}"], [f"r{i}"], name=f"reshape{i}")]
        if i >= len(cases) - transposed:
            nodes.append(helper.make_node("Transpose", [f"r{i}"], [f"t{i}"], name=f"transpose{i}", perm=[0, 2, 1]))
            outputs.append(helper.make_tensor_value_info(f"t{i}", TensorProto.FLOAT, [1, shape[2], shape[1]]))
        else:
            outputs.append(helper.make_tensor_value_info(f"r{i}", TensorProto.FLOAT, list(shape)))
    graph = helper.make_graph(nodes, "plane_reshapes", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def wide_heads_onnx(path: Path, heads: list[tuple[int, int, str]], rows: int = 32) -> Path:
    """One Gemm per ``(features, columns, reader)`` over ``rows`` rows (an OCR head over time steps), read by a
    Reshape to [rows, 1, columns] (ddddocr's) or a Sigmoid (``reader`` "Reshape" or "Sigmoid"), written as a
    graph output; and a 3x3 Conv and Relu on a batch of 4."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Conv", ["batch", "kernel"], ["conv"], name="conv_of_four", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"], name="relu_of_four")]
    inits = [numpy_helper.from_array(rng.normal(0, 0.1, (8, 8, 3, 3)).astype(np.float32), "kernel")]
    inputs = [helper.make_tensor_value_info("batch", TensorProto.FLOAT, [4, 8, 16, 16])]
    outputs = [helper.make_tensor_value_info("relu", TensorProto.FLOAT, [4, 8, 16, 16])]
    for i, (features, columns, reader) in enumerate(heads):
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [rows, features]))
        inits += [numpy_helper.from_array(rng.normal(0, 0.05, (columns, features)).astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(rng.normal(0, 0.05, (columns,)).astype(np.float32), f"b{i}"),
                  numpy_helper.from_array(np.array([rows, 1, columns], np.int64), f"s{i}")]
        nodes.append(helper.make_node("Gemm", [f"x{i}", f"w{i}", f"b{i}"], [f"g{i}"], name=f"head{i}", transB=1))
        if reader == "Reshape":
            nodes.append(helper.make_node("Reshape", [f"g{i}", f"s{i}"], [f"y{i}"], name=f"reshape{i}"))
            outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [rows, 1, columns]))
        else:
            nodes.append(helper.make_node("Sigmoid", [f"g{i}"], [f"y{i}"], name=f"sigmoid{i}"))
            outputs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [rows, columns]))
    graph = helper.make_graph(nodes, "wide_heads", inputs, outputs, inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def stacked_rows_onnx(path: Path, rows: int = 4) -> Path:
    """``rows`` Gemms of a [1, 64] input, each [1, 100] given a leading axis (Unsqueeze) and stacked by a Concat on
    it to [rows, 1, 100], then a Relu: an unrolled LSTM's steps as captcha-whisperer's CRNN stacks them."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axis"),
             numpy_helper.from_array(rng.normal(0, .1, (64, 100)).astype(np.float32), "w")]
    nodes = []
    for i in range(rows):
        nodes += [helper.make_node("Gemm", ["x", "w"], [f"m{i}"], alpha=float(i + 1), name=f"gemm{i}"),
                  helper.make_node("Unsqueeze", [f"m{i}", "axis"], [f"u{i}"], name=f"unsqueeze{i}")]
    nodes += [helper.make_node("Concat", [f"u{i}" for i in range(rows)], ["c"], axis=0, name="concat"),
              helper.make_node("Relu", ["c"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "stacked_rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 1, 100])], inits)
    return save_opset14(graph, path)


def small_dense_heads_onnx(path: Path) -> Path:
    """Small fully connected heads: a 1-D Conv of 2 channels, global average pooling and its [1, 2, 1] squeezed to
    [1, 2] for a Gemm of 16 units (ecg-quality's head), a [1, 4, 1, 1] flattened for a MatMul of 16 columns, and a
    MatMul of 3 columns writing a graph output."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = {"w": rng.normal(size=(2, 2, 3)), "gw": rng.normal(size=(16, 2)), "gb": np.zeros(16),
             "w4": rng.normal(size=(4, 4, 3, 3)), "mw": rng.normal(size=(4, 16)), "hw": rng.normal(size=(16, 3)),
             "axes": np.array([2], np.int64)}
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1], name="conv1d"),
         helper.make_node("GlobalAveragePool", ["c"], ["g"], name="pool1d"),
         helper.make_node("Squeeze", ["g", "axes"], ["s"], name="squeeze"),
         helper.make_node("Gemm", ["s", "gw", "gb"], ["y1"], transB=1, name="gemm"),
         helper.make_node("Conv", ["x4", "w4"], ["c4"], pads=[1, 1, 1, 1], name="conv2d"),
         helper.make_node("GlobalAveragePool", ["c4"], ["g4"], name="pool2d"),
         helper.make_node("Flatten", ["g4"], ["f4"], name="flatten"),
         helper.make_node("MatMul", ["f4", "mw"], ["y2"], name="dense"),
         helper.make_node("MatMul", ["y2", "hw"], ["y3"], name="head")], "small_dense_heads",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 50]),
         helper.make_tensor_value_info("x4", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("y1", "y3")],
        [numpy_helper.from_array(value if value.dtype == np.int64 else (value * 0.3).astype(np.float32), name)
         for name, value in inits.items()])
    return save_opset14(graph, path)


def ensemble_softmax_onnx(path: Path) -> Path:
    """CI-SpliceAI's head in small: two members' [1, 3, 102] logits (a Conv each of a [1, 4, 102] input); the
    first's softmax written out with a Transpose between its Exp and its ReduceSum / Div (as tf2onnx writes it), the
    second's directly, then a Transpose; the two added."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(size=(3, 4, 5)).astype(np.float32) * 0.3, name) for name in "vw"]
    inits += [numpy_helper.from_array(np.array([2], np.int64), "rows_axis"),
              numpy_helper.from_array(np.array([1], np.int64), "class_axis")]
    nodes = [helper.make_node("Conv", ["x", "v"], ["logits_a"], pads=[2, 2], name="conv_a"),
             helper.make_node("Conv", ["x", "w"], ["logits_b"], pads=[2, 2], name="conv_b"),
             helper.make_node("Exp", ["logits_a"], ["exp_a"], name="exp_a"),
             helper.make_node("Transpose", ["exp_a"], ["rows_a"], perm=[0, 2, 1], name="rows_a"),
             helper.make_node("ReduceSum", ["rows_a", "rows_axis"], ["sum_a"], name="sum_a"),
             helper.make_node("Div", ["rows_a", "sum_a"], ["soft_a"], name="div_a"),
             helper.make_node("Exp", ["logits_b"], ["exp_b"], name="exp_b"),
             helper.make_node("ReduceSum", ["exp_b", "class_axis"], ["sum_b"], name="sum_b"),
             helper.make_node("Div", ["exp_b", "sum_b"], ["probs_b"], name="div_b"),
             helper.make_node("Transpose", ["probs_b"], ["soft_b"], perm=[0, 2, 1], name="rows_b"),
             helper.make_node("Add", ["soft_a", "soft_b"], ["y"], name="members")]
    graph = helper.make_graph(nodes, "ensemble_softmax", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                        [1, 4, 102])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return save_opset14(graph, path)


def mean_squeeze_concat_onnx(path: Path) -> Path:
    """musicnn's pooling head in small: a [1, 16, 75, 1] map, its channel mean kept as [1, 1, 75, 1] then squeezed to
    [1, 75, 1], concatenated with its channel max [1, 75, 1], flattened into a dense layer."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(150, 16)).astype(np.float32) * 0.1
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("ReduceMean", ["r"], ["m"], axes=[1], keepdims=1, name="mean"),
             helper.make_node("Squeeze", ["m", "axes"], ["s"], name="squeeze"),
             helper.make_node("ReduceMax", ["r"], ["mx"], axes=[1], keepdims=0, name="max"),
             helper.make_node("Concat", ["mx", "s"], ["c"], axis=2, name="concat"),
             helper.make_node("Reshape", ["c", "shape"], ["f"], name="flatten"),
             helper.make_node("MatMul", ["f", "w"], ["y"], name="dense")]
    graph = helper.make_graph(nodes, "mean_squeeze_concat",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 75, 1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([1], np.int64), "axes"),
                               numpy_helper.from_array(np.array([1, 150], np.int64), "shape"),
                               numpy_helper.from_array(weights, "w")])
    return save_opset14(graph, path)


def weight_only_mlp_onnx(path: Path, layers: int, side_input: bool = False) -> Path:
    """The k-NN surrogate's int8 graph as edgepipe's quantizer left it (held out): x (1, 5) -> an ai.onnx.ml
    Scaler (whose output has no shape) -> ``layers`` x (MatMul by a per-channel DequantizeLinear weight, Add of a
    per-tensor DequantizeLinear bias, Relu), activations float. With ``side_input`` a second input z (1, 16) goes
    through a Sigmoid of its own (an HTP op ready from the start)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("Scaler", ["x"], ["h0"], domain="ai.onnx.ml", offset=[0.1] * 5, scale=[2.0] * 5,
                              name="scaler")]
    constants, width = [], 5
    for k in range(layers):
        constants += [numpy_helper.from_array(rng.integers(-100, 100, (width, 16)).astype(np.int8), f"w{k}_q"),
                      numpy_helper.from_array(np.full(16, 0.01, np.float32), f"w{k}_s"),
                      numpy_helper.from_array(np.zeros(16, np.int8), f"w{k}_z"),
                      numpy_helper.from_array(rng.integers(-100, 100, (1, 16)).astype(np.int8), f"b{k}_q"),
                      numpy_helper.from_array(np.float32(0.01), f"b{k}_s"),
                      numpy_helper.from_array(np.int8(0), f"b{k}_z")]
        nodes += [helper.make_node("DequantizeLinear", [f"w{k}_q", f"w{k}_s", f"w{k}_z"], [f"w{k}"], axis=1,
                                   name=f"weight{k}"),
                  helper.make_node("DequantizeLinear", [f"b{k}_q", f"b{k}_s", f"b{k}_z"], [f"b{k}"], name=f"bias{k}"),
                  helper.make_node("MatMul", [f"h{k}", f"w{k}"], [f"m{k}"], name=f"matmul{k}"),
                  helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"], name=f"add{k}"),
                  helper.make_node("Relu", [f"a{k}"], [f"h{k + 1}"], name=f"relu{k}")]
        width = 16
    nodes.append(helper.make_node("Identity", [f"h{layers}"], ["y"], name="out"))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])]
    if side_input:
        nodes.append(helper.make_node("Sigmoid", ["z"], ["zs"], name="side"))
        inputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 16]))
        outputs.append(helper.make_tensor_value_info("zs", TensorProto.FLOAT, [1, 16]))
    graph = helper.make_graph(nodes, "weight_only_mlp", inputs, outputs, constants)
    import onnx

    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]
    onnx.save(helper.make_model(graph, opset_imports=opsets), path)
    return path


def flattened_dense_onnx(path: Path, channels: int, height: int, width: int, transposed: bool = False,
                         trans_b: bool = True, hidden: int = 128) -> Path:
    """x [1, channels, height + 2, width + 2] -> 3x3 Conv -> Relu -> (a Transpose to NHWC) -> Reshape to one row ->
    Gemm of ``hidden`` (weights [hidden, K] with ``trans_b``, else [K, hidden]) -> Relu -> Gemm of 16: a CNN
    classifier's dense head, as PyTorch (NCHW flatten, transB) and tf2onnx (NHWC Transpose, no transB) write it."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    k = channels * height * width
    nodes = [helper.make_node("Conv", ["x", "cw"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["r"], name="relu0")]
    source = "r"
    if transposed:
        nodes.append(helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 3, 1], name="nhwc"))
        source = "t"
    nodes += [helper.make_node("Reshape", [source, "row"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", "w1", "b1"], ["g"], transB=int(trans_b), name="dense"),
              helper.make_node("Relu", ["g"], ["gr"], name="relu1"),
              helper.make_node("Gemm", ["gr", "w2", "b2"], ["y"], transB=1, name="head")]
    weights = rng.normal(0, .02, (hidden, k) if trans_b else (k, hidden)).astype(np.float32)
    constants = [numpy_helper.from_array(rng.normal(0, .1, (channels, channels, 3, 3)).astype(np.float32), "cw"),
                 numpy_helper.from_array(np.array([1, k], np.int64), "row"),
                 numpy_helper.from_array(weights, "w1"), numpy_helper.from_array(np.zeros(hidden, np.float32), "b1"),
                 numpy_helper.from_array(rng.normal(0, .1, (16, hidden)).astype(np.float32), "w2"),
                 numpy_helper.from_array(np.zeros(16, np.float32), "b2")]
    graph = helper.make_graph(nodes, "flattened_dense",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, height + 2,
                                                                                      width + 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], constants)
    return save_opset(graph, path, 13)
