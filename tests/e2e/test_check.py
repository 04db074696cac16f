"""`edgepipe check`, `targets show --ops` and `targets docs` through the real console script."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def test_check_prints_table_and_writes_json_and_markdown(probe_tflite: dict[str, Path], tmp_path: Path) -> None:
    proc = run_cli("check", str(probe_tflite["int8"]), "--target", "ethos-u55", "--target", "edge-tpu",
                   "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "CONV_2D stride 4 > 3 with same padding" in proc.stdout
    assert "ethos-u55: 6/7 nodes" in proc.stdout
    data = json.loads((tmp_path / "out" / "probe_int8-ethos-u55.json").read_text())
    assert data["cpu_ops"] == {"CONV_2D": 1} and data["partitions"] == 2
    assert "## Operator support on edge-tpu" in (tmp_path / "out" / "probe_int8-edge-tpu.md").read_text()


def test_check_wrong_format_is_one_line_user_error(tmp_path: Path, probe_tflite: dict[str, Path]) -> None:
    proc = run_cli("check", str(probe_tflite["int8"]), "--target", "mobile-npu", cwd=tmp_path)
    assert proc.returncode == 1
    assert "has no op table for tflite graphs" in proc.stderr and "Traceback" not in proc.stderr


def test_targets_show_ops_and_docs(tmp_path: Path) -> None:
    proc = run_cli("targets", "show", "edge-tpu", "--ops", cwd=tmp_path)
    assert proc.returncode == 0 and "partitioning: prefix" in proc.stdout
    proc = run_cli("targets", "docs", "-o", str(tmp_path / "docs"), cwd=tmp_path)
    assert proc.returncode == 0 and (tmp_path / "docs" / "ethos-u85.md").is_file()
