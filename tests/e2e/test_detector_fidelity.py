"""A YOLO-style detector with one concatenated output: plain int8 PTQ keeps a flattened cosine above 0.99 while its
class scores are rounded to nothing; the build judges the scores apart and at task level, the ladder keeps the
joining Concat above int8, and the deployable artifact's detections match float on host-cpu and mobile-npu."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.unit.metrics.detector_model import make_detector, write_detector_data


@pytest.fixture(scope="module")
def detector_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("detector")
    make_detector(folder / "det.onnx")
    write_detector_data(folder)
    (folder / "edgepipe.toml").write_text(
        'model = "det.onnx"\ntargets = ["host-cpu", "mobile-npu"]\n'
        '[data]\ncalibration = "calibration.npz"\nevaluation = "evaluation.npz"\n', encoding="utf-8")
    proc = run_cli("build", "--quiet", "--no-cache", cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return folder / "build" / "det"


@pytest.mark.slow
@pytest.mark.parametrize("target", ["host-cpu", "mobile-npu"])
def test_the_ladder_repairs_the_concatenated_head(detector_build: Path, target: str) -> None:
    report = json.loads((detector_build / target / "report.json").read_text())
    assert report["verdict"] == "pass"
    steps = {s["step"]: s for s in report["quantization"]["steps"]}
    assert steps["ptq"]["status"] == "missed"
    ptq_selection = steps["ptq"]["selection"]["onnx"]
    assert ptq_selection["min_cosine"] >= 0.99  # what the flattened gate read: a pass
    assert any("output0 channels 4–6: SQNR" in line for line in ptq_selection["failures"])  # the scores, named
    kept = [k["layer"] for k in steps["mixed"]["kept_layers"]["onnx"]]
    assert steps["mixed"]["status"] == "met" and "head_concat" in kept
    comparison = next(c for c in report["accuracy"]["label_free"]["comparisons"] if c["artifact"] == "model_int8.onnx")
    (task,) = comparison["tasks"]
    assert task["kind"] == "detection-yolo" and task["value"] >= 0.97
    assert min(p["sqnr_db"] for p in comparison["outputs"][0]["parts"]) >= 10
    assert comparison["arithmetic"] == ("host runtime" if target == "host-cpu" else "exact integer")
