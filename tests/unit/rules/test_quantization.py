"""One test per constraint of edgepipe/rules/quantization.py (quantized tensors): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import hardsigmoid_unit, verdict

FLOAT = TensorProto.FLOAT


def test_quantized_tensors(probe_graphs: dict[str, OpGraph]) -> None:
    ok, detail = verdict("quantized_tensors", probe_graphs["float"].nodes[0], probe_graphs["float"], True)
    assert not ok and "has no quantization parameters" in detail
    assert verdict("quantized_tensors", probe_graphs["int8"].nodes[0], probe_graphs["int8"], True)[0]


def test_per_tensor_quantization(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    conv_node = next(n for n in graph.nodes if n.op == "CONV_2D")
    ok, detail = verdict("per_tensor_quantization", conv_node, graph, True)
    assert not ok and "is quantized per axis" in detail
    pool = next(n for n in graph.nodes if n.op == "AVERAGE_POOL_2D")
    assert verdict("per_tensor_quantization", pool, graph, True)[0]


def _dq_int32(tmp: Path, user: str):  # noqa: ANN202 - returns (dq node, graph)
    """DequantizeLinear of an int32 constant 'b', read by a Conv as bias or by an Add."""
    consts = {"bq": np.ones(4, np.int32), "s": np.array(0.1, np.float32), "z": np.array(0, np.int32),
              "w": np.ones((4, 4, 1, 1), np.float32)}
    dq = helper.make_node("DequantizeLinear", ["bq", "s", "z"], ["b"], name="dq")
    if user == "Conv":
        op = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")
    else:
        op = helper.make_node("Add", ["x", "b"], ["y"], name="add")
    graph = onnx_graph(tmp, [dq, op], {"x": ([1, 4, 2, 2] if user == "Conv" else [1, 4], FLOAT)},
                       {"y": ([], FLOAT)}, consts)
    return graph.nodes[0], graph


def test_int32_dequantize_only_as_bias(tmp_path: Path) -> None:
    node, graph = _dq_int32(tmp_path, "Add")
    ok, detail = verdict("int32_dequantize_only_as_bias", node, graph, ["Conv", "Gemm"])
    assert not ok and detail == "DequantizeLinear of int32 'bq' feeds Add 'add', not a bias"
    assert verdict("int32_dequantize_only_as_bias", *_dq_int32(tmp_path, "Conv"), ["Conv", "Gemm"])[0]


def test_no_int32_dequantized_params(tmp_path: Path) -> None:
    params = {n: np.ones(4, np.float32) for n in ("sc", "bb", "m", "v")}
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["sc"], name="dq")
    bn = helper.make_node("BatchNormalization", ["x", "sc", "bb", "m", "v"], ["y"], name="bn")
    quantized = {"q": np.ones(4, np.int32), "s": np.array(0.1, np.float32), "z": np.array(0, np.int32)}
    consts = {k: v for k, v in params.items() if k != "sc"} | quantized
    graph = onnx_graph(tmp_path, [dq, bn], {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, consts)
    ok, detail = verdict("no_int32_dequantized_params", graph.nodes[1], graph, True)
    assert not ok and detail == "BatchNormalization parameter 'sc' is dequantized from int32"
    plain = onnx_graph(tmp_path, [bn], {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, params)
    assert verdict("no_int32_dequantized_params", plain.nodes[0], plain, True)[0]


@pytest.mark.parametrize(("dtype", "passes"), [(TensorProto.INT8, False), (TensorProto.UINT8, True)])
def test_no_int32_dequantized_params_beside(tmp_path: Path, dtype: int, passes: bool) -> None:
    """Probed on the QNN HTP emulator: a BatchNormalization with an int32 bias runs on the CPU beside int8
    activations, on the HTP beside uint8 ones (tests/vendors/qnn/test_emulator.py)."""
    params = {n: np.ones(4, np.float32) for n in ("sc", "m", "v")}
    nodes = [helper.make_node("DequantizeLinear", ["xq", "s", "xz"], ["x"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["bb"], name="dq_b"),
             helper.make_node("BatchNormalization", ["x", "sc", "bb", "m", "v"], ["y"], name="bn")]
    zero = np.array(0, np.int8 if dtype == TensorProto.INT8 else np.uint8)
    quantized = {"q": np.ones(4, np.int32), "s": np.array(0.1, np.float32), "z": np.array(0, np.int32), "xz": zero}
    graph = onnx_graph(tmp_path, nodes, {"xq": ([1, 4, 2, 2], dtype)}, {"y": ([1, 4, 2, 2], FLOAT)},
                       params | quantized)
    ok, detail = verdict("no_int32_dequantized_params_beside", graph.nodes[2], graph, ["int8", "int16"])
    assert ok == passes
    if not passes:
        assert detail == "BatchNormalization parameter 'bb' is dequantized from int32"


def test_not_quantized_from(tmp_path: Path) -> None:
    graph = hardsigmoid_unit(tmp_path)
    hsig = graph.nodes[1]
    ok, detail = verdict("not_quantized_from", hsig, graph, ["int8", "int16"])
    assert not ok and detail == "HardSigmoid 'hsig' is quantized from int8 (reads DequantizeLinear 'dq')"
    unsigned = hardsigmoid_unit(tmp_path, unsigned=True)
    assert verdict("not_quantized_from", unsigned.nodes[1], unsigned, ["int8", "int16"])[0]
    node, graph = single(tmp_path, "Neg", [[1, 4]], [1, 4])
    assert verdict("not_quantized_from", node, graph, ["int8"]) == (True, "float or other integers")
