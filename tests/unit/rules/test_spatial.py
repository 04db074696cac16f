"""One test per constraint of edgepipe/rules/spatial.py (convolution, pooling and resize geometry): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph
from tests.models.graphs import conv, onnx_graph
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def test_kernel_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=7)
    assert verdict("kernel_max", node, graph, 5) == (False, "Conv kernel 7x7 > 5")
    assert verdict("kernel_max", *conv(tmp_path, kernel=3), 5)[0]


def test_kernel_height_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=7)
    assert verdict("kernel_height_max", node, graph, 5) == (False, "Conv kernel height 7 > 5")
    assert verdict("kernel_height_max", node, graph, 7)[0]


def test_kernel_product_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=9)
    assert verdict("kernel_product_max", node, graph, 64) == (False, "Conv kernel 9x9 = 81 > 64")
    assert verdict("kernel_product_max", node, graph, 81)[0]


def test_same_padding_kernel_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=9, auto_pad="SAME_UPPER")
    assert verdict("same_padding_kernel_max", node, graph, 8) == (False, "Conv same padding kernel 9x9 > 8")
    assert verdict("same_padding_kernel_max", *conv(tmp_path, kernel=9, auto_pad="VALID"), 8)[0]


def test_stride_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, stride=5)
    assert verdict("stride_max", node, graph, 3) == (False, "Conv stride 5 > 3")
    assert verdict("stride_max", *conv(tmp_path, stride=3), 3)[0]


def test_strides_powers_of_two(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 on RK3588 runs a transposed convolution of stride 3 or 5 on its CPU, of stride 2, 4 or 8
    on its NPU (probed in 1-D and 2-D; OpenSpindleNet's upsampling neck)."""
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import transposed_gelu_onnx

    for stride, expected in ((5, (False, "ConvTranspose stride 5 is not a power of two")), (4, (True, "strides 4"))):
        graph = read_graph(transposed_gelu_onnx(tmp_path / f"s{stride}.onnx", stride))
        node = next(n for n in graph.nodes if n.op == "ConvTranspose")
        ok, detail = verdict("strides_powers_of_two", node, graph, True)
        assert ok == expected[0] and expected[1] in detail
    assert verdict("strides_powers_of_two", node, graph, False)[0]


def test_stride_max_unless_valid(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, stride=4, auto_pad="SAME_UPPER")
    assert verdict("stride_max_unless_valid", node, graph, 3) == (False, "Conv stride 4 > 3 with same padding")
    assert verdict("stride_max_unless_valid", *conv(tmp_path, stride=4, auto_pad="VALID"), 3)[0]


def test_dilation_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, dilation=3)
    assert verdict("dilation_max", node, graph, 2) == (False, "Conv dilation 3 > 2")
    assert verdict("dilation_max", *conv(tmp_path, dilation=2), 2)[0]


def test_padding_in(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, auto_pad="SAME_UPPER")
    assert verdict("padding_in", node, graph, ["valid"]) == (False, "Conv padding same not in valid")
    assert verdict("padding_in", *conv(tmp_path, auto_pad="VALID"), ["valid"])[0]


