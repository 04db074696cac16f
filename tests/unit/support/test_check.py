"""The checker: per-node placement with reasons, partition semantics, totals and peak memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.errors import ModelLoadError, ProfileError
from edgepipe.graph.opgraph import OpGraph
from edgepipe.support import check_graph, check_model
from edgepipe.support.placement import peak_activation_bytes
from edgepipe.targets import load_profile
from edgepipe.targets.profile import OpTable, TargetProfile
from tests.models.graphs import onnx_graph

FLOAT = TensorProto.FLOAT


def _profile(partition: str, table: dict) -> TargetProfile:
    return TargetProfile(name="t", description="t", device_class="npu", partition=partition,
                         deploy_formats=["onnx"], onnx=OpTable.model_validate(table))


def _chain(tmp: Path) -> OpGraph:
    """x -> Conv(stride 1) -> Relu -> Conv(stride 5) -> Relu -> y, 16x16, 4 channels."""
    w = np.ones((4, 4, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], name="c1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a"], ["b"], name="r1"),
             helper.make_node("Conv", ["b", "w"], ["c"], name="c2", kernel_shape=[3, 3], strides=[5, 5]),
             helper.make_node("Relu", ["c"], ["y"], name="r2")]
    return onnx_graph(tmp, nodes, {"x": ([1, 4, 16, 16], FLOAT)}, {"y": ([1, 4, 3, 3], FLOAT)}, {"w": w})


TABLE = {"ops": {"Conv": {"stride_max": 3}, "Relu": {}}}


def test_node_placement_names_constraint_and_values(tmp_path: Path) -> None:
    report = check_graph(_chain(tmp_path), _profile("any", TABLE))
    placements = [(v.name, v.placement) for v in report.node_verdicts]
    assert placements == [("c1", "accelerator"), ("r1", "accelerator"), ("c2", "cpu"), ("r2", "accelerator")]
    failed = report.node_verdicts[2].failed[0]
    assert (failed.constraint, failed.detail) == ("stride_max", "Conv stride 5 > 3")
    assert failed.rule == "Stride in height and width is each at most 3."
    assert (report.partitions, report.transitions) == (2, 2)
    assert report.cpu_ops == {"Conv": 1}


def test_macs_and_shares(tmp_path: Path) -> None:
    report = check_graph(_chain(tmp_path), _profile("any", TABLE))
    c1, c2 = 16 * 16 * 4 * 36, 3 * 3 * 4 * 36  # output elements x (Cin x kh x kw)
    assert report.macs == c1 + c2 and report.accelerator_macs == c1
    assert report.mac_share == pytest.approx(c1 / (c1 + c2)) and report.node_share == 0.75


def test_prefix_partitioning_sends_everything_after_first_cpu_op_to_cpu(tmp_path: Path) -> None:
    report = check_graph(_chain(tmp_path), _profile("prefix", TABLE))
    assert [v.placement for v in report.node_verdicts] == ["accelerator", "accelerator", "cpu", "cpu"]
    last = report.node_verdicts[3].failed[0]
    assert last.constraint == "prefix_partition" and "after the first unsupported op (Conv 'c2')" in last.detail
    assert (report.partitions, report.transitions) == (1, 1)


def test_unlisted_op_runs_on_cpu(tmp_path: Path) -> None:
    report = check_graph(_chain(tmp_path), _profile("any", {"ops": {"Conv": {}}}))
    relu = report.node_verdicts[1]
    assert relu.placement == "cpu" and relu.failed[0].constraint == "op_listed"
    assert relu.failed[0].detail == "Relu is not supported by the accelerator"


def test_skip_exempts_an_op_from_a_generic_constraint(tmp_path: Path) -> None:
    table = {"generic": {"stride_max": 3}, "ops": {"Conv": {"skip": ["stride_max"]}, "Relu": {}}}
    report = check_graph(_chain(tmp_path), _profile("any", table))
    assert all(v.placement == "accelerator" for v in report.node_verdicts)


def test_all_ops_table_places_everything(tmp_path: Path) -> None:
    report = check_graph(_chain(tmp_path), load_profile("gpu-reference"))
    assert report.accelerator_nodes == report.nodes == 4 and report.partitions == 1 and report.transitions == 0


def test_peak_activation_memory(tmp_path: Path) -> None:
    graph = _chain(tmp_path)
    # c1 runs while x (4 KiB) is live and writes a (4 KiB): 8 KiB is the peak (float32, 1x4x16x16).
    assert peak_activation_bytes(graph) == 2 * 4 * 16 * 16 * 4
    tiny_sram = TargetProfile.model_validate({**_profile("any", TABLE).model_dump(), "memory": {"sram_bytes": 1024}})
    report = check_graph(graph, tiny_sram)
    assert report.fits_sram is False and report.sram_bytes == 1024


def test_wrong_format_for_target_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="has no op table for onnx graphs.*Check a tflite artifact"):
        check_graph(_chain(tmp_path), load_profile("ethos-u55"))


def test_unreadable_or_unknown_model_file(tmp_path: Path) -> None:
    keras_file = tmp_path / "m.keras"
    keras_file.write_bytes(b"x")
    with pytest.raises(ModelLoadError, match="reads .onnx or .tflite"):
        check_model(keras_file, load_profile("host-cpu"))
    with pytest.raises(ModelLoadError, match="not found"):
        check_model(tmp_path / "missing.onnx", load_profile("host-cpu"))


def test_tflite_probe_on_ethos_u55(probe_tflite: dict[str, Path]) -> None:
    report = check_model(probe_tflite["int8"], load_profile("ethos-u55"))
    cpu = {v.op: v.failed[0].detail for v in report.node_verdicts if v.placement == "cpu"}
    assert cpu == {"CONV_2D": "CONV_2D stride 4 > 3 with same padding"}
    assert report.nodes == 7 and report.partitions == 2


def test_float_tflite_on_edge_tpu_is_all_cpu(probe_tflite: dict[str, Path]) -> None:
    report = check_model(probe_tflite["float"], load_profile("edge-tpu"))
    assert report.accelerator_nodes == 0 and report.partitions == 0
    assert "float32" in report.node_verdicts[0].failed[0].detail


def test_weight_dequantize_follows_its_reader_in_qdq_node_units(tmp_path: Path) -> None:
    consts = {"wq": np.ones((4, 4, 1, 1), np.int8), "s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}
    nodes = [helper.make_node("DequantizeLinear", ["wq", "s", "z"], ["w"], name="dq_w"),
             helper.make_node("Conv", ["x", "w"], ["y"], name="conv", strides=[5, 5])]
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4, 10, 10], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, consts)
    table = {"qdq_node_units": True, "ops": {"DequantizeLinear": {}, "Conv": {"stride_max": 3}}}
    dq = check_graph(graph, _profile("any", table)).node_verdicts[0]
    assert dq.placement == "cpu" and dq.failed[0].constraint == "qdq_node_unit"
    assert dq.failed[0].detail == "DequantizeLinear follows Conv 'conv' onto the CPU"
    table["ops"]["Conv"] = {}
    assert check_graph(graph, _profile("any", table)).node_verdicts[0].placement == "accelerator"


def test_the_dequantize_into_a_cpu_node_unit_follows_it_after_the_listed_ops(tmp_path: Path) -> None:
    """mobile-npu: a BatchNormalization with int32 parameters runs on the CPU with its output Q; the DQ before it
    joins it after a Flatten (in qdq_unit_inputs_after), not after a Squeeze (the Conv's NHWC layout passes it:
    qdq_unit_inputs_layout_ops); without either list it never does."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import norm_after_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    profile = load_profile("mobile-npu")
    for before, expected in (("Flatten", "cpu"), ("Squeeze", "accelerator")):
        model = qdq_onnx(norm_after_onnx(tmp_path / f"{before}.onnx", before), tmp_path / f"{before}_q.onnx",
                         (1, 3, 1, 16))
        graph = read_graph(model)
        verdicts = {v.name: v for v in check_graph(graph, profile).node_verdicts}
        assert verdicts["norm"].placement == "cpu" and verdicts["u_DequantizeLinear"].placement == expected
        if expected == "cpu":
            assert verdicts["u_DequantizeLinear"].failed[0].detail == (
                "DequantizeLinear opens the node unit of BatchNormalization 'norm', which runs on the CPU")
            table = profile.onnx.model_copy(update={"qdq_unit_inputs_after": [], "qdq_unit_inputs_layout_ops": []})
            unlisted = profile.model_copy(update={"onnx": table})
            assert {v.name: v.placement for v in check_graph(graph, unlisted).node_verdicts}[
                "u_DequantizeLinear"] == "accelerator"


