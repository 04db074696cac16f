"""Probe graphs of model inputs and control flow: input dtypes and layouts, masks, run-time shapes, If and Loop."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.models.probes.onnx_files import onnx_save, save_opset, save_opset14


def runtime_if_onnx(path: Path, branch_mean: bool = False) -> Path:
    """A detector with a verifier, as openWakeWord's hey_jarvis: Flatten -> Gemm -> Sigmoid gives a score; an
    ``If`` on score >= 0.5 (known only at run time) runs a second Gemm -> Sigmoid on the input (then) or returns
    the score (else). Both branches read tensors of the outer graph. With ``branch_mean`` a ReduceMean follows
    the verifier's Gemm (hey_jarvis's branch normalizes its layers: rknn-toolkit2 then converts the branch's
    opset, and fails there)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (1, 32)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.normal(0, 0.3, (1, 32)).astype(np.float32), "verifier_w"),
             numpy_helper.from_array(np.zeros(1, np.float32), "b"),
             numpy_helper.from_array(np.array(0.5, np.float32), "threshold")]
    verifier = [helper.make_node("Gemm", ["flat", "verifier_w", "b"], ["v0" if branch_mean else "v"],
                                 name="verifier_gemm", transB=1)]
    if branch_mean:
        verifier.append(helper.make_node("ReduceMean", ["v0"], ["v"], name="verifier_mean", axes=[-1]))
    then_branch = helper.make_graph(
        [*verifier, helper.make_node("Sigmoid", ["v"], ["verified"], name="verifier_sigmoid")],
        "then", [], [helper.make_tensor_value_info("verified", TensorProto.FLOAT, [1, 1])])
    else_branch = helper.make_graph([helper.make_node("Identity", ["score"], ["kept"], name="keep")],
                                    "else", [], [helper.make_tensor_value_info("kept", TensorProto.FLOAT, [1, 1])])
    nodes = [helper.make_node("Flatten", ["x"], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "w", "b"], ["logit"], name="gemm", transB=1),
             helper.make_node("Sigmoid", ["logit"], ["score"], name="sigmoid"),
             helper.make_node("GreaterOrEqual", ["score", "threshold"], ["above"], name="above"),
             helper.make_node("Squeeze", ["above"], ["condition"], name="condition"),
             helper.make_node("If", ["condition"], ["y"], name="verify", then_branch=then_branch,
                              else_branch=else_branch)]
    graph = helper.make_graph(nodes, "verified", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def cast_of_input_onnx(path: Path, dtype: int) -> Path:
    """A model whose input of ``dtype`` a Cast makes float, then a Relu (MarbleNet reads its int16 audio so)."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Cast", ["x"], ["f"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", dtype, [1, 16, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def bool_mask_pad_onnx(path: Path) -> Path:
    """A bool mask padded by one step each side (Fracast's ``valid`` mask before its local-maximum test): x > 0 on a
    [1, 1022] input, Pad with False to [1, 1024], And with a shifted copy of itself, Cast to float; beside it the
    float x padded the same way."""
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array([0, 1, 0, 1], np.int64), "pads"),
             numpy_helper.from_array(np.array(False), "false"),
             numpy_helper.from_array(np.array([0, 2, 0, 0], np.int64), "shift")]
    graph = helper.make_graph(
        [helper.make_node("Greater", ["x", "zero"], ["positive"], name="greater"),
         helper.make_node("Pad", ["positive", "pads", "false"], ["padded"], name="mask_pad"),
         helper.make_node("Pad", ["positive", "shift", "false"], ["shifted"], name="mask_shift"),
         helper.make_node("And", ["padded", "shifted"], ["both"], name="and"),
         helper.make_node("Cast", ["both"], ["y1"], to=TensorProto.FLOAT, name="cast"),
         helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Pad", ["r", "pads"], ["y2"], name="float_pad")], "bool_mask_pad",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1022])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("y1", "y2")], inits)
    return save_opset14(graph, path)


def run_time_expand_onnx(path: Path) -> Path:
    """Zeros expanded to [3, 1, 768] by a shape made from the input's Shape (Gather, Unsqueeze, Concat), added to
    the input: VoiceFilter-Lite's zero LSTM states. And a [1, 1, 256] Expand by a stored shape beside it."""
    from onnx import TensorProto, helper, numpy_helper

    consts = {"zero": np.array(0, np.float32), "one": np.array(1, np.int64), "axes": np.array([0], np.int64),
              "three": np.array([3], np.int64), "width": np.array([768], np.int64),
              "stored": np.array([1, 1, 256], np.int64)}
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "one"], ["batch"], axis=0, name="gather"),
             helper.make_node("Unsqueeze", ["batch", "axes"], ["batch_1d"], name="unsqueeze"),
             helper.make_node("Concat", ["three", "batch_1d", "width"], ["target"], axis=0, name="concat"),
             helper.make_node("Expand", ["zero", "target"], ["zeros"], name="expand_computed"),
             helper.make_node("Add", ["zeros", "x"], ["y"], name="add"),
             helper.make_node("Relu", ["v"], ["r"], name="relu"),
             helper.make_node("Expand", ["r", "stored"], ["z"], name="expand_stored")]
    graph = helper.make_graph(nodes, "run_time_expand",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1, 768]),
                               helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 1, 256])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx_save(graph, path)
    return path


