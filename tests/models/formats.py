"""Tiny models for the format tests, generated deterministically with onnx.helper and the TFLite converter.

- :func:`nchw_cnn`: a PyTorch-style NCHW image classifier (3×64×64 → 10 logits) with a
  dynamic batch ``N``, the shape most ONNX files from PyTorch have;
- :func:`two_in_two_out`: two inputs with a shared named batch dimension and a dynamic
  sequence length, two outputs (a stand-in for audio/token models with state);
- :func:`fp16_tflite`: a float TFLite whose weights are float16 behind DEQUANTIZE ops,
  the way MediaPipe ships its models;
- :func:`sparse_tflite`: a Conv whose mostly-zero kernel the converter stores sparse, behind a DENSIFY op
  (MediaPipe's full-range face detector);
- :func:`transpose_conv_bias_tflite`: MediaPipe's ``Convolution2DTransposeBias`` custom op (the selfie
  segmenter's upsampling), made from a builtin TRANSPOSE_CONV;
- :func:`real_fft_tflite`: windowed frames -> RFFT2D whose real part alone is read (a CAST to float32), as
  BirdNET's spectrogram does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _save_onnx(nodes: list, inputs: list, outputs: list, initializers: list, path: Path) -> Path:
    import onnx
    from onnx import helper

    graph = helper.make_graph(nodes, path.stem, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def nchw_cnn(path: Path) -> Path:
    """Conv(3→16, s2) → Relu → Conv(16→32, s2) → Relu → GlobalAveragePool → Flatten → Gemm(10); input N×3×64×64."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)

    def weight(name: str, shape: tuple[int, ...], fan_in: int) -> object:
        return numpy_helper.from_array(rng.normal(0, np.sqrt(2 / fan_in), shape).astype(np.float32), name)

    def bias(name: str, size: int) -> object:
        return numpy_helper.from_array(rng.normal(0, 0.1, size).astype(np.float32), name)

    inits = [weight("w1", (16, 3, 3, 3), 27), bias("b1", 16), weight("w2", (32, 16, 3, 3), 144), bias("b2", 32),
             weight("fc", (10, 32), 32), numpy_helper.from_array(np.zeros(10, np.float32), "fcb")]
    nodes = [
        helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"], transB=1),
    ]
    return _save_onnx(nodes, [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 64, 64])],
                      [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits, path)


def two_in_two_out(path: Path) -> Path:
    """``frames [batch, seq]`` and ``state [batch, 8]`` → ``score [batch, 1]`` and ``next_state [batch, 8]``.

    ``seq`` is dynamic; the model sums frames over the sequence, so any fixed length works.
    """
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(11)
    inits = [numpy_helper.from_array(rng.normal(0, 0.5, (1, 8)).astype(np.float32), "w_in"),
             numpy_helper.from_array(rng.normal(0, 0.3, (8, 8)).astype(np.float32), "w_state"),
             numpy_helper.from_array(rng.normal(0, 0.5, (8, 1)).astype(np.float32), "w_out")]
    nodes = [
        helper.make_node("ReduceMean", ["frames"], ["level"], axes=[1], keepdims=1),
        helper.make_node("MatMul", ["level", "w_in"], ["drive"]),
        helper.make_node("MatMul", ["state", "w_state"], ["carry"]),
        helper.make_node("Add", ["drive", "carry"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["next_state"]),
        helper.make_node("MatMul", ["next_state", "w_out"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["score"]),
    ]
    inputs = [helper.make_tensor_value_info("frames", TensorProto.FLOAT, ["batch", "seq"]),
              helper.make_tensor_value_info("state", TensorProto.FLOAT, ["batch", 8])]
    outputs = [helper.make_tensor_value_info("score", TensorProto.FLOAT, ["batch", 1]),
               helper.make_tensor_value_info("next_state", TensorProto.FLOAT, ["batch", 8])]
    return _save_onnx(nodes, inputs, outputs, inits, path)


def fp16_tflite(path: Path) -> Path:
    """A small NHWC CNN (16×16×3 → 4) converted with float16 weights (DEQUANTIZE ops in front of each)."""
    from edgepipe.frameworks import import_keras, import_tensorflow

    keras = import_keras()
    tf = import_tensorflow()
    keras.utils.set_random_seed(3)
    inputs = keras.Input((16, 16, 3), batch_size=1, name="pixels")
    x = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.Conv2D(8, 3, strides=2, padding="same", activation="relu")(x)
    x = keras.layers.GlobalAveragePooling2D()(x)
    model = keras.Model(inputs, keras.layers.Dense(4)(x))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.target_spec.supported_types = [tf.float16]
    path.write_bytes(converter.convert())
    return path


def _concrete_tflite(function: object, path: Path, optimizations: list | None = None) -> bytes:
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function.get_concrete_function()])  # type: ignore[attr-defined]
    converter.optimizations = optimizations or []
    return converter.convert()


