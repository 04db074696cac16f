"""``edgepipe build`` on ONNX and TFLite inputs runs the stages that apply; export/quantize/eval commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main

pytestmark = pytest.mark.slow


def test_build_onnx_input(tiny: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["build", "-q", "--model", str(tiny["onnx"]), "--calib", str(tiny["onnx_calib"]),
                 "--eval", str(tiny["onnx_eval"]), "--output", str(tmp_path), "--threshold", "100"])
    assert code == 0, capsys.readouterr().err
    folder = tmp_path / "tiny" / "host-cpu"
    report = json.loads((folder / "report.json").read_text())
    assert {a["path"] for a in report["artifacts"]} == {"model.onnx", "model_int8.onnx"}
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["export"]["status"] == "skipped" and "already ONNX" in stages["export"]["detail"]
    assert stages["quantize"]["status"] == "ran"
    assert set(report["accuracy"]["int8"]) == {"onnx"}


def test_export_then_build_tflite_input(tiny: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "-q", "--model", str(tiny["keras"]), "--output", str(tmp_path / "exp")]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in printed) == ["model.onnx", "model.tflite"]
    tflite = tmp_path / "exp" / "model.tflite"
    code = main(["build", "-q", "--model", str(tflite), "--calib", str(tiny["calib"]), "--eval", str(tiny["eval"]),
                 "--output", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "model" / "host-cpu" / "report.json").read_text())
    assert report["model"]["format"] == "tflite"
    assert [a["path"] for a in report["artifacts"]] == ["model.tflite"]
    assert report["accuracy"]["float_by_format"].keys() == {"tflite"}


def test_quantize_and_eval_commands(tiny: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "q"
    assert main(["quantize", "-q", "--model", str(tiny["keras"]), "--calib", str(tiny["calib"]),
                 "--output", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "model.tflite", "model_int8.onnx",
                                                      "model_int8.tflite"]
    capsys.readouterr()
    assert main(["eval", str(out / "model_int8.tflite"), "--eval", str(tiny["eval"])]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["metric"] == "top1" and result["samples"] == 40 and 0.0 <= result["value"] <= 1.0