def dynamic_matmul_onnx(path: Path) -> Path:
    """A [1, 1, 128] x [128, 64] MatMul and a Relu, dynamically quantized by ONNX Runtime (DynamicQuantizeLinear,
    MatMulInteger) as VoiceFilter-Lite ships its heads."""
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import QuantType, quantize_dynamic

    weights = np.random.default_rng(0).normal(size=(128, 64)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
                               helper.make_node("Relu", ["m"], ["y"], name="relu")], "dynamic_matmul",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 128])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(weights, "w")])
    float_path = path.with_name(path.stem + "_float.onnx")
    onnx_save(graph, float_path)
    quantize_dynamic(str(float_path), str(path), weight_type=QuantType.QInt8)
    return path


def int32_ids_onnx(path: Path) -> Path:
    """slovorez's TF SelectV2 and embedding: int32 ids [1, 32] (graph input) multiplied by an int32 mask (Mul),
    shifted (Add), looking up rows of a constant [49, 16] table (Gather), then a Relu."""
    from onnx import TensorProto, helper, numpy_helper

    table = np.random.default_rng(0).normal(size=(49, 16)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["ids", "mask"], ["kept"], name="mul"),
         helper.make_node("Add", ["kept", "mask"], ["shifted"], name="add"),
         helper.make_node("Gather", ["table", "shifted"], ["rows"], axis=0, name="lookup"),
         helper.make_node("Relu", ["rows"], ["y"], name="relu")], "int32_ids",
        [helper.make_tensor_value_info("ids", TensorProto.INT32, [1, 32]),
         helper.make_tensor_value_info("mask", TensorProto.INT32, [1, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(table, "table")])
    return save_opset14(graph, path)


def nhwc_input_onnx(path: Path) -> Path:
    """tf2onnx's NHWC input (open_nsfw): [1, 16, 16, 3] transposed to NCHW, a 3 x 3 Conv and a Relu."""
    from onnx import TensorProto, helper, numpy_helper

    weights = np.random.default_rng(0).normal(size=(8, 3, 3, 3)).astype(np.float32) * 0.2
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2], name="transpose"),
         helper.make_node("Conv", ["t", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c"], ["y"], name="relu")], "nhwc_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 16, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(weights, "w")])
    onnx_save(graph, path)
    return path


