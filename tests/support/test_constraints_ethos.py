"""One test per constraint of edgepipe/rules/integer_tensors.py, and of the Ethos-U rules in
constraints/tensors.py: a graph that fails it and one that passes. The placements and compile failures these rules
predict are checked against Vela in tests/verify/test_vela.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import load_constraints
from tests.support.graphs import onnx_graph, single


def verdict(name: str, node: OpNode, graph: OpGraph, param: Any) -> tuple[bool, str]:
    return load_constraints()[name](node, graph, param)


def test_input_bits_max(tmp_path: Path) -> None:
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


def test_nonempty_constant_inputs(tmp_path: Path) -> None:
    """A RESHAPE to a scalar reads an empty new-shape constant, which Vela refuses (held-out PLCMOS v2)."""
    node, graph = single(tmp_path, "Reshape", [[1, 1]], [], consts={"shape": np.zeros((0,), np.int64)})
    assert verdict("nonempty_constant_inputs", node, graph, True) == (
        False, "Reshape reads constant 'shape' of shape [0], no elements")
    assert verdict("nonempty_constant_inputs", node, graph, False) == (True, "not required")
    node, graph = single(tmp_path, "Reshape", [[1, 1]], [1], consts={"shape": np.array([1], np.int64)})
    assert verdict("nonempty_constant_inputs", node, graph, True) == (True, "no empty constant")
