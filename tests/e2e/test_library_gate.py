"""The baseline gate lives in the library: ``run_build`` callers get it through ``gate.baseline``, not only the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from edgepipe.cache import BuildCache
from edgepipe.config import load_config
from edgepipe.pipeline import run_build
from tests.e2e.conftest import Build


def _run(first_build: Build, baseline: Path, out: Path):  # noqa: ANN202 - a BuildResult
    config = load_config(None, {"output": out, "gate": {"baseline": baseline}}, cwd=first_build.cwd)
    return run_build(config, cache=BuildCache(first_build.cwd / "cache"))  # restored from the first build's cache


def test_run_build_compares_with_the_baseline(first_build: Build, baseline_file: Path, tmp_path: Path) -> None:
    result = _run(first_build, baseline_file, tmp_path / "same")
    assert result.cached == {"host-cpu": True}
    assert result.gate is not None and result.gate.compared == ["host-cpu"] and result.gate.passed
    assert result.passed
    assert "## Baseline comparison" in (result.root / "summary.md").read_text(encoding="utf-8")


def test_a_regression_against_the_baseline_fails_the_library_result(first_build: Build, baseline_file: Path,
                                                                     tmp_path: Path) -> None:
    better = json.loads(baseline_file.read_text(encoding="utf-8"))
    accuracy = better["reports"]["host-cpu"]["accuracy"]
    accuracy["int8"] = {fmt: value + 0.05 for fmt, value in accuracy["int8"].items()}  # a baseline 5 points better
    path = tmp_path / "better.json"
    path.write_text(json.dumps(better), encoding="utf-8")
    result = _run(first_build, path, tmp_path / "worse")
    assert result.gate is not None and not result.gate.passed and not result.passed
    assert {f.check for f in result.gate.regressions} == {"accuracy"}
    assert all(r.verdict == "pass" for r in result.reports.values()), "the target itself still passes"
