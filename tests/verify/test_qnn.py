"""Agreement with the Qualcomm HTP emulator (onnxruntime-qnn 2.7.0) node by node, and HTP vs CPU outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.verify import qnn


def _float_model(path: Path, extra_op: str | None = None) -> Path:
    """Conv -> Relu -> [extra op] -> GlobalAveragePool -> Flatten -> Gemm, 1x3x16x16 input."""
    import onnx

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.normal(0, 0.3, (8, 4)).astype(np.float32), "fc")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu")]
    last = "r"
    if extra_op:
        nodes.append(helper.make_node(extra_op, ["r"], ["e"], name="extra"))
        last = "e"
    nodes += [helper.make_node("GlobalAveragePool", [last], ["p"], name="pool"),
              helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
              helper.make_node("Gemm", ["f", "fc"], ["y"], name="fc")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def _qdq(float_path: Path, out: Path) -> Path:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(1)

    class Reader(CalibrationDataReader):
        def __init__(self) -> None:
            self.it = iter([{"x": rng.random((1, 3, 16, 16), dtype=np.float32)} for _ in range(4)])

        def get_next(self) -> dict | None:
            return next(self.it, None)

    quantize_static(str(float_path), str(out), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    return out


def test_qdq_model_agrees_with_htp_emulator_and_outputs_match(tmp_path: Path) -> None:
    model = _qdq(_float_model(tmp_path / "f.onnx"), tmp_path / "q.onnx")
    graph = read_graph(model)
    report = check_graph(graph, load_profile("mobile-npu"))
    # the graph-input Quantize and graph-output Dequantize stay on the CPU, everything else on the HTP
    assert report.cpu_ops == {"QuantizeLinear": 1, "DequantizeLinear": 1}
    result = qnn.verify(report, model, graph)
    assert result.status == "ran", result.detail
    assert result.compared == report.nodes and result.agree == result.compared, result.disagreements
    assert result.extra["htp_vs_cpu_rel_diff"] < 0.1
    assert result.extra["htp_vs_cpu_same_top1"] == 1.0


@pytest.mark.parametrize(("op", "placement"), [("Softplus", "accelerator"), ("Shrink", "cpu")])
def test_float_op_placement_agrees_with_htp_emulator(tmp_path: Path, op: str, placement: str) -> None:
    model = _float_model(tmp_path / f"{op}.onnx", extra_op=op)
    graph = read_graph(model)
    report = check_graph(graph, load_profile("mobile-npu"))
    assert next(v for v in report.node_verdicts if v.name == "extra").placement == placement
    result = qnn.verify(report, model, graph, run=False)
    assert result.agree == result.compared == report.nodes, result.disagreements