def raw_int8_lookup_onnx(path: Path, ids_dtype: int) -> Path:
    """text2tashkeel's dynamically quantized embedding: rows of a uint8 [49, 16] table gathered by [1, 32] ids
    (graph input of ``ids_dtype``), transposed as raw uint8, then a DequantizeLinear and a Relu; beside it, rows of a
    float table gathered by the same ids and a Relu."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    consts = {"table_q": rng.integers(0, 255, size=(49, 16)).astype(np.uint8), "scale": np.array(0.02, np.float32),
              "zero": np.array(128, np.uint8), "table_f": rng.normal(size=(49, 16)).astype(np.float32)}
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table_q", "ids"], ["rows_q"], axis=0, name="lookup_q"),
         helper.make_node("Transpose", ["rows_q"], ["time_major"], perm=[1, 0, 2], name="transpose"),
         helper.make_node("DequantizeLinear", ["time_major", "scale", "zero"], ["rows"], name="dequantize"),
         helper.make_node("Relu", ["rows"], ["y"], name="relu"),
         helper.make_node("Gather", ["table_f", "ids"], ["rows_f"], axis=0, name="lookup_f"),
         helper.make_node("Relu", ["rows_f"], ["z"], name="relu_f")], "raw_int8_lookup",
        [helper.make_tensor_value_info("ids", ids_dtype, [1, 32])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("y", "z")],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx_save(graph, path)
    return path


def default_constant_of_shape_onnx(path: Path, with_value: bool) -> Path:
    """A [1, 8] input plus zeros of a ConstantOfShape that leaves its ``value`` attribute to the ONNX default
    (SwiftF0's export) or writes it."""
    from onnx import TensorProto, helper, numpy_helper

    zeros = helper.make_node("ConstantOfShape", ["shape"], ["zeros"], name="zeros",
                             **({"value": numpy_helper.from_array(np.zeros(1, np.float32))} if with_value else {}))
    graph = helper.make_graph([zeros, helper.make_node("Add", ["x", "zeros"], ["y"], name="add")], "default_value",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array([1, 8], np.int64), "shape")])
    return save_opset14(graph, path)


def loop_between_onnx(path: Path, outer_read: bool) -> Path:
    """x (1, 16, 8) -> Mul -> Relu -> Loop (3 trips) -> Mul -> Relu. With ``outer_read`` the Loop's body adds the
    Relu's output, read from the enclosing graph (outer scope: no edge of the graph shows it), to a zero state,
    as tf2onnx's GRU loops read their sequence; otherwise the Relu's output is the Loop's initial state (an edge).
    The Loop's output has a declared shape, as tf2onnx writes it."""
    from onnx import TensorProto, helper, numpy_helper

    shape = [1, 16, 8]

    def value(name: str) -> object:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    step = helper.make_node("Add", ["v_in", "y"], ["v_out"]) if outer_read else helper.make_node("Relu", ["v_in"],
                                                                                               ["v_out"])
    body = helper.make_graph([step, helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                             [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                              helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []), value("v_in")],
                             [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), value("v_out")])
    constants = [numpy_helper.from_array(np.array(3, np.int64), "trips"),
                 numpy_helper.from_array(np.array(True), "keep_going"),
                 numpy_helper.from_array(np.full(shape, 0.5, np.float32), "c1"),
                 numpy_helper.from_array(np.full(shape, 1.5, np.float32), "c2"),
                 numpy_helper.from_array(np.zeros(shape, np.float32), "zero")]
    nodes = [helper.make_node("Mul", ["x", "c1"], ["m"], name="pre_mul"),
             helper.make_node("Relu", ["m"], ["y"], name="pre_relu"),
             helper.make_node("Loop", ["trips", "keep_going", "zero" if outer_read else "y"], ["v"], name="loop",
                              body=body),
             helper.make_node("Mul", ["v", "c2"], ["w"], name="post_mul"),
             helper.make_node("Relu", ["w"], ["out"], name="post_relu")]
    graph = helper.make_graph(nodes, "loop_between", [value("x")], [value("out")], constants, value_info=[value("v")])
    return save_opset(graph, path, 17)


def gather_nd_onnx(path: Path, batch_dims: int) -> Path:
    """x (1, 200, 80) -> Mul -> GatherND -> Relu: 98 frames of 5 rows, as tf2onnx's pfor writes a framing;
    with ``batch_dims`` 1 the indices (1, 98, 5, 1) share the batch axis, with 0 they name it (1, 98, 5, 2)."""
    from onnx import TensorProto, helper, numpy_helper

    rows = np.arange(98 * 5).reshape(98, 5) % 200
    indices = rows.reshape(1, 98, 5, 1) if batch_dims else np.stack([np.zeros_like(rows), rows], -1)[None]
    nodes = [helper.make_node("Mul", ["x", "c"], ["m"], name="pre"),
             helper.make_node("GatherND", ["m", "idx"], ["g"], name="gather", batch_dims=batch_dims),
             helper.make_node("Relu", ["g"], ["y"], name="post")]
    graph = helper.make_graph(nodes, "gather_nd", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 200, 80])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.full((1, 200, 80), 0.5, np.float32), "c"),
                               numpy_helper.from_array(indices.astype(np.int64), "idx")])
    return save_opset(graph, path, 17)
