"""Builds the CI tests share: the reference model built once (with JUnit and a step summary), rebuilt from
the cache, built again for every target without the cache, and a damaged model gated against the first."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
XSD = HERE / "data" / "junit.xsd"


def edgepipe(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``edgepipe`` console script in ``cwd`` with extra environment ``env``."""
    exe = Path(sys.executable).with_name("edgepipe")
    full_env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}  # CI's own stays untouched
    full_env.update(env or {})
    return subprocess.run([str(exe), *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=1200)


@dataclass(frozen=True)
class Build:
    """One ``edgepipe build`` run: the process, its working folder and the model folder it wrote."""

    proc: subprocess.CompletedProcess[str]
    cwd: Path
    root: Path
    env: dict[str, str]
    before: dict[str, bytes] | None = None


@pytest.fixture(scope="session")
def first_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """``edgepipe build`` of the reference model for host-cpu, filling a fresh cache, with --junit and a
    GitHub step summary file."""
    cwd = tmp_path_factory.mktemp("first_build")
    env = {"EDGEPIPE_CACHE_DIR": str(cwd / "cache"), "GITHUB_STEP_SUMMARY": str(cwd / "step_summary.md")}
    proc = edgepipe("build", "--quiet", "--junit", "junit.xml", cwd=cwd, env=env)
    return Build(proc, cwd, cwd / "build" / "digits_cnn", env)


@pytest.fixture(scope="session")
def cached_build(first_build: Build) -> Build:
    """The same build again, same folder and cache: nothing changed, so it is restored from the cache."""
    snapshot = {p.name: p.read_bytes() for p in (first_build.root / "host-cpu").iterdir()}
    proc = edgepipe("build", "--quiet", "--json", cwd=first_build.cwd, env={**first_build.env,
                                                                           "GITHUB_STEP_SUMMARY": ""})
    return Build(proc, first_build.cwd, first_build.root, first_build.env, before=snapshot)


@pytest.fixture(scope="session")
def all_targets_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """``edgepipe build --all-targets --no-cache`` of the reference model, in another clean folder."""
    cwd = tmp_path_factory.mktemp("all_targets")
    env = {"EDGEPIPE_CACHE_DIR": str(cwd / "cache")}
    proc = edgepipe("build", "--quiet", "--all-targets", "--no-cache", "--junit", "junit.xml", cwd=cwd, env=env)
    return Build(proc, cwd, cwd / "build" / "digits_cnn", env)


@pytest.fixture(scope="session")
def baseline_file(first_build: Build) -> Path:
    """``edgepipe baseline update`` of the first build."""
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    proc = edgepipe("baseline", "update", str(first_build.root), "-o", "baseline.json", cwd=first_build.cwd)
    assert proc.returncode == 0, proc.stderr
    return first_build.cwd / "baseline.json"


@pytest.fixture(scope="session")
def damaged_build(tmp_path_factory: pytest.TempPathFactory, baseline_file: Path, reference_data: Path) -> Build:
    """The reference model with damaged weights, built and gated against the first build's baseline."""
    cwd = tmp_path_factory.mktemp("damaged")
    model = cwd / "digits_cnn.keras"
    subprocess.run([sys.executable, str(HERE / "make_regressions.py"), str(model)], check=True, capture_output=True,
                   timeout=600)
    env = {"EDGEPIPE_CACHE_DIR": str(cwd / "cache")}
    proc = edgepipe("build", "--quiet", "--model", str(model), "--calib", str(reference_data / "calibration.npz"),
                    "--eval", str(reference_data / "evaluation.npz"), "--baseline", str(baseline_file),
                    "--junit", "junit.xml", cwd=cwd, env=env)
    return Build(proc, cwd, cwd / "build" / "digits_cnn", env)
