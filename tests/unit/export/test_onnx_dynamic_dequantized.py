"""A dynamically quantized ONNX model (onnxruntime's ``quantize_dynamic``) becomes a float model to convert and
quantize again (edgepipe.export.onnx_dynamic_dequantized): ConvInteger, MatMulInteger and DynamicQuantizeLSTM are
read back into Conv, MatMul and LSTM with their weights times their scales.

The float model computes what the shipped int8 model computes (up to its activation rounding) and what the float
model it was quantized from computes (up to its weight rounding)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

HIDDEN, FEATURES, STEPS, CHANNELS = 8, 6, 5, 4


def _float_model() -> Any:
    """x [1, 2, STEPS, FEATURES] -> Conv 3x3 (bias) -> Reshape [STEPS, 1, CHANNELS * FEATURES] -> LSTM -> MatMul
    (bias)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = {"w": rng.normal(0, 0.4, (CHANNELS, 2, 3, 3)), "b": rng.normal(0, 0.1, (CHANNELS,)),
               "W": rng.normal(0, 0.3, (1, 4 * HIDDEN, CHANNELS * FEATURES)),
               "R": rng.normal(0, 0.3, (1, 4 * HIDDEN, HIDDEN)), "B": rng.normal(0, 0.1, (1, 8 * HIDDEN)),
               "m": rng.normal(0, 0.4, (HIDDEN, 3)), "mb": rng.normal(0, 0.1, (3,))}
    initializers = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()]
    initializers += [numpy_helper.from_array(np.array([1, CHANNELS, STEPS, FEATURES], np.int64), "s4"),
                     numpy_helper.from_array(np.array([0, 2, 1, 3], np.int64), "unused"),
                     numpy_helper.from_array(np.array([STEPS, 1, CHANNELS * FEATURES], np.int64), "s3")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["c"], ["t"], perm=[2, 0, 1, 3]),
             helper.make_node("Reshape", ["t", "s3"], ["seq"]),
             helper.make_node("LSTM", ["seq", "W", "R", "B"], ["y", "y_h"], name="lstm", hidden_size=HIDDEN),
             helper.make_node("Squeeze", ["y_h"], ["h"]),
             helper.make_node("MatMul", ["h", "m"], ["p"], name="head"),
             helper.make_node("Add", ["p", "mb"], ["out"])]
    graph = helper.make_graph(nodes, "dynamic", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                               [1, 2, STEPS, FEATURES])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _quantized(model: Any, tmp_path: Path) -> Any:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    onnx.save(model, str(tmp_path / "float.onnx"))
    quantize_dynamic(str(tmp_path / "float.onnx"), str(tmp_path / "int8.onnx"), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["Conv", "MatMul", "LSTM"])
    return onnx.load(str(tmp_path / "int8.onnx"))


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_every_dynamic_op_becomes_its_float_op_and_computes_the_same(tmp_path: Path) -> None:
    import onnx

    from edgepipe.export.onnx_dynamic_dequantized import dequantize_dynamic
    from edgepipe.load.onnx_quantized import quantized_kind

    original = _float_model()
    shipped = _quantized(original, tmp_path)
    assert quantized_kind(shipped).form == "dynamic"
    made = dequantize_dynamic(shipped)
    onnx.checker.check_model(made.model)
    assert made.rewritten == {"ConvInteger": 1, "MatMulInteger": 1, "DynamicQuantizeLSTM": 1}
    ops = [n.op_type for n in made.model.graph.node]
    assert quantized_kind(made.model).form == "float"
    assert ops.count("Conv") == 1 and ops.count("LSTM") == 1 and ops.count("MatMul") == 1
    assert not {"Cast", "DynamicQuantizeLinear", "Floor"} & set(ops)
    x = np.random.default_rng(1).normal(0, 1, (1, 2, STEPS, FEATURES)).astype(np.float32)
    got, int8, reference = _run(made.model, x), _run(shipped, x), _run(original, x)
    scale = float(np.max(np.abs(reference)))
    assert np.max(np.abs(got - reference)) < 0.03 * scale  # weight rounding only
    assert np.max(np.abs(got - int8)) < 0.05 * scale  # the shipped model's activation rounding on top


def test_a_chain_of_another_shape_is_refused_by_name(tmp_path: Path) -> None:
    from edgepipe.export.onnx_dynamic_dequantized import NotDequantizable, dequantize_dynamic

    shipped = _quantized(_float_model(), tmp_path)
    product = next(n.output[0] for n in shipped.graph.node if n.op_type == "MatMulInteger")
    cast = next(n for n in shipped.graph.node if n.op_type == "Cast" and n.input[0] == product)
    cast.op_type = "Identity"  # the integer product is no longer cast to float before its scale
    del cast.attribute[:]
    with pytest.raises(NotDequantizable, match="not cast to float"):
        dequantize_dynamic(shipped)
