"""A wheel that works anywhere: built-in profiles, the reference model and its data ship as package data, and an
installed (not editable) edgepipe lists every profile and builds the default model from an empty folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from edgepipe.config import PROJECT_ROOT
from edgepipe.targets import available_targets

pytestmark = pytest.mark.slow

#: What the checkout holds that a build never reads; left out of the copy the wheel is built from.
_NOT_SOURCES = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".edgepipe-cache",
                                      ".pytest_cache", ".ruff_cache", ".mypy_cache", ".venv", "tests", "docs")


def _run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{args}: {proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def _isolation() -> list[str]:
    """Build with this venv's setuptools when it is new enough for pyproject.toml (saves fetching it from PyPI)."""
    try:
        major = int(metadata.version("setuptools").split(".")[0])
    except metadata.PackageNotFoundError:
        return []
    return ["--no-build-isolation"] if major >= 77 else []


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel --no-deps`` of a clean copy of the checkout (so the checkout's build/ is never reused)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(PROJECT_ROOT, source, ignore=_NOT_SOURCES)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps", *_isolation(), "--quiet", source, "-w", work / "dist",
         cwd=work)
    (found,) = (work / "dist").glob("edgepipe-*.whl")
    return found


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (``--no-deps``); the test venv's packages (TensorFlow, …) are
    reachable through a .pth line, which does not run the test venv's own .pth files, so the editable
    install of the checkout cannot shadow the wheel. Returns the venv's bin folder."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    _run(sys.executable, "-m", "venv", venv, cwd=venv.parent)
    python = venv / "bin" / "python"
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                     cwd=venv.parent).stdout.strip())
    (site / "zz_test_venv_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    _run(python, "-m", "pip", "install", "--quiet", "--no-deps", "--force-reinstall", wheel, cwd=venv.parent)
    return venv / "bin"


def _env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_STEP_SUMMARY")}
    return keep | {"PYTHONNOUSERSITE": "1"}


def test_wheel_carries_every_profile_the_model_and_its_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    profiles = {p.name for p in (PROJECT_ROOT / "targets").glob("*.toml")}
    assert {f"edgepipe/_bundled/targets/{name}" for name in profiles} <= names
    assert "edgepipe/_bundled/models/digits_cnn/digits_cnn.keras" in names
    splits = {"calibration", "evaluation", "selection", "train"}
    assert {f"edgepipe/_bundled/calib/digits/{s}.npz" for s in splits} <= names
    assert not any(n.endswith(".py") and "_bundled" in n for n in names), "training scripts stay in the repo"
    assert not any(n.startswith(("targets/", "models/", "calib/", "tests/")) for n in names)


def test_installed_wheel_lists_every_profile_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    where = _run(installed / "python", "-c", "import edgepipe; print(edgepipe.__file__)", cwd=tmp_path, env=_env())
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), "the wheel, not the checkout, is imported"
    listed = _run(installed / "edgepipe", "targets", "list", cwd=tmp_path, env=_env()).stdout
    assert [line.split()[0] for line in listed.splitlines()] == available_targets()


def test_installed_wheel_builds_the_default_model_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    env = _env() | {"EDGEPIPE_CACHE_DIR": str(tmp_path / "cache")}
    proc = _run(installed / "edgepipe", "build", "--quiet", cwd=tmp_path, env=env)
    assert "host-cpu: PASS" in proc.stdout
    report = tmp_path / "build" / "digits_cnn" / "host-cpu" / "report.json"
    assert report.is_file() and '"verdict": "pass"' in report.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "cache"], "nothing else written here"
