"""onnx2tf renames inputs before it matches ``-kat`` (keep their shape): edgepipe passes the names it will see."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgepipe.data.dataset import Dataset
from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite, int8_output, kept_input_names


def test_every_name_onnx2tf_may_match_is_kept() -> None:
    assert kept_input_names(["onnx::Flatten_0", "/input", "x"]) == [
        "onnx::Flatten_0", "onnx____Flatten_0", "/input", "wa/input", "x"]


def test_a_pytorch_named_3d_input_keeps_its_shape_in_the_tflite(tmp_path: Path) -> None:
    """openWakeWord's classifiers (PyTorch export: input 'onnx::Flatten_0' of [1, 16, 96]): onnx2tf made the input
    [1, 96, 16] and edgepipe refused the TFLite (and its integer TFLite failed: KeyError on the renamed input);
    now the TFLite takes [1, 16, 96] and computes the same scores, and the integer one is written too."""
    from ai_edge_litert.interpreter import Interpreter

    rng = np.random.default_rng(0)
    name = "onnx::Flatten_0"
    nodes = [helper.make_node("Flatten", [name], ["flat"], name="flatten"),
             helper.make_node("Gemm", ["flat", "w", "b"], ["logit"], name="gemm", transB=1),
             helper.make_node("Sigmoid", ["logit"], ["score"], name="sigmoid")]
    graph = helper.make_graph(nodes, "head", [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 16, 96])],
                              [helper.make_tensor_value_info("score", TensorProto.FLOAT, [1, 1])],
                              [numpy_helper.from_array(rng.normal(0, .05, (1, 1536)).astype(np.float32), "w"),
                               numpy_helper.from_array(np.zeros(1, np.float32), "b")])
    model = tmp_path / "head.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    samples = rng.normal(0, 1, (8, 16, 96)).astype(np.float32)
    out = convert_onnx_to_tflite(model, tmp_path / "head.tflite", Dataset(Path("calib.npz"), (samples,), None, "t"),
                                 [name], tmp_path / "scratch")
    interpreter = Interpreter(model_path=str(out))
    interpreter.allocate_tensors()
    (spec,) = interpreter.get_input_details()
    assert tuple(spec["shape"]) == (1, 16, 96) and int8_output(out) is not None
    interpreter.set_tensor(spec["index"], samples[:1])
    interpreter.invoke()
    got = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    import onnxruntime as ort

    (want,) = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {name: samples[:1]})
    assert np.allclose(got, want, atol=1e-5)