def sparse_tflite(path: Path) -> Path:
    """x [1, 8, 8, 4] -> Conv 3x3 (16 filters, three quarters of the kernel zero, stored sparse) -> ReLU."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    kernel = np.random.default_rng(0).normal(0, 0.3, (3, 3, 4, 16)).astype(np.float32)
    kernel[np.abs(kernel) < 0.35] = 0.0
    constant = tf.constant(kernel)

    @tf.function(input_signature=[tf.TensorSpec([1, 8, 8, 4], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        return tf.nn.relu(tf.nn.conv2d(x, constant, strides=1, padding="SAME"))

    path.write_bytes(_concrete_tflite(net, path, [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]))
    return path


def transpose_conv_bias_tflite(path: Path) -> Path:
    """x [1, 5, 5, 4] -> Convolution2DTransposeBias (3x3, stride 2, SAME, 6 channels, a bias) -> [1, 10, 10, 6]:
    TF's TRANSPOSE_CONV rewritten into MediaPipe's custom op (inputs: input, weights, bias; options: padding,
    stride width, stride height as int32), which LiteRT runs."""
    import struct

    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    rng = np.random.default_rng(0)
    weights = tf.constant(rng.normal(0, 0.3, (3, 3, 6, 4)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 5, 5, 4], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        return tf.nn.conv2d_transpose(x, weights, output_shape=[1, 10, 10, 6], strides=2, padding="SAME")

    model = schema.ModelT.InitFromPackedBuf(_concrete_tflite(net, path), 0)
    graph = model.subgraphs[0]
    (op,) = [o for o in graph.operators
             if model.operatorCodes[o.opcodeIndex].builtinCode == schema.BuiltinOperator.TRANSPOSE_CONV]
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode, code.version = "Convolution2DTransposeBias", 1
    model.operatorCodes.append(code)
    bias = schema.BufferT()
    bias.data = np.frombuffer(rng.normal(0, 1, 6).astype(np.float32).tobytes(), np.uint8)
    model.buffers.append(bias)
    tensor = schema.TensorT()
    tensor.shape, tensor.type, tensor.name = [6], schema.TensorType.FLOAT32, "bias"
    tensor.buffer = len(model.buffers) - 1
    graph.tensors.append(tensor)
    op.opcodeIndex = len(model.operatorCodes) - 1
    op.inputs = [op.inputs[2], op.inputs[1], len(graph.tensors) - 1]
    op.builtinOptionsType, op.builtinOptions = 0, None
    op.customOptions, op.customOptionsFormat = list(struct.pack("<iii", 1, 2, 2)), 0  # SAME, stride 2 x 2
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    path.write_bytes(bytes(builder.Output()))
    return path


def magnitude_fft_tflite(path: Path) -> Path:
    """x [1, 6, 64] (frames) -> Hann window -> |rfft| -> log(1 + .): [1, 6, 33], a log-magnitude spectrogram."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    window = tf.constant(np.hanning(64).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 6, 64], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        return tf.math.log1p(tf.abs(tf.signal.rfft(x * window)))

    path.write_bytes(_concrete_tflite(net, path))
    return path


def real_fft_tflite(path: Path) -> Path:
    """x [1, 6, 64] (frames) -> Hann window -> rfft -> cast to float32 (the real part) -> square: [1, 6, 33]."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    window = tf.constant(np.hanning(64).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([1, 6, 64], tf.float32)])
    def net(x):  # noqa: ANN001, ANN202 - a tf.function signature
        real = tf.cast(tf.signal.rfft(x * window), tf.float32)
        return real * real

    path.write_bytes(_concrete_tflite(net, path))
    return path
