"""The baseline regression gate: one test per check, and a real injected regression caught end to end."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from edgepipe.config import GateConfig
from edgepipe.gate import compare, load_reports, render_diff_markdown, render_diff_text, write_baseline
from edgepipe.gate.checks import check_accuracy, check_int8_drop, check_latency, check_placement, check_size
from edgepipe.report.schema import BuildReport
from tests.e2e.conftest import Build, edgepipe

TOL = GateConfig()


@pytest.fixture(scope="module")
def report(first_build: Build) -> dict[str, Any]:
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    return json.loads((first_build.root / "host-cpu" / "report.json").read_text())


def _regressed(findings: list) -> list[str]:
    return [f.subject for f in findings if f.regression]


def test_accuracy_fall_beyond_tolerance_is_a_regression(report: dict[str, Any]) -> None:
    worse = copy.deepcopy(report)
    worse["accuracy"]["int8"]["tflite"] -= 0.01  # one point
    assert _regressed(check_accuracy(report, worse, TOL)) == ["int8 tflite"]
    slightly = copy.deepcopy(report)
    slightly["accuracy"]["int8"]["tflite"] -= 0.004
    assert _regressed(check_accuracy(report, slightly, TOL)) == []
    assert _regressed(check_accuracy(report, report, TOL)) == []


def test_int8_drop_growth_is_a_regression(report: dict[str, Any]) -> None:
    worse = copy.deepcopy(report)
    worse["accuracy"]["drop_points"]["onnx"] += 0.75
    assert _regressed(check_int8_drop(report, worse, TOL)) == ["onnx"]
    assert _regressed(check_int8_drop(report, worse, TOL.model_copy(update={"drop_points": 1.0}))) == []


def _latency(report: dict[str, Any], artifact: str, median: float, low: float, high: float) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    changed["latency"][artifact].update(median_ms=median, ci_low_ms=low, ci_high_ms=high)
    return changed


def test_latency_tolerance_comes_from_the_confidence_intervals(report: dict[str, Any]) -> None:
    old = _latency(report, "model_int8.tflite", 1.0, 0.9, 1.1)
    overlapping = _latency(report, "model_int8.tflite", 1.25, 1.05, 1.4)
    apart = _latency(report, "model_int8.tflite", 1.5, 1.4, 1.6)
    exact = TOL.model_copy(update={"latency_slack_pct": 0.0})
    assert _regressed(check_latency(old, overlapping, exact)) == []
    assert _regressed(check_latency(old, apart, exact)) == ["model_int8.tflite"]
    # the same 50 % slower median is no regression when its interval is wide enough to overlap
    wide = _latency(report, "model_int8.tflite", 1.5, 1.0, 2.0)
    assert _regressed(check_latency(old, wide, exact)) == []
    # the slack widens the baseline's interval: 1.1 × 1.3 = 1.43 > 1.4
    assert _regressed(check_latency(old, apart, TOL.model_copy(update={"latency_slack_pct": 30.0}))) == []


def test_latency_without_intervals_is_shown_but_not_gated(report: dict[str, Any]) -> None:
    old = _latency(report, "model.onnx", 1.0, 0.9, 1.1)
    old["latency"]["model.onnx"].update(ci_low_ms=None, ci_high_ms=None)
    slower = _latency(report, "model.onnx", 9.0, 8.0, 10.0)
    findings = [f for f in check_latency(old, slower, TOL) if f.subject == "model.onnx"]
    assert len(findings) == 1 and not findings[0].regression and "not gated" in findings[0].tolerance


def _with_support(report: dict[str, Any], placement: dict[str, str]) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    verdicts = [{"index": i, "name": name, "op": name, "placement": unit}
                for i, (name, unit) in enumerate(placement.items())]
    on_accelerator = sum(unit == "accelerator" for unit in placement.values())
    changed["support"] = {
        "target": "host-cpu", "artifact": "model_int8.onnx", "format": "onnx", "partition_semantics": "any",
        "nodes": len(verdicts), "accelerator_nodes": on_accelerator, "node_share": on_accelerator / len(verdicts),
        "macs": 0, "accelerator_macs": 0, "mac_share": 1.0, "partitions": 1, "transitions": 0,
        "peak_activation_bytes": 0, "weights_bytes": 0, "sram_bytes": None, "fits_sram": None,
        "cpu_ops": {}, "node_verdicts": verdicts, "partition_list": []}
    return changed


def test_an_op_newly_on_the_cpu_is_a_placement_regression(report: dict[str, Any]) -> None:
    old = _with_support(report, {"conv": "accelerator", "softmax": "cpu", "pool": "accelerator"})
    new = _with_support(report, {"conv": "accelerator", "softmax": "cpu", "pool": "cpu"})
    findings = check_placement(old, new, TOL)
    assert _regressed(findings) == ["pool", "ops on the CPU"]
    assert _regressed(check_placement(old, old, TOL)) == []
    assert check_placement(old, new, TOL.model_copy(update={"placement": False})) == []
    unplaced = report | {"support": None, "performance": None}
    assert check_placement(unplaced, new, TOL) == [], "no placement in the baseline: not checked"


def test_size_growth_is_a_regression(report: dict[str, Any]) -> None:
    bigger = copy.deepcopy(report)
    for artifact in bigger["artifacts"]:
        if artifact["path"] == "model_int8.tflite":
            artifact["size_bytes"] = int(artifact["size_bytes"] * 1.2)
    assert _regressed(check_size(report, bigger, TOL)) == ["model_int8.tflite"]
    missing = copy.deepcopy(report)
    missing["artifacts"] = [a for a in missing["artifacts"] if a["path"] != "model.onnx"]
    assert _regressed(check_size(report, missing, TOL)) == ["model.onnx"]


def test_diff_table_names_target_check_and_subject(report: dict[str, Any]) -> None:
    worse = copy.deepcopy(report)
    worse["accuracy"]["int8"]["onnx"] -= 0.05
    result = compare({"host-cpu": BuildReport.model_validate(worse)}, {"host-cpu": BuildReport.model_validate(report)},
                     TOL)
    assert not result.passed and len(result.regressions) == 1
    text = render_diff_text(result)
    assert "1 regression(s)" in text
    line = next(line for line in text.splitlines() if "REGRESSION" in line)
    assert "host-cpu" in line and "accuracy" in line and "int8 onnx" in line and "93.00%" in line
    markdown = render_diff_markdown(result)
    assert "| host-cpu | accuracy | int8 onnx |" in markdown and "**REGRESSION**" in markdown


def test_targets_only_in_one_side(report: dict[str, Any]) -> None:
    current = {"host-cpu": BuildReport.model_validate(report)}
    other = BuildReport.model_validate(report | {"target": "other"})
    result = compare({**current, "other": other}, current, TOL)
    assert result.compared == ["host-cpu"] and result.without_baseline == ["other"] and result.passed
    assert compare(current, {**current, "other": other}, TOL).compared == ["host-cpu"]


def test_baseline_update_keeps_other_targets(tmp_path: Path, report: dict[str, Any]) -> None:
    path = tmp_path / "baseline.json"
    write_baseline({"a": BuildReport.model_validate(report | {"target": "a"})}, path)
    write_baseline({"b": BuildReport.model_validate(report | {"target": "b"})}, path)
    assert sorted(load_reports(path)) == ["a", "b"]
    write_baseline({"b": BuildReport.model_validate(report | {"target": "b"})}, path, replace=True)
    assert sorted(load_reports(path)) == ["b"]


def test_gate_command_passes_a_build_against_its_own_baseline(first_build: Build, baseline_file: Path) -> None:
    proc = edgepipe("gate", str(first_build.root), "--baseline", str(baseline_file), cwd=first_build.cwd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no regressions in 1 target(s)" in proc.stdout


def test_bad_baseline_is_a_one_line_user_error(first_build: Build, tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"target": 1}', encoding="utf-8")
    proc = edgepipe("gate", str(first_build.root), "--baseline", str(tmp_path / "bad.json"), cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "bad.json" in proc.stderr and "baseline update" in proc.stderr


def test_damaged_model_is_caught_by_the_baseline_gate(damaged_build: Build) -> None:
    proc = damaged_build.proc
    assert proc.returncode == 2, proc.stdout + proc.stderr[-3000:]
    report = json.loads((damaged_build.root / "host-cpu" / "report.json").read_text())
    assert report["verdict"] == "pass", "the int8 drop is small: only the baseline can catch this model"
    regressions = [line for line in proc.stdout.splitlines() if "REGRESSION" in line]
    assert any("accuracy" in line and "int8 tflite" in line and "98.00%" in line for line in regressions), proc.stdout
    assert any("accuracy" in line and "float" in line for line in regressions)
    assert "baseline gate: " in proc.stdout and "regression(s) in 1 target(s)" in proc.stdout


def test_gate_command_catches_the_damaged_build(damaged_build: Build, baseline_file: Path) -> None:
    proc = edgepipe("gate", str(damaged_build.root / "summary.json"), "--baseline", str(baseline_file), "--json",
                    cwd=damaged_build.cwd)
    assert proc.returncode == 2
    document = json.loads(proc.stdout)
    assert document["passed"] is False and document["compared"] == ["host-cpu"]
    regressed = {(f["check"], f["subject"]) for f in document["findings"] if f["regression"]}
    assert {("accuracy", "float"), ("accuracy", "int8 onnx"), ("accuracy", "int8 tflite")} <= regressed


def test_baseline_from_an_older_edgepipe_still_gates(first_build: Build, report: dict[str, Any],
                                                     tmp_path: Path) -> None:
    old = copy.deepcopy(report) | {"performance": {"estimator": "a model this edgepipe no longer knows"},
                                   "retired_section": {"x": 1}}
    path = tmp_path / "old_baseline.json"
    path.write_text(json.dumps({"baseline_version": "1", "reports": {"host-cpu": old}}), encoding="utf-8")
    proc = edgepipe("gate", str(first_build.root), "--baseline", str(path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    newer = copy.deepcopy(old) | {"schema_version": "2.0"}
    path.write_text(json.dumps({"baseline_version": "1", "reports": {"host-cpu": newer}}), encoding="utf-8")
    proc = edgepipe("gate", str(first_build.root), "--baseline", str(path), cwd=tmp_path)
    assert proc.returncode == 1 and "report schema 2.0" in proc.stderr
