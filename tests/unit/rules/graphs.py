"""What the rule tests share: a constraint's verdict by name, and small graphs more than one rule module reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, load_constraints
from tests.models.graphs import onnx_graph

INT8 = TensorProto.INT8


def verdict(name: str, node: OpNode, graph: OpGraph, param: Any) -> Verdict:
    """The registered constraint ``name`` on ``node`` with the profile value ``param``."""
    return load_constraints()[name](node, graph, param)


def hardsigmoid_unit(tmp_path: Path, unsigned: bool = False) -> OpGraph:
    """DequantizeLinear -> HardSigmoid -> QuantizeLinear, plus the same DQ feeding a Relu; int8 activations, or
    uint8 with ``unsigned``."""
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"], name="dq"),
             helper.make_node("HardSigmoid", ["f"], ["h"], name="hsig"),
             helper.make_node("Relu", ["f"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["h", "s", "z"], ["y"], name="q_after"),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["y2"], name="q_relu")]
    dtype = TensorProto.UINT8 if unsigned else INT8
    consts = {"s": np.array(0.1, np.float32), "z": np.array(128 if unsigned else 0, np.uint8 if unsigned else np.int8)}
    return onnx_graph(tmp_path, nodes, {"q": ([1, 4], dtype)}, {"y": ([1, 4], dtype), "y2": ([1, 4], dtype)}, consts)


def squeeze_if_graph(tmp_path: Path, columns: int = 16) -> OpGraph:
    """tests/models/graphs.squeeze_if_onnx read back: an If on static shapes, then a MatMul of ``columns``."""
    from edgepipe.graph.onnx_reader import read_onnx
    from tests.models.graphs import squeeze_if_onnx

    return read_onnx(squeeze_if_onnx(tmp_path / f"squeeze_if_{columns}.onnx", columns=columns))
