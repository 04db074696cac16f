"""A real third-party TFLite that crashes LiteRT (SIGABRT, a double free in allocate_tensors): ai-edge-quantizer's
int8 TFLite of arabic-name-romanizer's GRU encoder (held out). The build reports it as a failed stage with
a next step and goes on; before the child-process probe the whole build died with exit -6 and a half-written folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.errors import ExitCode
from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME, prepare

pytestmark = pytest.mark.slow


def test_a_quantized_tflite_that_crashes_litert_is_a_failed_stage_not_a_crash(tmp_path: Path) -> None:
    config = prepare(BY_NAME["name_romanizer_encoder"], tmp_path / "held", zoo.SMALL)
    out = tmp_path / "out"
    code = main(["build", "-q", "-c", str(config), "-o", str(out), "--no-cache", "-t", "ethos-u55"])
    assert code in (ExitCode.OK, ExitCode.GATE_FAILED)  # a verdict: edgepipe itself did not die
    report = json.loads((out / "name_romanizer_encoder" / "ethos-u55" / "report.json").read_text())
    (stage,) = [s for s in report["stages"] if s["name"] == "quantize-tflite"]
    if stage["status"] == "failed":  # the crash this file reproduces with the pinned LiteRT (a glibc double free)
        assert "LiteRT crashed (SIGABRT)" in stage["detail"] and "deploy the ONNX artifact" in stage["detail"]
        assert not list(out.rglob("model_int8.tflite"))
    else:  # an allocator that does not detect the double free: the file runs, and is kept
        assert stage["status"] == "ran" and list(out.rglob("model_int8.tflite"))
