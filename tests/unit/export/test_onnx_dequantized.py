"""The float reference of a shipped QDQ model (edgepipe.export.onnx_dequantized) computes the network the integers
stand for: a Q/DQ pair whose zero point is its type's lowest value is the ReLU an exporter folded into it (a
shipped ResNet copy-detection model has no Relu node at all), so it becomes a Relu; the reference without it
overflowed to NaN."""

from __future__ import annotations

import numpy as np
import pytest

from tests.models.probes.onnx_files import ort_outputs

CHANNELS = 4


def _folded_relu_qdq(zero_type: int | None, zero: int) -> object:
    """x [1, 4, 6, 6] -> Conv -> Q(scale 0.05, ``zero`` of ``zero_type``; none when None) -> DQ -> Conv -> y: a
    network whose only ReLUs are the Q's clamp at its lowest integer."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [rng.normal(0, 0.5, (CHANNELS, CHANNELS, 3, 3)).astype(np.float32) for _ in range(2)]
    inits = [numpy_helper.from_array(w, f"w{k}") for k, w in enumerate(weights)]
    inits.append(numpy_helper.from_array(np.array(0.05, np.float32), "scale"))
    q_inputs = ["h", "scale"]
    if zero_type is not None:
        inits.append(helper.make_tensor("zero", zero_type, [], [zero]))
        q_inputs.append("zero")
    nodes = [helper.make_node("Conv", ["x", "w0"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", q_inputs, ["hq"]),
             helper.make_node("DequantizeLinear", ["hq", *q_inputs[1:]], ["hd"]),
             helper.make_node("Conv", ["hd", "w1"], ["y"], pads=[1, 1, 1, 1])]
    shape = [1, CHANNELS, 6, 6]
    graph = helper.make_graph(nodes, "folded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(("zero_type", "zero", "relu"), [(2, 0, True), (3, -128, True), (None, 0, True),
                                                         (3, 0, False), (2, 128, False)])
def test_a_pair_at_its_lowest_integer_keeps_the_relu_it_applies(zero_type: int | None, zero: int,
                                                                relu: bool) -> None:
    from edgepipe.export.onnx_dequantized import strip_qdq

    model = _folded_relu_qdq(zero_type, zero)
    reference, weights, pairs, relus = strip_qdq(model)
    assert (weights, pairs, relus) == (0, 1, int(relu))
    assert [n.op_type for n in reference.graph.node] == ["Conv", *(["Relu"] if relu else []), "Conv"]
    x = np.random.default_rng(1).normal(0, 1, (1, CHANNELS, 6, 6)).astype(np.float32)
    shipped, floats = ort_outputs(model, {"x": x})[0], ort_outputs(reference, {"x": x})[0]
    # the reference differs from the shipped model only by the activation rounding (half a step, 0.025)
    cos = float(np.dot(shipped.ravel(), floats.ravel()) / np.linalg.norm(shipped) / np.linalg.norm(floats))
    assert cos > 0.999
