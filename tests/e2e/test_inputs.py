"""``edgepipe build`` on ONNX inputs (→ TFLite by onnx2tf) and TFLite inputs (→ int8); export/quantize/eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main

pytestmark = pytest.mark.slow


def test_build_onnx_input(tiny: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["build", "-q", "--no-cache", "--model", str(tiny["onnx"]), "--calib", str(tiny["onnx_calib"]),
                 "--eval", str(tiny["onnx_eval"]), "--output", str(tmp_path), "--threshold", "100"])
    assert code == 0, capsys.readouterr().err
    folder = tmp_path / "tiny" / "host-cpu"
    report = json.loads((folder / "report.json").read_text())
    # host-cpu also gets model_int8.onnx with uint8 activations, which it may deploy (timed and compared alike)
    assert {a["path"] for a in report["artifacts"]} == {"model.onnx", "model.tflite", "model_int8.onnx",
                                                        "model_int8.tflite", "model_int8_qdq_u8.onnx"}
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["export"]["status"] == "ran" and "onnx2tf" in stages["export"]["detail"]
    assert stages["quantize"]["status"] == "ran" and stages["quantize-tflite"]["status"] == "ran"
    assert set(report["accuracy"]["int8"]) == {"onnx", "tflite"}
    converted = next(c for c in report["accuracy"]["label_free"]["comparisons"] if c["artifact"] == "model.tflite")
    assert converted["reference"] == "model.onnx" and converted["outputs"][0]["cosine"] > 0.9999


def test_export_onnx_input_uses_calibration(tiny: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`export` of an ONNX model converts it to TFLite with the calibration data it is given (onnx2tf reads it);
    without any, it says so and writes the ONNX alone (it used to drop the configured data and ask for a --calib
    that `export` did not accept)."""
    assert main(["export", "-q", "--model", str(tiny["onnx"]), "--calib", str(tiny["onnx_calib"]),
                 "--output", str(tmp_path / "with")]) == 0
    assert sorted(Path(p).name for p in capsys.readouterr().out.split()) == ["model.onnx", "model.tflite"]
    assert main(["export", "--model", str(tiny["onnx"]), "--output", str(tmp_path / "without")]) == 0
    captured = capsys.readouterr()
    assert [Path(p).name for p in captured.out.split()] == ["model.onnx"]
    assert "onnx2tf needs calibration data for TFLite (give --calib)" in captured.err


def test_export_then_build_tflite_input(tiny: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "-q", "--model", str(tiny["keras"]), "--output", str(tmp_path / "exp")]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in printed) == ["model.onnx", "model.tflite"]
    tflite = tmp_path / "exp" / "model.tflite"
    code = main(["build", "-q", "--no-cache", "--model", str(tflite), "--calib", str(tiny["calib"]),
                 "--eval", str(tiny["eval"]), "--output", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "model" / "host-cpu" / "report.json").read_text())
    assert report["model"]["format"] == "tflite"
    paths = [a["path"] for a in report["artifacts"]]
    # the TFLite itself and its ONNX through tf2onnx (host-cpu deploys both), each quantized
    assert {"model.tflite", "model_int8.tflite", "model.onnx", "model_int8.onnx"} <= set(paths), paths
    assert report["accuracy"]["float_by_format"].keys() == {"tflite", "onnx"}
    assert report["accuracy"]["int8"].keys() >= {"tflite", "onnx"}  # ai-edge-quantizer: no source graph needed
    export = next(s for s in report["stages"] if s["name"] == "export")
    assert "tf2onnx's TFLite front end" in export["detail"]


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
