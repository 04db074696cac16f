"""``edgepipe build --all-targets`` and repeated ``--target``: one report per target, shared work done once,
and a summary across the targets."""

from __future__ import annotations

import json

import pytest

from edgepipe.config import BuildConfig
from edgepipe.pipeline import quantization_groups
from edgepipe.targets import available_targets, load_profile
from tests.e2e.conftest import Build, edgepipe

pytestmark = pytest.mark.slow


def test_all_targets_writes_one_report_per_target_and_a_summary(all_targets_build: Build) -> None:
    proc = all_targets_build.proc
    assert proc.returncode in (0, 2), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    targets = available_targets()
    assert len(targets) >= 1
    folders = sorted(p.name for p in all_targets_build.root.iterdir() if p.is_dir())
    assert folders == sorted(targets), "one folder per profile, no staging leftovers"
    for name in targets:
        report = json.loads((all_targets_build.root / name / "report.json").read_text())
        assert report["target"] == name
    summary = json.loads((all_targets_build.root / "summary.json").read_text())
    assert [t["target"] for t in summary["targets"]] == targets
    failed = [t["target"] for t in summary["targets"] if t["verdict"] == "fail"]
    assert (proc.returncode == 2) == bool(failed) and summary["verdict"] == ("fail" if failed else "pass")
    table = (all_targets_build.root / "summary.md").read_text()
    assert all(f"| {name} |" in table for name in targets)


def _groups() -> list[list[str]]:
    profiles = tuple(load_profile(name) for name in available_targets())
    return [[t.name for t in group] for group in quantization_groups(BuildConfig(), profiles)]


def test_shared_work_runs_once_per_group_of_equal_requirements(all_targets_build: Build) -> None:
    groups = _groups()
    reports = {name: json.loads((all_targets_build.root / name / "report.json").read_text())
               for name in available_targets()}
    stages = [s["name"] for s in max(reports.values(), key=lambda r: len(r["stages"]))["stages"]]
    assert stages.count("load") == 1 and stages.count("export") == 1, stages
    for shared in ("quantize", "evaluate", "latency"):
        assert stages.count(shared) == len(groups), (shared, stages)
    # a report lists the stages finished before it was written: every other target's report stage
    assert len([s for s in stages if s.startswith("report:")]) == len(reports) - 1


def test_float_artifacts_are_shared_and_int8_ones_shared_within_a_group(all_targets_build: Build) -> None:
    root = all_targets_build.root
    names = available_targets()
    for artifact in ("model.onnx", "model.tflite"):
        assert len({(root / name / artifact).read_bytes() for name in names}) == 1, artifact
    for group in _groups():
        for artifact in ("model_int8.onnx", "model_int8.tflite"):
            present = [root / name / artifact for name in group if (root / name / artifact).is_file()]
            assert len({path.read_bytes() for path in present}) <= 1, (group, artifact)


def test_target_and_all_targets_together_is_a_user_error(tmp_path) -> None:
    proc = edgepipe("build", "--all-targets", "--target", "host-cpu", cwd=tmp_path)
    assert proc.returncode == 1
    assert "--all-targets" in proc.stderr and proc.stderr.count("\n") == 1
