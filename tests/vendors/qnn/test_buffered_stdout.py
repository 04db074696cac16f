"""The QNN emulator's answer is read whatever Python's stdout buffering: its native library prints a line of
its own ("# LIBNATIVE: ...") as it unloads, after the answer when PYTHONUNBUFFERED is unset (a new user's shell,
most CI runners). That line used to be read as the answer: every mobile-npu cell was 'not proven'."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.vendors.qnn.emulator import QnnHtp
from tests.models.probes.convolutions import conv_net_onnx
from tests.models.probes.onnx_files import qdq_onnx

SHAPE = (1, 3, 16, 16)


def test_probe_reads_the_answer_with_buffered_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Buffered (the default); the unbuffered case is every other test of the QNN emulator on a CI runner that
    sets PYTHONUNBUFFERED."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    model = qdq_onnx(conv_net_onnx(tmp_path / "f.onnx", ["Relu"]), tmp_path / "q.onnx", SHAPE)
    answer = QnnHtp(run_outputs=False).probe(model, {"htp-arch": "73", "soc-model": "43"}, run=False)
    assert answer["status"] == "compiled"
    providers = [provider for _, _, provider in answer["placed"]]  # [node, op type, execution provider]
    assert len(providers) >= 3 and "QNNExecutionProvider" in providers
