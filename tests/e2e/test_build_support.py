"""`edgepipe build` runs the support check per target and puts it in report.json and report.md."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli


def test_reference_build_reports_support_for_host_cpu(
        reference_build: tuple[subprocess.CompletedProcess, Path]) -> None:
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr
    support = json.loads((folder / "report.json").read_text())["support"]
    assert support["target"] == "host-cpu" and support["artifact"] == "model_int8.onnx"
    assert support["node_share"] == 1.0 and support["partitions"] == 1 and support["cpu_ops"] == {}
    assert "## Operator support on host-cpu" in (folder / "report.md").read_text()


@pytest.mark.slow
def test_build_for_npu_targets_checks_each_deployed_artifact(tmp_path: Path, reference_model: Path) -> None:
    proc = run_cli("build", "--quiet", "--target", "ethos-u55", "--target", "mobile-npu", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    root = tmp_path / "build" / "digits_cnn"
    ethos = json.loads((root / "ethos-u55" / "report.json").read_text())["support"]
    assert ethos["artifact"] == "model_int8.tflite" and ethos["format"] == "tflite"
    assert ethos["accelerator_nodes"] == ethos["nodes"] == 5 and ethos["fits_sram"] is True
    qnn = json.loads((root / "mobile-npu" / "report.json").read_text())["support"]
    assert qnn["artifact"] == "model_int8_qdq_u8.onnx"  # uint8 activations: what the QNN EP runs best
    assert qnn["cpu_ops"] == {"DequantizeLinear": 1}  # the graph-output dequantize stays on the host
