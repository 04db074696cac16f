"""One test per constraint of edgepipe/rules/reshape.py: a graph that fails it and one that passes.

The module holds rules on reshapes and layout transposes on the Rockchip NPU.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 12, 12, 6], [1, 864, 1], False),  # palm_detection's 12 x 12 classifier head before its Concat
    ([1, 24, 24, 2], [1, 1152, 1], True),  # its 24 x 24 one: an H x W of 576
    ([1, 12, 12, 6], [1, 18, 8, 6], True),  # W kept as the last axis
    ([1, 1, 44100, 1], [1, 1, 1, 44100], True),  # basic_pitch's conv1d layouts: only size-1 axes move
    ([1, 172, 264, 1], [1, 1, 172, 264], True),
    ([1, 8, 12, 6], [1, 8, 72, 1], False),
    ([1, 4, 1, 1], [1, 1, 1, 4], True),  # hand_recrop's output: a 1 x 1 plane into one channel
    ([1, 4, 1, 1], [1, 2, 1, 2], False),
    ([1, 32, 1, 1], [1, 32], True), ([1, 24, 1, 1], [1, 24], False),  # a classifier's flatten
    ([1, 4], [1, 1, 4], False), ([1, 16], [1, 1, 16], True)])  # not 4-D: the element count
def test_reshape_layout_aligned(tmp_path: Path, shape: list[int], to: list[int], npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (tests/vendors/rknn/).

    rknn-toolkit2 2.5.0 on RK3588 runs other reshapes on the CPU, e.g. palm_detection's 12 x 12 x 6 head reshaped to
    [1, 864, 1] for its Concat, a Flatten of 24 channels at a graph output, a score of 4 elements; it runs a flatten
    of H x W read by a Transpose or a Concat, as in PP-OCR, PicoDet and YOLO heads, on the NPU.
    """
    node, graph = single(tmp_path, "Reshape", [shape], to, consts={"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", node, graph, 16)[0] is npu


def test_reshape_layout_aligned_says_why(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Reshape", [[1, 12, 12, 6]], [1, 864, 1],
                         consts={"shape": np.array([1, 864, 1], np.int64)})
    assert verdict("reshape_layout_aligned", node, graph, 16) == (
        False, "reads [1, 12, 12, 6] (H x W = 72, not a multiple of 16) into [1, 864, 1]")
    node, graph = single(tmp_path, "Flatten", [[1, 4]], [1, 4])
    assert verdict("reshape_layout_aligned", node, graph, 16) == (False, "Flatten writes 'y' of 4 elements < 16")


def test_reshape_layout_aligned_merges_with_the_reshape_after_it(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 merges two reshapes, also across an Identity it drops (probe graphs, and PP-OCRv2's
    classifier output after its Softmax); a small reshape before the graph's output stays on the CPU.

    Also a reduction of size-1 axes, which the toolkit drops.
    """
    graph = onnx_graph(tmp_path, [helper.make_node("Flatten", ["x"], ["t"], name="first"),
                                  helper.make_node("Flatten", ["t"], ["y"], name="second")],
                       {"x": ([1, 4], FLOAT)}, {"y": ([1, 4], FLOAT)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16) == (True, "merged with the reshape after it")
    assert not verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    nodes = [helper.make_node("Flatten", ["x"], ["t"], name="first"), helper.make_node("Identity", ["t"], ["u"]),
             helper.make_node("Flatten", ["u"], ["y"], name="second")]
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4], FLOAT)}, {"y": ([1, 4], FLOAT)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16) == (True, "merged with the reshape after it")
    graph = onnx_graph(tmp_path, nodes[:2], {"x": ([1, 4], FLOAT)}, {"u": ([1, 4], FLOAT)})
    assert not verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0]


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 8, 12, 6], [1, 8, 72], True),  # PicoDet's and PP-OCR's heads: H x W flattened, then transposed
    ([1, 8, 12, 6], [1, 576, 1], False),  # a last axis of 1 from an unaligned plane
    ([1, 8, 12, 8], [1, 768, 1], True),
    ([1, 4, 1, 1], [1, 1, 4], False)])  # 4 elements
def test_reshape_layout_aligned_read_by_another_op(tmp_path: Path, shape: list[int], to: list[int],
                                                   npu: bool) -> None:
    graph = onnx_graph(tmp_path, [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                                  helper.make_node("Transpose", ["r"], ["y"], name="transpose", perm=[0, 2, 1])],
                       {"x": (shape, FLOAT)}, {"y": ([to[0], to[2], to[1]], FLOAT)},
                       {"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0] is npu


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 12, 12, 6], [1, 864, 1], False),  # palm_detection's 12 x 12 classifier head
    ([1, 6, 13, 13], [1, 6, 169], True)])  # ddddocr_det's (YOLO) 13 x 13 head, concatenated on the last axis
def test_reshape_layout_aligned_read_by_a_concat(tmp_path: Path, shape: list[int], to: list[int], npu: bool) -> None:
    """A vector given axes of size 1 ([4] to [4, 1], or [1, 1, 1, 1] to broadcast a reduction that dropped its axis)
    runs on the NPU unless it is a graph output (EfficientWord-Net's min-max normalization), and so does a tensor
    given a leading axis of size 1 for a Concat that stacks it (an unrolled LSTM's [1, 100] steps stacked to
    [20, 1, 100]: captcha-whisperer's CRNN; probed)."""
    axis = 1 if to[-1] == 1 else 2
    joined = [to[0], to[1] * 2, to[2]] if axis == 1 else [to[0], to[1], to[2] * 2]
    graph = onnx_graph(tmp_path, [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                                  helper.make_node("Concat", ["r", "r"], ["y"], name="concat", axis=axis)],
                       {"x": (shape, FLOAT)}, {"y": (joined, FLOAT)}, {"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0] is npu


def _heads(tmp_path: Path, planes: list[list[int]], flat: list[list[int]], axis: int) -> OpGraph:
    """One Reshape per head, from ``planes[i]`` to ``flat[i]``, and a Concat of them on ``axis`` (a detector's
    outputs over three scales)."""
    nodes = [helper.make_node("Reshape", [f"x{i}", f"s{i}"], [f"r{i}"], name=f"reshape{i}") for i in range(len(flat))]
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(len(flat))], ["y"], name="concat", axis=axis))
    joined = list(flat[0])
    joined[axis] = sum(f[axis] for f in flat)
    return onnx_graph(tmp_path, nodes, {f"x{i}": (p, FLOAT) for i, p in enumerate(planes)}, {"y": (joined, FLOAT)},
                      {f"s{i}": np.array(f, np.int64) for i, f in enumerate(flat)})


def test_reshape_layout_aligned_judges_a_concat_input_in_the_toolkits_4d_form(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 (unsqueeze_to_4d_concat) reshapes each Concat input into the 4-D shape of the first
    input's source, resized along the concatenated axis; that reshape follows the plane rule. ddddocr_det (YOLO):
    heads [1, 6, 52 x 52], [1, 6, 26 x 26], [1, 6, 13 x 13] on the last axis: the first is left as it is, the
    26 x 26 one becomes [1, 6, 13, 52] and runs on the CPU, 169 does not divide by 52 and stays on the NPU."""
    graph = _heads(tmp_path, [[1, 6, 52, 52], [1, 6, 26, 26], [1, 6, 13, 13]], [[1, 6, 2704], [1, 6, 676],
                                                                                 [1, 6, 169]], 2)
    got = [verdict("reshape_layout_aligned", n, graph, 16) for n in graph.nodes[:3]]
    assert [ok for ok, _ in got] == [True, False, True]
    assert got[1][1] == "reads [1, 6, 26, 26] (H x W = 676, not a multiple of 16) into [1, 6, 13, 52]"
    # palm_detection: [1, 1152, 1] from [1, 24, 24, 2], then [1, 864, 1] from [1, 12, 12, 6] -> [1, 18, 24, 2]
    graph = _heads(tmp_path, [[1, 24, 24, 2], [1, 12, 12, 6]], [[1, 1152, 1], [1, 864, 1]], 1)
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16) == (
        False, "reads [1, 12, 12, 6] (H x W = 72, not a multiple of 16) into [1, 18, 24, 2]")
    graph = _heads(tmp_path, [[1, 24, 24, 36], [1, 12, 12, 108]], [[1, 1152, 18], [1, 864, 18]], 1)
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]


@pytest.mark.parametrize(("rows", "columns", "axis", "npu"), [
    (100, 59, 1, False), (96, 59, 1, True), (100, 64, 1, True),  # [1, 1, H, W]: H x W
    (96, 59, 2, False), (100, 64, 2, True), (96, 59, 3, False)])  # [1, C, 1, W] and [1, C, W, 1]: W
def test_reshape_layout_aligned_of_a_3d_graph_input_given_a_channel_axis(tmp_path: Path, rows: int, columns: int,
                                                                         axis: int, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (brainmaze's seizure spectrogram; tests/vendors/rknn/).

    A [1, 100, 59] spectrogram unsqueezed to [1, 1, 100, 59] for a Conv runs on the CPU, [1, 96, 59] and
    [1, 100, 64] on the NPU (probed at each axis); also before a Transpose to NCHW: humanactivity's [1, 90, 3]
    accelerometer window, probed with 90 x 3, 90 x 4, 88 x 3 on the CPU and 96 x 3, 90 x 16 on the NPU.
    """
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import spectrogram_channel_onnx

    graph = read_graph(spectrogram_channel_onnx(tmp_path / "spec.onnx", rows, columns, axis))
    ok, detail = verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)
    assert ok is npu and "gives [1, " in detail, detail


def test_reshape_layout_aligned_of_a_gate_given_its_held_form(tmp_path: Path) -> None:
    """A 1-D convolution's [1, 8, 1] gate unsqueezed to [1, 8, 1, 1] (GTCRN): RK3588 runs it on the NPU.

    GTCRN's [1, 8, 1] attention gates unsqueezed to [1, 8, 1, 1] (probed). A 3-D tensor reshaped twice is judged by
    the one reshape the toolkit merges the two into (ecg-quality's Conv1D input [1, 500, 1] -> [1, 1, 500, 1] ->
    [1, 1, 1, 500]: a plane of 500, CPU); a reshape dropping the axes a kept ReduceMean reduced is taken into that
    mean's own reshape (musicnn's [1, 1, 753, 1] mean squeezed for a Concat; probed on RK3588).
    """
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import channel_gate_onnx

    graph = read_graph(channel_gate_onnx(tmp_path / "gate.onnx"))
    node = next(n for n in graph.nodes if n.op == "Unsqueeze")
    assert verdict("reshape_layout_aligned", node, graph, 16) == (
        True, "gives [1, 8, 1], held as [1, 8, 1, 1], that form")


@pytest.mark.parametrize(("channels", "width", "reader", "npu"), [
    (6, 1, "Add", True), (6, 1, "Relu", True), (3, 2, "Add", True)])
def test_reshape_layout_aligned_of_a_conv_output_squeezed_for_an_add(tmp_path: Path, channels: int, width: int,
                                                                      reader: str, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588: the Add gets a 4-D input again and both reshapes are dropped.

    humanactivity's Keras Conv1D of 6 channels x 1 before its bias Add; probed with an Add and a Relu, 6 x 1 and 3 x
    2.
    """
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import squeezed_conv_onnx

    graph = read_graph(squeezed_conv_onnx(tmp_path / "sq.onnx", channels, width, reader))
    node = next(n for n in graph.nodes if n.op == "Squeeze")
    ok, detail = verdict("reshape_layout_aligned", node, graph, 16)
    assert ok is npu and "the two reshapes cancel" in detail, detail


def test_reshape_layout_aligned_of_a_one_column_head(tmp_path: Path) -> None:
    """madmom's onset RNNs squeeze their [100, 1] one-column head to [100]."""
    from edgepipe.support import read_graph
    from tests.models.probes.sequences import one_column_heads_onnx

    graph = read_graph(one_column_heads_onnx(tmp_path / "heads.onnx", [100, 96]))
    nodes = {n.name: n for n in graph.nodes}
    ok, detail = verdict("reshape_layout_aligned", nodes["squeeze0"], graph, 16)
    assert not ok and "H x W = 100" in detail
    assert verdict("reshape_layout_aligned", nodes["squeeze1"], graph, 16)[0]


def test_reshape_layout_aligned_of_a_recurrent_state(tmp_path: Path) -> None:
    """The 4-element state of an RNN, unsqueezed from a graph input and squeezed from its last state, is reshaped
    on the NPU: no 'fewer than 16 elements' fallback for it.

    The [4] states of madmom's SuperFlux BRNN; RIANN's GRUs of 200 units: [1, 1, 1, 200] -> [1, 1, 200] on the CPU,
    208 and 64 on the NPU (probed).
    """
    from edgepipe.support import read_graph
    from tests.models.probes.sequences import recurrent_states_onnx

    graph = read_graph(recurrent_states_onnx(tmp_path / "states.onnx", "RNN", 4))
    nodes = {n.name: n for n in graph.nodes}
    for name in ("state_batch", "state_squeeze"):
        ok, detail = verdict("reshape_layout_aligned", nodes[name], graph, 16)
        assert ok and "recurrent op's state" in detail


def test_reshape_layout_aligned_between_2d_and_3d(tmp_path: Path) -> None:
    """BeatNet's flatten of [128, 2, 131] and its dense's [128, 150] to [1, 128, 150]: CPU on RK3588; the same
    reshapes of 16-aligned planes and channels: NPU.

    BeatNet's pooled [128, 2, 131] flattened to [128, 262] reads a plane of 131 elements, its dense's [128, 150]
    reshaped to [1, 128, 150] a 1 x 1 plane of 150 channels; [128, 4, 16] and [128, 160] run on the NPU.
    """
    def reshape(shape: list[int], out: list[int]) -> tuple[OpNode, OpGraph]:
        """A 1-D max pooling (3-D) or a dense (2-D) writes ``shape``, reshaped to ``out``, read by a Relu."""
        pooled = len(shape) == 3
        source = helper.make_node("MaxPool", ["i"], ["x"], name="pool", kernel_shape=[1]) if pooled else \
            helper.make_node("Relu", ["i"], ["x"], name="dense")
        node = helper.make_node("Reshape", ["x", "s"], ["r"], name="reshape")
        relu = helper.make_node("Relu", ["r"], ["y"], name="relu")
        graph = onnx_graph(tmp_path, [source, node, relu], {"i": (shape, FLOAT)}, {"y": (out, FLOAT)},
                           {"s": np.array(out, np.int64)})
        return graph.nodes[1], graph

    for shape, out in (([128, 2, 131], [128, 262]), ([128, 150], [1, 128, 150]), ([16, 150], [1, 16, 150])):
        assert not verdict("reshape_layout_aligned", *reshape(shape, out), 16)[0], (shape, out)
    for shape, out in (([128, 4, 16], [128, 64]), ([128, 160], [1, 128, 160])):
        assert verdict("reshape_layout_aligned", *reshape(shape, out), 16)[0], (shape, out)


def test_reshape_layout_aligned_between_2d_and_3d_exemptions(tmp_path: Path) -> None:
    """What the toolkit runs on RK3588's NPU all the same: madmom's notes CNN flattens a Transpose's [40, 10, 106]
    (merged with it), its output Squeeze changes no shape, ddddocr's [32, 8210] head is unsqueezed to an output."""
    transpose = helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[0, 2, 1])
    flatten = helper.make_node("Reshape", ["t", "s"], ["f"], name="flatten")
    relu = helper.make_node("Relu", ["f"], ["y"], name="relu")
    graph = onnx_graph(tmp_path, [transpose, flatten, relu], {"x": ([40, 106, 10], FLOAT)},
                       {"y": ([40, 1060], FLOAT)}, {"s": np.array([40, 1060], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    noop = helper.make_node("Reshape", ["x", "s"], ["y"], name="same")
    graph = onnx_graph(tmp_path, [helper.make_node("Relu", ["i"], ["x"], name="relu"), noop],
                       {"i": ([40, 88], FLOAT)}, {"y": ([40, 88], FLOAT)}, {"s": np.array([40, 88], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    squeezed = helper.make_node("Reshape", ["x", "s"], ["f"], name="flatten_squeezed")
    graph = onnx_graph(tmp_path, [helper.make_node("Elu", ["i"], ["x"], name="elu"), squeezed, relu],
                       {"i": ([40, 106, 10], FLOAT)}, {"y": ([40, 1060], FLOAT)}, {"s": np.array([40, 1060], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0], "held as the 4-D tensor it came from"
    head = helper.make_node("Reshape", ["x", "s"], ["y"], name="head")
    graph = onnx_graph(tmp_path, [helper.make_node("Relu", ["i"], ["x"], name="relu"), head],
                       {"i": ([32, 8210], FLOAT)}, {"y": ([32, 1, 8210], FLOAT)},
                       {"s": np.array([32, 1, 8210], np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]


def test_reshape_layout_aligned_around_a_1d_hard_sigmoid(tmp_path: Path) -> None:
    """PP-OCRv6 tiny's 1-D HardSwish: RK3588 holds the [1, 16, W] a HardSigmoid reads or writes as [1, 16, W, 1]
    (the real toolkit's placement of the same graph: tests/vendors/rknn/).

    PP-OCRv6's 1-D HardSwish over 40 columns: both reshapes on the CPU (probed).
    """
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import hard_swish_1d_onnx

    graph = read_graph(hard_swish_1d_onnx(tmp_path / "h.onnx", [(40, "bn_hswish"), (40, "hsig"), (48, "hsig"),
                                                                   (40, "relu")]))
    found = {n.name: verdict("reshape_layout_aligned", n, graph, 16) for n in graph.nodes
             if n.op in ("Squeeze", "Unsqueeze")}
    assert found["unsqueeze0"] == (False, "Unsqueeze moves a HardSigmoid's [1, 16, 40], held as [1, 16, 40, 1], to "
                                          "or from [1, 16, 1, 40] (W = 40, not a multiple of 16)")
    assert not found["squeeze1"][0] and not found["unsqueeze1"][0]
    assert found["squeeze2"] == (True, "moves a HardSigmoid's [1, 16, 48], held as [1, 16, 48, 1], in whole rows")
    assert found["unsqueeze2"][0] and found["squeeze0"][0] and found["squeeze3"][0] and found["unsqueeze3"][0]


@pytest.mark.parametrize(("length", "channels", "npu"), [
    (1024, 4, True), (1025, 4, False), (2001, 4, False), (1100, 12, False), (1200, 16, True), (2000, 32, True)])
def test_row_transpose_aligned(tmp_path: Path, length: int, channels: int, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (tests/vendors/rknn/: one-row maps moved to NCHW).

    tf2onnx's input of a Keras Conv1D; cispliceai's [1, 1, 10102, 4] one-hot DNA. Probed at C = 4 with W = 1024 on
    the NPU and 1025, 1040, 1536, 2000 on the CPU, at C = 2, 8, 12 with W = 1025 to 1100 on the CPU, at C = 16 and
    32 with W up to 8192 on the NPU. RK3576 runs them all on its NPU.
    """
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import one_row_conv_onnx

    graph = read_graph(one_row_conv_onnx(tmp_path / "row.onnx", length, channels))
    node = next(n for n in graph.nodes if n.op == "Transpose")
    assert verdict("row_transpose_aligned", node, graph, True)[0] is npu
    assert verdict("row_transpose_aligned", node, graph, False)[0] is True
    unsqueeze = next(n for n in graph.nodes if n.op == "Unsqueeze")  # on the NPU when the Transpose is not
    assert verdict("reshape_layout_aligned", unsqueeze, graph, 16)[0] is (not npu or length * channels % 16 == 0)
