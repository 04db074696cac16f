"""``edgepipe build`` on ONNX inputs end to end: NCHW through onnx2tf to int8 TFLite, multi-input/output models."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgepipe.cli import main
from tests.fixtures.images import write_sample_images
from tests.models import formats

pytestmark = pytest.mark.slow


def _comparisons(report: dict) -> dict[str, dict[str, dict]]:
    """artifact → output → metrics, from ``accuracy.label_free``."""
    comparisons = report["accuracy"]["label_free"]["comparisons"]
    return {c["artifact"]: {o["output"]: o for o in c["outputs"]} for c in comparisons}


def test_nchw_onnx_to_int8_tflite_agrees_with_onnxruntime(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = formats.nchw_cnn(tmp_path / "cnn.onnx")
    photos = write_sample_images(tmp_path / "photos")
    (tmp_path / "edgepipe.toml").write_text(f"""
model = "{model}"
output = "{tmp_path / 'build'}"
[data]
calibration = "{photos}"
[preprocess]
mean = [0.485, 0.456, 0.406]
std = [0.229, 0.224, 0.225]
[accuracy.task]
min_score = 0.9  # 16 samples of an untrained net: one top-1 flip is 6 points (the default 0.98 allows none)
""")
    code = main(["build", "-q", "--no-cache", "--config", str(tmp_path / "edgepipe.toml")])
    assert code == 0, capsys.readouterr().err
    folder = tmp_path / "build" / "cnn" / "host-cpu"
    report = json.loads((folder / "report.json").read_text())
    assert {a["path"]: a["precision"] for a in report["artifacts"]} == {
        "model.onnx": "fp32", "model.tflite": "fp32", "model_int8.onnx": "int8", "model_int8.tflite": "int8",
        "model_int8_qdq_u8.onnx": "int8"}  # host-cpu's U8S8 form: compared like every int8 artifact
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["export"]["status"] == "ran" and "onnx2tf" in stages["export"]["detail"]
    label_free = report["accuracy"]["label_free"]
    assert label_free["gated"] and label_free["samples"] == 16 and label_free["data"] == "calibration"
    logits = {artifact: outputs["logits"] for artifact, outputs in _comparisons(report).items()}
    assert logits["model.tflite"]["cosine"] >= 0.9999 and logits["model.tflite"]["max_abs_error"] < 1e-4
    assert logits["model_int8.tflite"]["cosine"] >= 0.99 and logits["model_int8.tflite"]["top1_agreement"] >= 0.9
    assert logits["model_int8.onnx"]["cosine"] >= 0.99 and logits["model_int8_qdq_u8.onnx"]["cosine"] >= 0.99
    assert report["verdict"] == "pass" and "label-free" in report["verdict_reason"]
    from edgepipe.runtimes import open_runner

    with open_runner(folder / "model_int8.tflite") as runner:  # NCHW kept: one dataset feeds every artifact
        assert runner.signature.inputs[0].shape == (1, 3, 64, 64)
    assert "Label-free agreement" in (folder / "report.md").read_text()


def test_multi_input_multi_output_onnx_with_input_shapes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # relative paths on the command line (onnx2tf runs in another folder)
    model = formats.two_in_two_out(tmp_path / "two.onnx")
    rng = np.random.default_rng(5)
    np.savez(tmp_path / "calib.npz", frames=rng.normal(0, 1, (48, 1, 160)).astype(np.float32)[:, 0],
             state=rng.uniform(-1, 1, (48, 8)).astype(np.float32))
    (tmp_path / "edgepipe.toml").write_text(f"""
