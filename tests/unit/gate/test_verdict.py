"""A verdict needs evidence: the target's int8 artifact, its accuracy, its compatibility requirements, its compile.

Placements come from the real support check on the reference build's real artifacts; the float TFLite is
what an Edge TPU would run entirely on its host CPU (it takes only quantized tensors).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from edgepipe.gate.verdict import VerdictInputs, decide
from edgepipe.report.schema import BuildReport
from edgepipe.support.check import check_model
from edgepipe.support.report import Verification
from edgepipe.targets import load_profile


@pytest.fixture(scope="module")
def built(reference_build: tuple[subprocess.CompletedProcess[str], Path]) -> tuple[BuildReport, Path]:
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr[-2000:]
    return BuildReport.model_validate_json((folder / "report.json").read_text(encoding="utf-8")), folder


def test_edge_tpu_running_every_op_on_the_cpu_fails_compatibility(built: tuple[BuildReport, Path]) -> None:
    report, folder = built
    edge_tpu = load_profile("edge-tpu")
    on_cpu = check_model(folder / "model.tflite", edge_tpu)
    assert on_cpu.mac_share == 0.0 and on_cpu.accelerator_nodes == 0
    verdict, reason, evidence = decide(VerdictInputs(edge_tpu, report.artifacts, report.accuracy, on_cpu))
    assert verdict == "fail"
    assert "0.0% of MACs on the accelerator < 90% required" in reason
    assert "puts CONV_2D" in reason and "next step: see the report's support table" in reason  # what to do
    assert [(e.requirement, e.outcome) for e in evidence] == [
        ("int8 artifact", "met"), ("accuracy", "met"), ("compatibility", "failed")]
    on_tpu = check_model(folder / "model_int8.tflite", edge_tpu)
    assert on_tpu.mac_share == 1.0
    verdict, reason, _ = decide(VerdictInputs(edge_tpu, report.artifacts, report.accuracy, on_tpu))
    assert verdict == "pass" and "largest int8 drop" in reason


def test_float_twin_placed_when_the_int8_artifact_failed_is_not_proven(built: tuple[BuildReport, Path]) -> None:
    """When quantization fails the support check places the float TFLite; an int8 target cannot run it, so its
    all-CPU placement is not a compatibility failure to fix by replacing ops (bicycle_bell_crnn's unrolled LSTM on
    ethos-u55 said "replace ADD, MUL, LOGISTIC ... in the model")."""
    report, folder = built
    edge_tpu = load_profile("edge-tpu")
    floats = [a for a in report.artifacts if a.precision == "fp32"]
    verdict, reason, evidence = decide(VerdictInputs(edge_tpu, floats, report.accuracy,
                                                     check_model(folder / "model.tflite", edge_tpu)))
    assert verdict == "not proven"
    compatibility = next(e for e in evidence if e.requirement == "compatibility")
    assert compatibility.outcome == "not proven"
    assert compatibility.detail.startswith("only the float model.tflite could be placed")
    assert "replace those ops" not in reason


def test_no_pass_without_an_int8_artifact(built: tuple[BuildReport, Path]) -> None:
    report, _ = built
    floats = [a for a in report.artifacts if a.precision == "fp32"]
    verdict, reason, evidence = decide(VerdictInputs(load_profile("host-cpu"), floats, report.accuracy))
    assert verdict == "not proven" and reason.startswith("int8 artifact: no int8 onnx/tflite artifact")
    assert evidence[1].outcome == "not proven"


def test_no_pass_without_evaluation(built: tuple[BuildReport, Path]) -> None:
    report, _ = built
    verdict, reason, _ = decide(VerdictInputs(load_profile("host-cpu"), report.artifacts, None))
    assert verdict == "not proven" and "no evaluation data" in reason


def test_accuracy_gate_turned_off_passes_and_says_so(built: tuple[BuildReport, Path]) -> None:
    report, _ = built
    assert report.accuracy is not None
    dropped = report.accuracy.model_copy(update={"drop_points": {f: 50.0 for f in report.accuracy.drop_points}})
    host = load_profile("host-cpu")
    assert decide(VerdictInputs(host, report.artifacts, dropped))[0] == "fail"
    verdict, reason, evidence = decide(VerdictInputs(host, report.artifacts, dropped, accuracy_gate=False))
    assert verdict == "pass" and "accuracy gating turned off (accuracy.gate = false)" in reason
    assert [e.outcome for e in evidence] == ["met", "not gated", "met"]


@pytest.mark.parametrize(("status", "verdict", "outcome"), [
    ("compile_failed", "fail", "failed"), ("failed", "not proven", "not proven"), ("ran", "pass", "met"),
    ("not installed", "pass", "not checked")])
def test_vendor_compile_decides_where_the_profile_requires_it(built: tuple[BuildReport, Path], status: str,
                                                              verdict: str, outcome: str) -> None:
    report, folder = built
    ethos = load_profile("ethos-u55")
    assert ethos.required().must_compile is True
    support = check_model(folder / "model_int8.tflite", ethos)
    detail = "pip install 'edgepipe[vela]'" if status == "not installed" else "Vela: unsupported tensor shape"
    support = support.model_copy(update={"verification": [Verification(tool="vela ethos-u55-128", status=status,
                                                                       detail=detail)]})
    got, reason, evidence = decide(VerdictInputs(ethos, report.artifacts, report.accuracy, support))
    assert got == verdict and evidence[-1].requirement == "vendor compile" and evidence[-1].outcome == outcome
    if status == "not installed":
        assert "vendor compile not checked" in reason and "pip install 'edgepipe[vela]'" in reason


def test_every_bundled_npu_profile_requires_its_accelerator() -> None:
    from edgepipe.targets import available_targets

    for name in available_targets():
        profile = load_profile(name)
        share = profile.required().min_accelerator_mac_share
        assert (share is not None and share >= 0.5) == (profile.device_class == "npu"), name


def test_a_tflite_source_says_why_an_onnx_target_has_no_artifact() -> None:
    """Seen on held-out MediaPipe models: mobile-npu said 'e.g. no --calib data' although data was given."""
    from edgepipe.report.schema import ArtifactInfo

    tflite = [ArtifactInfo(path="model.tflite", format="tflite", precision="fp32", size_bytes=10),
              ArtifactInfo(path="model_int8.tflite", format="tflite", precision="int8", size_bytes=5)]
    verdict, reason, _ = decide(VerdictInputs(load_profile("mobile-npu"), tflite, None, source_format="tflite"))
    assert verdict == "not proven" and "no --calib" not in reason
    assert "makes no onnx model from a tflite file" in reason and ".onnx, .keras or SavedModel" in reason


def test_a_compile_that_needed_a_vendor_workaround_says_so_in_a_pass(built: tuple[BuildReport, Path]) -> None:
    """rknn-toolkit2 compiled only with a rule disabled on its own advice: met, and the reason names it."""
    report, folder = built
    ethos = load_profile("ethos-u55")
    support = check_model(folder / "model_int8.tflite", ethos)
    needed = "config(disable_rules=['fuse_x']): with the toolkit's defaults build: IndexError in that rule"
    support = support.model_copy(update={"verification": [Verification(
        tool="rknn --target-platform rk3588", status="ran", extra={"compiled_with": needed})]})
    got, reason, evidence = decide(VerdictInputs(ethos, report.artifacts, report.accuracy, support))
    assert got == "pass" and evidence[-1].outcome == "met"
    assert f"compiled the graph only with {needed}" in reason
