"""Every build report carries energy per inference; Ethos-U reports carry Vela's estimate and the ratio."""

from __future__ import annotations

import json

import pytest

from edgepipe.perf.predict import predict
from edgepipe.perf.vela_estimate import run_vela
from edgepipe.targets import load_profile


def test_host_build_report_has_energy_and_deployment_artifact(reference_build):
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr
    performance = json.loads((folder / "report.json").read_text())["performance"]
    assert performance["estimator"] == "cost-model" and performance["artifact"] == "model.onnx"
    assert {f["artifact"] for f in performance["int8_forms"]} >= {"model_int8.onnx", "model_int8.tflite",
                                                                  "model_int8_qoperator.onnx"}
    assert performance["deployment_artifact"] in {f["artifact"] for f in performance["int8_forms"]}
    mode = performance["modes"][0]
    assert mode["energy_mj"] > 0 and mode["inferences_per_j"] == pytest.approx(1000 / mode["energy_mj"])
    energy = [note for note in performance["notes"] if note.startswith("energy (model estimate): model_int8")]
    assert len(energy) == 1 and "measured p50" in energy[0] and "the power is not measured" in energy[0]
    assert "Performance on host-cpu" in (folder / "report.md").read_text()


def test_ethos_u55_estimate_is_vela_with_ratio(reference_build):
    _, folder = reference_build
    tflite = folder / "model_int8.tflite"
    profile = load_profile("ethos-u55")
    vela = run_vela(tflite, profile.performance)
    assert vela.clock_mhz == 500 and vela.cycles > 0 and vela.cpu_ops == 0
    report = predict(tflite, profile)
    assert report.estimator == "vela" and report.error == "unvalidated"
    assert report.vela.cycles == vela.cycles
    assert report.vela.ratio == report.vela.edgepipe_ms / report.vela.vela_ms
    nominal, low = report.modes
    assert nominal.latency_ms == vela.cycles / (500 * 1e3)  # cycles at 500 MHz, in ms
    assert low.latency_ms == 2 * nominal.latency_ms  # half the clock


def test_every_npu_target_estimates_the_reference_model(reference_build):
    _, folder = reference_build
    for name in ("mobile-npu", "edge-tpu", "edge-box-npu", "gpu-reference", "ethos-u85"):
        profile = load_profile(name)
        artifact = folder / ("model_int8.tflite" if "tflite" == profile.artifact.format else
                             ("model_int8.onnx" if profile.artifact.precision == "int8" else "model.onnx"))
        report = predict(artifact, profile)
        assert len(report.modes) >= 2 and all(m.energy_mj > 0 for m in report.modes), name
        assert report.delegate.total_ms > 0
