"""An onnx2tf failure is reported with its reason and the ONNX node it failed on, not with the advice onnx2tf prints
after every failure (DeepLC, held out: its report said only "Also, for models that include NonMaxSuppression in
the post-processing, try the -onwdt option")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset


def _scatter_add_onnx(path: Path) -> Path:
    """x [1, 6] -> ScatterElements(reduction=add) of ones at fixed bins into zeros [1, 4]: a residue count."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    constants = [numpy_helper.from_array(np.zeros((1, 4), np.float32), "zeros"),
                 numpy_helper.from_array(np.array([[0, 1, 1, 3, 2, 1]], np.int64), "bins")]
    nodes = [helper.make_node("ScatterElements", ["zeros", "bins", "x"], ["y"], name="/encoder/ScatterElements",
                              axis=1, reduction="add")]
    graph = helper.make_graph(nodes, "count", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_unsupported_op_names_the_reason_and_the_node(tmp_path: Path) -> None:
    from edgepipe.export.onnx_to_tflite import ConversionError, convert_onnx_to_tflite

    source = _scatter_add_onnx(tmp_path / "count.onnx")
    data = Dataset(path=tmp_path / "calib.npz", inputs=(np.ones((4, 1, 6), np.float32)[:, 0],), labels=None,
                   sha256="")
    with pytest.raises(ConversionError) as failed:
        convert_onnx_to_tflite(source, tmp_path / "count.tflite", data, ["x"], tmp_path / "scratch")
    message = str(failed.value)
    assert "ScatterElements currently supports only reduction=['none']" in message
    assert message.endswith("(at ONNX node /encoder/ScatterElements)")
    assert "-onwdt" not in message and "\x1b[" not in message


def test_exception_line_is_the_reason_when_onnx2tf_has_none_of_its_own() -> None:
    from edgepipe.export.onnx_to_tflite import last_error

    output = ("\x1b[31mERROR:\x1b[0m The trace log is below.\nTraceback (most recent call last):\n"
              "  File \"LSTM.py\", line 801, in make_node\nTypeError: 'NoneType' object is not subscriptable\n"
              "\x1b[31mERROR:\x1b[0m input_onnx_file_path: m.onnx\n\x1b[31mERROR:\x1b[0m onnx_op_name: wa/lstm/LSTM\n"
              "\x1b[31mERROR:\x1b[0m Also, for models that include NonMaxSuppression in the post-processing, try the "
              "-onwdt option.\n")
    assert last_error(output) == "TypeError: 'NoneType' object is not subscriptable (at ONNX node /lstm/LSTM)"
