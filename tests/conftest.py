"""Shared fixtures: the repository's real model and data, tiny generated models, the probe TFLite models, and one
shared build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from edgepipe.config import DEFAULT_DATA, DEFAULT_MODEL, PROJECT_ROOT
from edgepipe.graph.opgraph import OpGraph
from tests.models import make_models


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return PROJECT_ROOT


@pytest.fixture(scope="session")
def reference_model() -> Path:
    return DEFAULT_MODEL


@pytest.fixture(scope="session")
def reference_data() -> Path:
    return DEFAULT_DATA


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Tiny Keras and ONNX models with their data, generated once per session."""
    folder = tmp_path_factory.mktemp("tiny")
    calib, evaluation = make_models.tiny_data(folder)
    onnx_calib, onnx_eval = make_models.tiny_onnx_data(folder)
    return {
        "keras": make_models.tiny_keras(folder / "tiny.keras"),
        "onnx": make_models.tiny_onnx(folder / "tiny.onnx"),
        "calib": calib, "eval": evaluation, "onnx_calib": onnx_calib, "onnx_eval": onnx_eval,
    }


@pytest.fixture(scope="session")
def probe_tflite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The 'probe' net (tests/models/nets.py) as int8 and as float TFLite, converted once per session."""
    from tests.models.nets import build_probe, to_float_tflite, to_int8_tflite

    folder = tmp_path_factory.mktemp("probe")
    model = build_probe()
    return {"int8": to_int8_tflite(model, folder / "probe_int8.tflite"),
            "float": to_float_tflite(model, folder / "probe_float.tflite")}


@pytest.fixture(scope="session")
def probe_graphs(probe_tflite: dict[str, Path]) -> dict[str, OpGraph]:
    """The probe TFLite models read as edgepipe reads them."""
    from edgepipe.graph.tflite_reader import read_tflite

    return {kind: read_tflite(path) for kind, path in probe_tflite.items()}


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the real ``edgepipe`` console script, as README shows it."""
    exe = Path(sys.executable).with_name("edgepipe")
    return subprocess.run([str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="session")
def reference_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``edgepipe build`` with no arguments, run once in an empty folder: (process, output folder)."""
    cwd = tmp_path_factory.mktemp("reference_build")
    proc = run_cli("build", "--quiet", cwd=cwd)
    return proc, cwd / "build" / "digits_cnn" / "host-cpu"
