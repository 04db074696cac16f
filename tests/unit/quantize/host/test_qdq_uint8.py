"""The build's QDQ model with uint8 activations: the same integers (exactly), fused by ONNX Runtime on x86."""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from edgepipe.quantize.host.qdq_uint8 import uint8_activations

_RNG = np.random.default_rng(3)
_SAMPLES = [(_RNG.standard_normal((1, 2, 5, 5)) * 3).astype(np.float32) for _ in range(8)]


def _hardswish_between_convs(path):
    """conv → x · clip(x + 3, 0, 6) / 6 (PaddlePaddle's HardSwish export) → conv."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 2, 1, 1)).astype(np.float32), "w1"),
             numpy_helper.from_array(rng.standard_normal((3, 4, 3, 3)).astype(np.float32), "w2")]
    inits += [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("three", 3.0), ("zero", 0.0), ("six", 6.0), ("six_div", 6.0))]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"]),
             helper.make_node("Add", ["c", "three"], ["a"]),
             helper.make_node("Clip", ["a", "zero", "six"], ["k"]),
             helper.make_node("Mul", ["c", "k"], ["m"]),
             helper.make_node("Div", ["m", "six_div"], ["h"]),
             helper.make_node("Conv", ["h", "w2"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "hs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 5, 5])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


class _Reader(CalibrationDataReader):
    def __init__(self) -> None:
        self._it = iter(_SAMPLES)

    def get_next(self):
        x = next(self._it, None)
        return None if x is None else {"x": x}


def _session(path, *, exact=False, optimized=None):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if exact:
        options.add_session_config_entry("session.disable_quant_qdq", "1")
    if optimized is not None:
        options.optimized_model_filepath = str(optimized)
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _int8_qdq(tmp_path):
    source = _hardswish_between_convs(tmp_path / "hs.onnx")
    out = tmp_path / "hs_int8.onnx"
    quantize_static(str(source), str(out), _Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    return out


def test_uint8_form_computes_the_same_integers_and_folds_the_constant_division(tmp_path):
    qdq = _int8_qdq(tmp_path)
    u8 = uint8_activations(qdq, tmp_path / "hs_u8.onnx")
    assert u8 is not None
    model = onnx.load(str(u8))
    assert "Div" not in [n.op_type for n in model.graph.node]  # DQ → Div(6) → Q folded: same integers
    weights = {n.input[1] for n in model.graph.node if n.op_type == "Conv"}
    weight_dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.output[0] in weights]
    types = {t.name: t.data_type for t in model.graph.initializer}
    assert weight_dq and all(types[n.input[0]] == onnx.TensorProto.INT8 for n in weight_dq)  # weights stay int8
    for x in _SAMPLES[:3]:
        want = _session(qdq, exact=True).run(None, {"x": x})[0]
        got = _session(u8, exact=True).run(None, {"x": x})[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_onnx_runtime_fuses_the_uint8_form_but_not_the_int8_one(tmp_path):
    qdq = _int8_qdq(tmp_path)
    u8 = uint8_activations(qdq, tmp_path / "hs_u8.onnx")
    ops = {}
    for name, path in (("int8", qdq), ("uint8", u8)):
        _session(path, optimized=tmp_path / f"{name}_opt.onnx")
        ops[name] = Counter(n.op_type for n in onnx.load(str(tmp_path / f"{name}_opt.onnx")).graph.node)
    assert ops["uint8"]["QLinearConv"] == 2 and ops["uint8"]["Conv"] == 0
    assert ops["uint8"]["QLinearAdd"] == ops["uint8"]["QLinearMul"] == 1 and ops["uint8"]["DequantizeLinear"] == 1
    # x86 default: int8-activation QDQ groups stay dequantize → float op → quantize
    assert ops["int8"]["QLinearMul"] == 0 and ops["int8"]["Mul"] == ops["int8"]["Div"] == 1
    assert ops["int8"]["DequantizeLinear"] > 1


def test_model_without_int8_activations_has_no_uint8_form(tmp_path, tiny):
    assert uint8_activations(tiny["onnx"], tmp_path / "u8.onnx") is None
    assert not (tmp_path / "u8.onnx").exists()
