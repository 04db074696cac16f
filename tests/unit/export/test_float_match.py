"""A float conversion is kept only when it computes its source's outputs (edgepipe.export.float_match)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from edgepipe.export.float_match import float_mismatch


def _conv_onnx(path: Path) -> Path:
    """NCHW Conv(3→4, 3×3) → Relu, input [1, 3, 8, 8]: its output is a feature map a converter may lay out NHWC."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    weight = numpy_helper.from_array(rng.normal(0, 0.4, (4, 3, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def _tflite(path: Path, function: object, shape: list[int]) -> Path:
    """The TFLite of a ``tf.function`` with one float input of ``shape``."""
    from edgepipe.frameworks import import_tensorflow

    tf = import_tensorflow()
    concrete = tf.function(function, input_signature=[tf.TensorSpec(shape, tf.float32, name="x")])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([concrete.get_concrete_function()])
    path.write_bytes(converter.convert())
    return path


@pytest.fixture(scope="module")
def data() -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset(Path("calib.npz"), (rng.normal(0, 1, (6, 3, 8, 8)).astype(np.float32),), None, "test")


def _reference_weights(onnx_path: Path) -> np.ndarray:
    import onnx
    from onnx import numpy_helper

    return numpy_helper.to_array(onnx.load(str(onnx_path)).graph.initializer[0])


def test_same_function_with_channels_last_output_is_accepted(tmp_path: Path, data: Dataset) -> None:
    source = _conv_onnx(tmp_path / "m.onnx")
    kernel = np.transpose(_reference_weights(source), (2, 3, 1, 0))  # OIHW → HWIO

    def nhwc(x):  # the same function, output laid out channels-last, as onnx2tf may write it
        import tensorflow as tf

        return tf.nn.relu(tf.nn.conv2d(tf.transpose(x, (0, 2, 3, 1)), kernel, 1, "SAME"))

    converted = _tflite(tmp_path / "m.tflite", nhwc, [1, 3, 8, 8])
    assert float_mismatch(source, converted, data) is None


def test_another_function_is_refused_with_the_output_and_its_cosine(tmp_path: Path, data: Dataset) -> None:
    source = _conv_onnx(tmp_path / "m.onnx")
    kernel = np.transpose(_reference_weights(source), (2, 3, 1, 0))

    def wrong(x):  # same shapes, another function (the kernel mirrored)
        import tensorflow as tf

        out = tf.nn.relu(tf.nn.conv2d(tf.transpose(x, (0, 2, 3, 1)), kernel[::-1, ::-1], 1, "SAME"))
        return tf.transpose(out, (0, 3, 1, 2))

    converted = _tflite(tmp_path / "w.tflite", wrong, [1, 3, 8, 8])
    problem = float_mismatch(source, converted, data)
    assert problem is not None and problem.startswith("output y has cosine 0.") and "4 calibration samples" in problem


def test_an_output_of_another_size_is_refused(tmp_path: Path, data: Dataset) -> None:
    source = _conv_onnx(tmp_path / "m.onnx")

    def pooled(x):
        import tensorflow as tf

        return tf.reduce_mean(x, axis=(2, 3))

    problem = float_mismatch(source, _tflite(tmp_path / "p.tflite", pooled, [1, 3, 8, 8]), data)
    assert problem is not None and "same size as y" in problem


def test_a_refused_conversion_is_an_onnx2tf_failure_with_a_next_step() -> None:
    from edgepipe.containment import onnx2tf_failure

    failure = onnx2tf_failure("TFLite conversion failed: onnx2tf's float TFLite does not compute the ONNX model's "
                              "outputs: output y has cosine 0.0099 with the source's on 4 calibration samples")
    assert failure.tool == "onnx2tf" and "training framework" in failure.next_step
