"""One test per constraint of edgepipe/rules/qnn_units.py: a graph that fails it and one that passes.

The placements these rules predict are checked against the HTP emulator in tests/verify/test_qnn.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import load_constraints
from tests.support.graphs import onnx_graph

FLOAT = TensorProto.FLOAT
LSTM_DEFAULTS, GRU_DEFAULTS = ["sigmoid", "tanh", "tanh"], ["sigmoid", "tanh"]


def verdict(name: str, node: OpNode, graph: OpGraph, param: Any) -> tuple[bool, str]:
    return load_constraints()[name](node, graph, param)


def recurrent(tmp: Path, op: str, lengths: str | None = None, directions: int = 1,
              **attrs: Any) -> tuple[OpNode, OpGraph]:
    """One LSTM or GRU (4 units, 3 steps of 2 features, batch 2); ``lengths``: no sequence_lens (None), a graph
    input ("input") or a constant ("constant")."""
    gates = 4 if op == "LSTM" else 3
    consts = {"W": np.zeros((directions, gates * 4, 2), np.float32),
              "R": np.zeros((directions, gates * 4, 4), np.float32)}
    inputs: dict[str, tuple[list[Any], int]] = {"x": ([3, 2, 2], FLOAT)}
    if lengths == "input":
        inputs["lengths"] = ([2], TensorProto.INT32)
    elif lengths == "constant":
        consts["lengths"] = np.array([3, 3], np.int32)
    node = helper.make_node(op, ["x", "W", "R", "", "lengths" if lengths else "", "h0"], ["y"], name=op.lower(),
                            hidden_size=4, direction="bidirectional" if directions == 2 else "forward", **attrs)
    graph = onnx_graph(tmp, [node], {**inputs, "h0": ([directions, 2, 4], FLOAT)},
                       {"y": ([3, directions, 2, 4], FLOAT)}, consts, opset=14)
    return graph.nodes[0], graph


def test_recurrent_activations_spelled(tmp_path: Path) -> None:
    """madmom's LSTMs name their (default) activations as ONNX spells them: the QNN EP sends them to the CPU."""
    node, graph = recurrent(tmp_path, "LSTM", activations=["Sigmoid", "Tanh", "Tanh"])
    assert verdict("recurrent_activations_spelled", node, graph, LSTM_DEFAULTS) == (
        False, "LSTM activations Sigmoid, Tanh, Tanh are not spelled sigmoid, tanh, tanh")
    node, graph = recurrent(tmp_path, "GRU", directions=2, activations=["sigmoid", "tanh", "relu", "tanh"])
    assert not verdict("recurrent_activations_spelled", node, graph, GRU_DEFAULTS)[0]
    passing = [("LSTM", 1, None), ("LSTM", 1, LSTM_DEFAULTS), ("GRU", 2, GRU_DEFAULTS * 2),
               ("LSTM", 2, [*LSTM_DEFAULTS, "sigmoid", "relu", "tanh"])]  # the EP skips the reverse cell's name
    for op, directions, names in passing:
        node, graph = recurrent(tmp_path, op, directions=directions, **({"activations": names} if names else {}))
        defaults = LSTM_DEFAULTS if op == "LSTM" else GRU_DEFAULTS
        assert verdict("recurrent_activations_spelled", node, graph, defaults)[0], (op, names)


def test_no_clip(tmp_path: Path) -> None:
    node, graph = recurrent(tmp_path, "GRU", clip=3.0)
    assert verdict("no_clip", node, graph, True) == (False, "GRU clips at 3")
    assert verdict("no_clip", node, graph, False)[0]
    no_clips: list[dict[str, Any]] = [{}, {"clip": 0.0}]
    for attrs in no_clips:
        node, graph = recurrent(tmp_path, "LSTM", **attrs)
        assert verdict("no_clip", node, graph, True) == (True, "no clip")


def test_constant_sequence_lens(tmp_path: Path) -> None:
    node, graph = recurrent(tmp_path, "GRU", lengths="input")
    assert verdict("constant_sequence_lens", node, graph, True) == (
        False, "GRU sequence_lens 'lengths' is computed at run time")
    assert verdict("constant_sequence_lens", node, graph, False)[0]
    node, graph = recurrent(tmp_path, "LSTM", lengths="constant")
    assert verdict("constant_sequence_lens", node, graph, True) == (True, "constant sequence_lens")
    node, graph = recurrent(tmp_path, "LSTM")  # absent: the reader drops the empty input, the state follows it
    assert verdict("constant_sequence_lens", node, graph, True) == (True, "no sequence_lens")
