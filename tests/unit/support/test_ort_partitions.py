"""Which ops form a QDQ node unit as ONNX Runtime's selectors decide (edgepipe.support.ort_partitions): a Gemm or
Conv takes a dequantized bias into its unit only when the bias is int32 (and a Gemm's only with beta 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.support import read_graph
from edgepipe.support.ort_partitions import forms_node_unit, is_standalone_constant_dequantize


def _gemm_qdq(path: Path, bias: str, beta: float = 1.0) -> Path:
    """x -> Q -> DQ -> Gemm(A, DQ(int8 weight, per channel), C) -> Q -> DQ -> y, with C ``bias``: ``int32`` (a DQ
    of an int32 constant), ``feature_map`` (a DQ of the int8 input again) or ``float`` (a float constant)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    constants = [numpy_helper.from_array(np.ones((8, 8), np.int8), "w_q"),
                 numpy_helper.from_array(np.full(8, 0.01, np.float32), "w_s"),
                 numpy_helper.from_array(np.zeros(8, np.int8), "w_z"),
                 numpy_helper.from_array(np.ones(8, np.int32), "b_q"),
                 numpy_helper.from_array(np.full(8, 1e-4, np.float32), "b_s"),
                 numpy_helper.from_array(np.zeros(8, np.float32), "b_f"),
                 numpy_helper.from_array(np.float32(0.02), "s"), numpy_helper.from_array(np.int8(0), "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="x_q"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"], name="x_dq"),
             helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_z"], ["w"], axis=0, name="w_dq"),
             helper.make_node("DequantizeLinear", ["b_q", "b_s"], ["b"], name="b_dq"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xb"], name="x_bias_dq")]
    c = {"int32": "b", "feature_map": "xb", "float": "b_f"}[bias]
    nodes += [helper.make_node("Gemm", ["xd", "w", c], ["g"], name="gemm", transB=1, beta=beta),
              helper.make_node("QuantizeLinear", ["g", "s", "z"], ["gq"], name="g_q"),
              helper.make_node("DequantizeLinear", ["gq", "s", "z"], ["y"], name="g_dq")]
    graph = helper.make_graph(nodes, "gemm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize(("bias", "beta", "unit"), [("int32", 1.0, True), ("float", 1.0, True),
                                                    ("feature_map", 1.0, False), ("int32", 0.5, False)])
def test_gemm_forms_a_node_unit_only_with_an_int32_bias_and_beta_one(tmp_path: Path, bias: str, beta: float,
                                                                      unit: bool) -> None:
    graph = read_graph(_gemm_qdq(tmp_path / "g.onnx", bias, beta))
    nodes = {node.name: node for node in graph.nodes}
    assert forms_node_unit(graph, nodes["gemm"]) is unit
    # the weight's DequantizeLinear is an op of its own exactly when no node unit takes it
    assert is_standalone_constant_dequantize(graph, nodes["w_dq"]) is not unit
