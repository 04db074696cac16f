"""``edgepipe bench`` through the real CLI: the JSON shape, the text, and the errors."""

from __future__ import annotations

import json

from tests.conftest import run_cli

STAT_KEYS = {"samples", "mean_ms", "std_ms", "min_ms", "p50_ms", "p90_ms", "p99_ms", "max_ms", "median_ci_low_ms",
             "median_ci_high_ms", "median_ci_coverage"}


def test_bench_json_fp32_and_int8_side_by_side(reference_build, tmp_path):
    _, folder = reference_build
    proc = run_cli("bench", str(folder), "--json", "--samples", "40", "--budget", "2", "--warmup", "2",
                   "--concurrency", "2", "--target", "ethos-u55", "--power-mode", "low_power", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    artifacts = {a["artifact"]: a for a in report["artifacts"]}
    # the build also keeps model_int8_qdq_u8.onnx when that form was the fastest on this host
    assert set(artifacts) - {"model_int8_qdq_u8.onnx"} == {"model.onnx", "model_int8.onnx", "model.tflite",
                                                             "model_int8.tflite"}
    for timing in artifacts.values():
        assert set(timing["stats"]) == STAT_KEYS
        assert 8 <= timing["stats"]["samples"] <= 40
        assert timing["init_ms"] > 0 and timing["first_inference_ms"] > 0
    assert {(r["runtime"], r["int8"], r["fp32"]) for r in report["ratios"]} >= {
        ("onnxruntime", "model_int8.onnx", "model.onnx"), ("litert", "model_int8.tflite", "model.tflite")}
    ratio = next(r for r in report["ratios"] if r["runtime"] == "litert")
    assert ratio["p50_ratio"] == (artifacts["model_int8.tflite"]["stats"]["p50_ms"]
                                  / artifacts["model.tflite"]["stats"]["p50_ms"])
    assert report["headline"] == {name: a["stats"]["p90_ms"] for name, a in artifacts.items()}
    assert report["peak_rss_bytes"] > 0 and report["host"]["logical_cpus"] >= 1
    assert [c["concurrency"] for c in report["concurrent"]] == [2] * len(artifacts)
    estimate = report["estimate"]
    assert estimate["target"] == "ethos-u55" and estimate["default_mode"] == "low_power"
    assert estimate["vela"]["ratio"] > 0 and estimate["error"] == "unvalidated"


def test_bench_text_of_one_file_brings_its_int8_twin(reference_build, tmp_path):
    _, folder = reference_build
    proc = run_cli("bench", str(folder / "model.tflite"), "--samples", "20", "--budget", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "model_int8.tflite" in proc.stdout and "int8/fp32 litert" in proc.stdout
    assert "headline (single-stream p90)" in proc.stdout


def test_bench_runtime_filter(reference_build, tmp_path):
    _, folder = reference_build
    proc = run_cli("bench", str(folder), "--runtime", "onnxruntime", "--json", "--samples", "10", "--budget", "1",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert {a["runtime"] for a in json.loads(proc.stdout)["artifacts"]} == {"onnxruntime"}


def test_bench_unknown_power_mode_is_a_user_error(reference_build, tmp_path):
    _, folder = reference_build
    proc = run_cli("bench", str(folder), "--target", "mobile-npu", "--power-mode", "warp", cwd=tmp_path)
    assert proc.returncode == 1
    assert "burst" in proc.stderr and "Traceback" not in proc.stderr


def test_bench_missing_file_is_a_user_error(tmp_path):
    proc = run_cli("bench", str(tmp_path / "nope.onnx"), cwd=tmp_path)
    assert proc.returncode == 1 and "not found" in proc.stderr


def test_bench_int8_forms_adds_the_uint8_twin_of_the_qdq_model(reference_build, tmp_path):
    """``--int8-forms`` on model.onnx + model_int8.onnx: QOperator and the uint8-activation QDQ twin are timed too."""
    import shutil

    _, folder = reference_build
    for name in ("model.onnx", "model_int8.onnx"):
        shutil.copyfile(folder / name, tmp_path / name)
    proc = run_cli("bench", str(tmp_path / "model.onnx"), str(tmp_path / "model_int8.onnx"), "--int8-forms",
                   "--json", "--samples", "10", "--budget", "1", "--warmup", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    forms = {f["artifact"]: f for f in json.loads(proc.stdout)["int8_forms"]}
    assert set(forms) == {"model_int8.onnx", "model_int8_qoperator.onnx", "model_int8_qdq_u8.onnx"}
    assert all(f["fp32_artifact"] == "model.onnx" and f["ratio_to_fp32"] > 0 for f in forms.values())
