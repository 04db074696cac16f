"""One test per constraint of edgepipe/rules/tensors.py: a graph that fails it and one that passes.

The module holds rules on dtypes, integer widths, ranks, dimensions, sizes and batch of feature maps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

from tests.models.graphs import conv, onnx_graph, single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def test_dtypes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    ok, detail = verdict("dtypes", node, graph, ["int8", "int16"])
    assert not ok and "is float32, not one of int8, int16" in detail
    assert verdict("dtypes", node, graph, ["float32"])[0]


def test_dtypes_not_in(tmp_path: Path) -> None:
    """The QNN HTP emulator runs a Cast that reads or writes int8, int16 or uint16 on the CPU, one of int32, uint8,
    bool or float16 on the HTP (probed from graph inputs and inside the graph; NVIDIA MarbleNet's int16 audio)."""
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4], dtype=TensorProto.INT16)
    ok, detail = verdict("dtypes_not_in", node, graph, ["int8", "int16"])
    assert not ok and detail == "Relu feature map 'x0' is int16"
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("dtypes_not_in", node, graph, ["int8", "int16"]) == (True, "dtypes ok")


def test_input_bits_max(tmp_path: Path) -> None:
    """Vela 5.2.0 accepts int64 feature maps for the Ethos-U85 in its operator checks, then finds no OFM microblock
    for an element-wise op or CAST reading one ("Could not find a valid OFM microblock for Greater with 64-bit
    input.") and the whole compile fails; a CAST to int64, and ops that only move int64 data (RESHAPE,
    CONCATENATION, GATHER's indices), compile (probe graphs in tests/vendors/test_vela.py)."""
    node, graph = single(tmp_path, "Less", [[1, 16], [1, 16]], [1, 16], dtype=TensorProto.INT64)
    ok, detail = verdict("input_bits_max", node, graph, 32)
    assert not ok and detail == "Less reads 'x0' (int64, 64 bits) > 32 bits"
    assert verdict("input_bits_max", node, graph, 64)[0]
    node, graph = single(tmp_path, "Add", [[1, 16]], [1, 16], dtype=TensorProto.INT32,
                         consts={"one": np.array([1], np.int32)})
    assert verdict("input_bits_max", node, graph, 32) == (True, "integer inputs at most 32 bits")


def test_input_bits_max_ignores_the_output_and_constant_inputs(tmp_path: Path) -> None:
    cast = helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.INT64)
    graph = onnx_graph(tmp_path, [cast], {"x": ([1, 16], TensorProto.INT32)}, {"y": ([1, 16], TensorProto.INT64)})
    node = graph.nodes[0]
    assert node.outputs[0].dtype == "int64" and verdict("input_bits_max", node, graph, 32)[0]
    node, graph = single(tmp_path, "Gather", [[1, 16]], [1, 16, 8], dtype=TensorProto.FLOAT,
                         consts={"ids": np.zeros((1, 16), np.int64)})
    assert verdict("input_bits_max", node, graph, 32)[0]  # constant int64 indices


def test_static_shapes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [["n", 4]], ["n", 4])
    ok, detail = verdict("static_shapes", node, graph, True)
    assert not ok and "dynamic shape (None, 4)" in detail
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("static_shapes", node, graph, True)[0]


def test_no_scalar_feature_maps(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMax", [[1, 4]], [], keepdims=0)
    ok, detail = verdict("no_scalar_feature_maps", node, graph, True)
    assert not ok and detail == "ReduceMax feature map 'y' is a scalar (rank 0)"
    assert verdict("no_scalar_feature_maps", node, graph, False)[0]
    node, graph = single(tmp_path, "Add", [[1, 4]], [1, 4], consts={"one": np.array(1.0, np.float32)})
    assert verdict("no_scalar_feature_maps", node, graph, True)[0]  # a constant scalar operand is fine


def test_max_rank(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 2, 3, 4, 5]], [1, 2, 3, 4, 5])
    assert verdict("max_rank", node, graph, 4) == (False, "Relu rank 5 > 4")
    assert verdict("max_rank", node, graph, 5)[0]


def test_max_squeezed_rank(tmp_path: Path) -> None:
    """rknn-toolkit2's squeeze_to_4d rewrites drop the size-1 dimensions."""
    node, graph = single(tmp_path, "Relu", [[1, 2, 4, 8, 8]], [1, 2, 4, 8, 8])
    assert verdict("max_squeezed_rank", node, graph, 4) == (True, "4 dimensions larger than 1")
    node, graph = single(tmp_path, "Relu", [[2, 2, 4, 8, 8]], [2, 2, 4, 8, 8])
    assert verdict("max_squeezed_rank", node, graph, 4) == (False, "Relu has 5 dimensions larger than 1 > 4")


def test_max_dim(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 70000]], [1, 70000])
    assert verdict("max_dim", node, graph, 65536) == (False, "Relu dimension 70000 > 65536")
    assert verdict("max_dim", node, graph, 70000)[0]


def test_batch_one(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, batch=2)
    ok, detail = verdict("batch_one", node, graph, True)
    assert not ok and detail.startswith("Conv batch 2 != 1")
    node, graph = conv(tmp_path, batch=1)
    assert verdict("batch_one", node, graph, True)[0]


def test_max_tensor_bytes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Softmax", [[1, 20000]], [1, 20000], dtype=FLOAT)
    assert verdict("max_tensor_bytes", node, graph, 16000) == (False, "Softmax feature map of 80000 bytes > 16000")
    node, graph = single(tmp_path, "Softmax", [[1, 1000]], [1, 1000], dtype=FLOAT)
    assert verdict("max_tensor_bytes", node, graph, 16000)[0]


def test_variable_data_dtypes(tmp_path: Path) -> None:
    from edgepipe.graph.tflite_reader import read_tflite
    from tests.models.probes.tflite import variable_tflite

    int8 = read_tflite(variable_tflite(tmp_path / "int8.tflite"))
    flt = read_tflite(variable_tflite(tmp_path / "float.tflite", int8_state=False))
    allowed = ["int8", "int16"]
    for op in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"):
        assert verdict("variable_data_dtypes", next(n for n in int8.nodes if n.op == op), int8, allowed)[0]
        ok, detail = verdict("variable_data_dtypes", next(n for n in flt.nodes if n.op == op), flt, allowed)
        assert not ok and "is float32, not one of int8, int16" in detail, detail
