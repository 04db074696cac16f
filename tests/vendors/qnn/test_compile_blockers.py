"""Graphs the QNN HTP compiler (onnxruntime-qnn, v73 emulated) cannot finalize: mobile-npu's compile_blockers
predict them, and the emulator agrees on both sides of each rule's boundary."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors.qnn.emulator import QnnHtp
from tests.models.probes.convolutions import dilated_conv1d_onnx
from tests.models.probes.onnx_files import qdq_onnx

# (channels, length, dilation, padded): dilated reach x channels 128 x 8191 (fails), 128 x 6001, and a padded
# convolution whose reach is cut to its 7500-long input (128 x 7500 compiles although its kernel spans 8193).
CASES = [(128, 15692, 4095, False, True), (128, 15692, 3000, False, False), (128, 7500, 4096, True, False)]


@pytest.mark.parametrize(("channels", "length", "dilation", "padded", "blocked"), CASES)
def test_dilated_convolution_blocker_matches_the_htp_compiler(tmp_path: Path, channels: int, length: int,
                                                                dilation: int, padded: bool, blocked: bool) -> None:
    model = qdq_onnx(dilated_conv1d_onnx(tmp_path / "f.onnx", channels, length, dilation, padded),
                     tmp_path / "q.onnx", (1, channels, length))
    graph = read_graph(model)
    report = check_graph(graph, load_profile("mobile-npu"))
    assert [b.constraint for b in report.compile_blockers] == (["dilated_reach_channels_max"] if blocked else [])
    result = QnnHtp(run_outputs=False).compile(model, graph, {"htp-arch": "73", "soc-model": "43"}, tmp_path / "w")
    assert result.status == ("compile_failed" if blocked else "compiled"), result.detail
    if blocked:
        assert "MEM_ALLOC" in result.detail


def _depthwise_conv1d_onnx(path: Path, channels: int, group: int) -> Path:
    """A Conv1D of ``channels`` channels in ``group`` groups (kernel 11, stride 2, no bias: MarbleNet's first
    encoder Conv), float."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).normal(0, 0.3, (channels, channels // group, 11)).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[11], strides=[2], pads=[5, 5],
                            group=group)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 200])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 100])],
                              [numpy_helper.from_array(weight, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


@pytest.mark.parametrize(("group", "activations", "blocked"), [
    (80, "QInt16", True), (80, "QUInt16", False), (1, "QInt16", False), (80, "QInt8", False)])
def test_a_depthwise_conv_with_signed_int16_activations_is_a_predicted_compile_failure(
        tmp_path: Path, group: int, activations: str, blocked: bool) -> None:
    """NVIDIA MarbleNet (held out): its a16w8 int8 ONNX (int16 activations then) failed the QNN session on its
    depthwise Conv while edgepipe predicted a compile; edgepipe's a16w8 now uses uint16 activations, which compile."""
    model = qdq_onnx(_depthwise_conv1d_onnx(tmp_path / "f.onnx", 80, group), tmp_path / "q.onnx", (1, 80, 200),
                     activations)
    graph = read_graph(model)
    report = check_graph(graph, load_profile("mobile-npu"))
    assert [b.constraint for b in report.compile_blockers] == (["grouped_input_not_dequantized_from"] if blocked
                                                                else [])
    result = QnnHtp(run_outputs=False).compile(model, graph, {"htp-arch": "73", "soc-model": "43"}, tmp_path / "w")
    assert result.status == ("compile_failed" if blocked else "compiled"), result.detail
    if blocked:
        assert "was not selected by that EP" in result.detail