@pytest.mark.parametrize(("writer", "dequantize"), [("Gemm", "cpu"), ("Mul", "cpu"), ("MaxPool", "accelerator")])
def test_the_dequantize_into_a_cpu_norm_joins_it_unless_an_htp_layout_op_wrote_the_tensor(
        tmp_path: Path, writer: str, dequantize: str) -> None:
    """mobile-npu (qdq_unit_inputs_layout_ops): opal-net's 2-D norms after a Gemm or a Mul (no Conv before them)
    take their DequantizeLinear onto the CPU; after a MaxPool (an NHWC op on the HTP) it stays."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import norm_behind_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    shape = (1, 4, 4, 4) if writer == "MaxPool" else (1, 16)
    model = qdq_onnx(norm_behind_onnx(tmp_path / "f.onnx", writer, shape), tmp_path / "q.onnx", shape)
    verdicts = {v.name: v for v in check_graph(read_graph(model), load_profile("mobile-npu")).node_verdicts}
    assert verdicts["norm"].placement == "cpu" and verdicts["u_DequantizeLinear"].placement == dequantize


def test_an_activation_between_a_cpu_op_and_its_quantize_runs_on_the_cpu(tmp_path: Path) -> None:
    """mobile-npu: tf2onnx's PReLU (pyapetnet, held out) is Relu(x) + alpha * Relu(Neg(x)); the quantized
    Neg runs on the CPU, and the Relu between it and its QuantizeLinear (one node unit) runs there with both."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import prelu_written_out_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    model = qdq_onnx(prelu_written_out_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 4, 8, 8))
    verdicts = {v.name: v for v in check_graph(read_graph(model), load_profile("mobile-npu")).node_verdicts}
    assert verdicts["neg"].placement == verdicts["relu_neg"].placement == "cpu"
    assert verdicts["negr_QuantizeLinear"].placement == "cpu"
    assert verdicts["relu_pos"].placement == "accelerator"
    assert verdicts["relu_neg"].failed[0].detail.startswith("Relu is part of the node unit of Neg 'neg'")


