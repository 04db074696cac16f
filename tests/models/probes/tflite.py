"""Int8 and float TFLite probe models, converted from tiny Keras nets: what Vela and LiteRT are tested on."""

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


def dynamic_batch_tflite(path: Path, int8: bool = True) -> Path:
    """An int8 (or float) TFLite converted from a function whose batch is ``None``: Conv2D(4->8) -> ReLU -> Add ->
    Mean.

    Every tensor's stored ``shape`` is static (a batch of one, what the interpreter allocates and Vela compiles) while
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