def test_ifm_hw_product_max(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    first = graph.nodes[0]  # 32x32 input
    assert verdict("ifm_hw_product_max", first, graph, 1024) == (False, "CONV_2D input height x width 1024 >= 1024")
    assert verdict("ifm_hw_product_max", first, graph, 1025)[0]


def test_depthwise_multiplier_max(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    depthwise = next(n for n in graph.nodes if n.op == "DEPTHWISE_CONV_2D")
    assert verdict("depthwise_multiplier_max", depthwise, graph, 1) == (
        False, "DEPTHWISE_CONV_2D depth multiplier 2 > 1")
    assert verdict("depthwise_multiplier_max", depthwise, graph, 2)[0]


def test_dilated_reach_channels_max(tmp_path: Path) -> None:
    """QNN's HTP compiler (QNN_COMMON_ERROR_MEM_ALLOC): a 1-D convolution over 128 channels compiles with dilation
    3000 and kernel 3 and fails with dilation 4095 (OpenSpindleNet's circularly padded dilated convolutions); 2-D
    convolutions with dilations up to 24 over 2048 channels compile."""
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import dilated_conv1d_onnx

    graph = read_graph(dilated_conv1d_onnx(tmp_path / "far.onnx", 100, 15692, 4096))  # 100 channels count as 128
    node = graph.nodes[0]
    assert verdict("dilated_reach_channels_max", node, graph, 1048448) == (
        False, "Conv dilated reach 8193 x 128 channels = 1048704 >= 1048448")
    padded = read_graph(dilated_conv1d_onnx(tmp_path / "pad.onnx", 128, 7500, 4096, padded=True))
    assert verdict("dilated_reach_channels_max", padded.nodes[0], padded, 1048448) == (
        True, "reach 7500 x 128 channels")  # the reach is cut to the input's length


def test_align_corners_whole_steps(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs 8 -> 15, 22 or 29 on the NPU of both SoCs and 8 -> 4, 12 or 16 on their CPU; other
    coordinate modes and nearest resizing on the NPU (probed)."""
    for size, ok in ((15, True), (16, False)):
        consts = {"roi": np.zeros(0, np.float32), "sc": np.zeros(0, np.float32),
                  "sz": np.array([1, 4, size, size], np.int64)}
        resize = helper.make_node("Resize", ["x", "roi", "sc", "sz"], ["y"], name="rz", mode="linear",
                                  coordinate_transformation_mode="align_corners")
        graph = onnx_graph(tmp_path, [resize], {"x": ([1, 4, 8, 8], FLOAT)}, {"y": ([1, 4, size, size], FLOAT)},
                           consts)
        passed, detail = verdict("align_corners_whole_steps", graph.nodes[0], graph, True)
        assert passed is ok
        if not ok:
            assert detail == "Resize aligns corners from [1, 4, 8, 8] to [1, 4, 16, 16]: 8 -> 16 is not a whole " \
                             "number of steps"


def test_padding_counted(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs a padded 3 x 3 average that leaves the padding out on the CPU of both SoCs, at
    stride 1 and 2; counting it, or without padding, on the NPU (probed)."""
    for counted, pads, ok in ((0, [1, 1, 1, 1], False), (1, [1, 1, 1, 1], True), (0, [0, 0, 0, 0], True)):
        pool = helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], pads=pads,
                                count_include_pad=counted)
        out = 8 if any(pads) else 6
        graph = onnx_graph(tmp_path, [pool], {"x": ([1, 4, 8, 8], FLOAT)}, {"y": ([1, 4, out, out], FLOAT)}, {})
        assert verdict("padding_counted", graph.nodes[0], graph, True)[0] is ok


@pytest.mark.parametrize(("rank", "auto_pad", "ok"), [(3, "SAME_UPPER", False), (3, "SAME_LOWER", False),
                                                      (3, "NOTSET", True), (3, "VALID", True), (4, "SAME_UPPER", True)])
def test_conv1d_explicit_pads(tmp_path: Path, rank: int, auto_pad: str, ok: bool) -> None:
    """rknn-toolkit2 2.5.0 rewrites a 1-D convolution into a 2-D one with both attributes, which its own ONNX
    Runtime then refuses ("A Conv/ConvTranspose node has both 'auto_pad' and 'pads' attributes"; DeepLC's CNN,
    probed: 1-D SAME_UPPER and SAME_LOWER fail, 1-D with pads or VALID and 2-D SAME_UPPER build)."""
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import auto_padded_conv_onnx

    graph = read_graph(auto_padded_conv_onnx(tmp_path / "c.onnx", rank, auto_pad))
    conv = next(n for n in graph.nodes if n.op == "Conv")
    assert verdict("conv1d_explicit_pads", conv, graph, True)[0] is ok
    assert verdict("conv1d_explicit_pads", conv, graph, False)[0]