model = "{model}"
input_shapes = {{ frames = [1, 160] }}
[data]
calibration = "{tmp_path / 'calib.npz'}"
[accuracy]
min_cosine = 0.98
""")
    code = main(["build", "-q", "--no-cache", "--config", "edgepipe.toml", "--output", "build"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "build" / "two" / "host-cpu" / "report.json").read_text())
    assert {a["path"] for a in report["artifacts"]} == {"model.onnx", "model.tflite", "model_int8.onnx",
                                                        "model_int8.tflite", "model_int8_qdq_u8.onnx"}
    comparisons = _comparisons(report)
    assert set(comparisons) == {"model.tflite", "model_int8.onnx", "model_int8.tflite", "model_int8_qdq_u8.onnx"}
    assert set(comparisons["model_int8.onnx"]) == {"score", "next_state"}
    for artifact, outputs in comparisons.items():
        assert set(outputs) == {"score", "next_state"}, artifact
        assert all(o["cosine"] >= 0.98 for o in outputs.values()), (artifact, outputs)
        assert outputs["score"]["top1_agreement"] is None  # one value per sample: not a classifier


def test_dynamic_sequence_without_input_shapes_keeps_onnx_and_says_why(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    model = formats.two_in_two_out(tmp_path / "two.onnx")
    rng = np.random.default_rng(6)
    np.savez(tmp_path / "calib.npz", frames=rng.normal(0, 1, (16, 100)).astype(np.float32),
             state=rng.uniform(-1, 1, (16, 8)).astype(np.float32))
    code = main(["build", "-q", "--no-cache", "--model", str(model), "--calib", str(tmp_path / "calib.npz"),
                 "--output", str(tmp_path / "build")])
    assert code in (0, 2), capsys.readouterr().err
    report = json.loads((tmp_path / "build" / "two" / "host-cpu" / "report.json").read_text())
    # model_int8_qdq_u8.onnx: host-cpu's U8S8 int8 form, model_int8.onnx with uint8 activations
    assert {a["path"]: a["precision"] for a in report["artifacts"]} == {
        "model.onnx": "fp32", "model_int8.onnx": "int8", "model_int8_qdq_u8.onnx": "int8"}
    assert set(_comparisons(report)) == {"model_int8.onnx", "model_int8_qdq_u8.onnx"}
    export = next(s for s in report["stages"] if s["name"] == "export")
    assert export["status"] == "skipped" and "frames still dynamic" in export["detail"]
    assert "input_shapes" in export["detail"]


def test_a_shipped_qdq_onnx_stays_as_shipped_and_its_reference_reaches_the_tflite_targets(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A static int8 QDQ input is the int8 ONNX artifact byte for byte (it was once quantized again from its float
    reference, a second ``model_int8.onnx`` beside it); Ethos-U, which had no artifact, gets the reference's TFLite
    quantized with the calibration data, and the report says so."""
    from tests.models.make_models import tiny_onnx, tiny_onnx_data
    from tests.models.probes.onnx_files import qdq_onnx

    shipped = qdq_onnx(tiny_onnx(tmp_path / "float.onnx"), tmp_path / "shipped.onnx", (1, 2, 6, 6))
    calib, evaluation = tiny_onnx_data(tmp_path)
    code = main(["build", "-q", "--no-cache", "--model", str(shipped), "--calib", str(calib), "--eval",
                 str(evaluation), "--target", "host-cpu", "--target", "ethos-u55", "-o", str(tmp_path / "build")])
    assert code == 0, capsys.readouterr().err
    for target in ("host-cpu", "ethos-u55"):
        folder = tmp_path / "build" / "shipped" / target
        report = json.loads((folder / "report.json").read_text())
        keys = [a["path"] for a in report["artifacts"]]
        assert len(keys) == len(set(keys)) and {"model_int8.onnx", "model_int8.tflite"} <= set(keys)
        assert (folder / "model_int8.onnx").read_bytes() == shipped.read_bytes()
        said = " ".join(s["detail"] for s in report["stages"] if s["name"] == "export")
        assert "not quantized again" in said and "float reference is converted and quantized again" in said
    ethos = json.loads((tmp_path / "build" / "shipped" / "ethos-u55" / "report.json").read_text())
    assert ethos["support"]["artifact"] == "model_int8.tflite"
