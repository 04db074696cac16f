"""Graphs the QNN HTP compiler (onnxruntime-qnn, v73 emulated) cannot finalize: mobile-npu's compile_blockers
predict them, and the emulator agrees on both sides of each rule's boundary."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.toolchains.qnn import QnnHtp
from tests.verify.models import dilated_conv1d_onnx, qdq_onnx

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