@pytest.mark.parametrize("is_inf", [True, False])
def test_a_float64_tensor_between_the_htp_and_the_cpu_is_a_compile_failure(tmp_path: Path, is_inf: bool) -> None:
    """mobile-npu (float64_partition_io_fails): DeepLC casts a feature to float64 for an IsInf (CPU): the Cast's
    float64 output leaves the HTP's partition and the session fails; cast back to float32 on the HTP it stays inside;
    the edge boxes have no such rule."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import double_check_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    model = qdq_onnx(double_check_onnx(tmp_path / "f.onnx", is_inf), tmp_path / "q.onnx", (1, 16))
    report = check_graph(read_graph(model), load_profile("mobile-npu"))
    blockers = [b for b in report.compile_blockers if b.constraint == "float64_partition_io"]
    assert [b.node for b in blockers] == (["to_double"] if is_inf else [])
    assert not check_graph(read_graph(model), load_profile("rk3588")).compile_blockers


def test_a_fused_gelu_follows_the_op_before_it_onto_the_cpu(tmp_path: Path) -> None:
    """rk3588 (fused_gelu_follows_input): the GELU after a ConvTranspose of stride 5 runs on the CPU with it; after
    stride 4 on the NPU; rk3576 (no such flag, every stride on the NPU) keeps it on the NPU."""
    from tests.models.probes.convolutions import transposed_gelu_onnx

    for target, stride, gelu in (("rk3588", 5, "cpu"), ("rk3588", 4, "accelerator"), ("rk3576", 5, "accelerator")):
        report = check_model(transposed_gelu_onnx(tmp_path / f"{target}{stride}.onnx", stride), load_profile(target))
        placed = {v.name: v for v in report.node_verdicts}
        assert {placed[n].placement for n in ("gelu_div", "gelu_erf", "gelu_add", "gelu_mul", "gelu_half")} == {gelu}
        assert placed["conv"].placement == "accelerator"
        if gelu == "cpu":
            assert placed["gelu_erf"].failed[0].detail == (
                "Erf is part of a GELU after ConvTranspose 'up', which runs on the CPU")


def test_a_conv1d_input_reshaped_twice_is_judged_as_the_one_reshape_the_toolkit_makes(tmp_path: Path) -> None:
    """rk3588 (reshape_layout_aligned): an Unsqueeze read only by a Reshape is judged by the shape the two end
    with, as the toolkit merges them: [1, 500, 1] -> [1, 1, 1, 500] reads a plane of 500 elements (CPU), of 496 on
    the NPU; the second reshape only moves axes of size 1."""
    from tests.models.probes.convolutions import conv1d_input_onnx

    for length, expected in ((500, "cpu"), (496, "accelerator")):
        report = check_model(conv1d_input_onnx(tmp_path / f"c{length}.onnx", length), load_profile("rk3588"))
        placed = {v.name: v for v in report.node_verdicts}
        assert placed["unsqueeze"].placement == expected and placed["reshape"].placement == "accelerator"
    cpu = check_model(conv1d_input_onnx(tmp_path / "c500.onnx", 500), load_profile("rk3588")).node_verdicts[0]
    assert cpu.failed[0].detail == ("gives [1, 500, 1] a fourth axis with the reshape after it: an H x W plane of "
                                    "500 elements, not a multiple of 16")


def test_small_dense_layers_take_the_reshape_before_them_in(tmp_path: Path) -> None:
    """rk3588: a reshape to one row read only by a Gemm or a MatMul of constant weights runs with it on the NPU,
    however few its elements (reshape_layout_aligned); a MatMul of 3 columns writing a graph output runs on the CPU
    as a Gemm does (output_columns_multiple)."""
    from tests.models.probes.heads import small_dense_heads_onnx

    report = check_model(small_dense_heads_onnx(tmp_path / "heads.onnx"), load_profile("rk3588"))
    placed = {v.name: v.placement for v in report.node_verdicts}
    assert placed["squeeze"] == placed["flatten"] == placed["dense"] == placed["gemm"] == "accelerator"
    assert placed["head"] == "cpu"


@pytest.mark.parametrize(("layers", "side_input"), [(3, False), (1, False), (3, True)])
def test_constant_dequantizations_no_node_unit_takes_form_partitions_of_their_own(
        tmp_path: Path, layers: int, side_input: bool) -> None:
    """mobile-npu (standalone_constant_dequantize, input_less_groups): behind a Scaler whose output has no shape,
    the float MatMul, Add and Relu run on the CPU and take no DequantizeLinear into a node unit. The per-channel
    weight dequantizations then run on the CPU, the per-tensor bias dequantizations on the HTP; the biases of three
    layers form a partition with no input (a compile failure naming them), one bias alone goes to the CPU, and a
    Sigmoid on a second input gives their partition an input."""
    from tests.models.probes.heads import weight_only_mlp_onnx

    report = check_model(weight_only_mlp_onnx(tmp_path / "m.onnx", layers, side_input), load_profile("mobile-npu"))
    placed = {v.name: v for v in report.node_verdicts}
    assert all(placed[f"weight{k}"].failed[0].constraint == "standalone_constant_dequantize" for k in range(layers))
    biases = {placed[f"bias{k}"].placement for k in range(layers)}
    blockers = [b.constraint for b in report.compile_blockers]
    if layers == 1:
        assert biases == {"cpu"} and placed["bias0"].failed[0].constraint == "input_less_groups" and not blockers
    elif side_input:
        assert biases == {"accelerator"} and placed["side"].placement == "accelerator" and not blockers
    else:
        assert biases == {"accelerator"} and blockers == ["input_less_groups"]
        assert "'bias0'" in report.compile_blockers[0].detail and "zero inputs" in report.compile_blockers[0].detail
    edge = check_model(weight_only_mlp_onnx(tmp_path / "e.onnx", layers, side_input), load_profile("rk3588"))
    assert not any(b.constraint == "input_less_groups" for b in edge.compile_blockers)


def test_a_cpu_loop_reading_an_accelerator_tensor_in_its_body_sends_every_node_to_the_cpu(tmp_path: Path) -> None:
    """mobile-npu (subgraph_reads_split_partitions): the Loop's body reads the Relu's output from the enclosing
    graph and the Mul after the Loop runs on the HTP, so ONNX Runtime refuses the partition: every node on the
    CPU, each naming the Loop. Read as an edge (the Loop's initial state), nothing changes."""
    from edgepipe.support import read_graph
    from tests.models.probes.inputs import loop_between_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    profile = load_profile("mobile-npu")
    outer = qdq_onnx(loop_between_onnx(tmp_path / "o.onnx", True), tmp_path / "oq.onnx", (1, 16, 8))
    loop = next(n for n in read_graph(outer).nodes if n.op == "Loop")
    assert loop.attrs["outer_reads"] == ["y"]
    report = check_model(outer, profile)
    assert all(v.placement == "cpu" for v in report.node_verdicts)
    assert any("Loop 'loop'" in f.detail for v in report.node_verdicts for f in v.failed)
    edge = check_model(qdq_onnx(loop_between_onnx(tmp_path / "e.onnx", False), tmp_path / "eq.onnx", (1, 16, 8)),
                       profile)
    assert not any(f.constraint == "subgraph_reads_split_partitions" for v in edge.node_verdicts for f in v.failed)
    assert sum(v.placement == "accelerator" for v in edge.node_verdicts) > 6
