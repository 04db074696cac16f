"""Every performance figure says what it is, and an error is printed only when it was measured on held-out models
on this (calibrated) host."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.perf.calibration import HostMeasurement, held_out_error, write_override
from edgepipe.perf.predict import predict
from edgepipe.perf.render import render_performance_markdown
from edgepipe.resources import bundled
from edgepipe.targets import load_profile, use_profile_dirs
from tests.models import make_models

RATES = HostMeasurement(conv_gmacs=100.0, gemm_gmacs=50.0, depthwise_gmacs=10.0, bandwidth_gbps=20.0,
                        weight_bandwidth_gbps=10.0, per_op_overhead_us=1.0, per_run_overhead_us=5.0)
HELD_OUT = """
[performance.error]
median_abs_pct = 21.4
within_25_pct_share = 0.6
models = 5
measured_on = "held-out set of benchmarks/models.toml, test host"
"""


@pytest.fixture
def overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("EDGEPIPE_OVERRIDES_DIR", str(tmp_path / "overrides"))
    return tmp_path / "overrides"


@pytest.fixture(scope="module")
def tiny_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_models.tiny_onnx(tmp_path_factory.mktemp("kinds") / "tiny.onnx")


def test_uncalibrated_host_prints_no_error_figure(overrides: Path, tiny_onnx: Path) -> None:
    report = predict(tiny_onnx, load_profile("host-cpu"))
    assert report.error == "unvalidated"
    assert report.kind == "model estimate" and {m.kind for m in report.modes} == {"model estimate"}
    text = "\n".join(render_performance_markdown(report))
    assert "error: unvalidated" in text and "model estimate" in text and "measured on" not in text


def test_calibrated_without_a_held_out_measurement_is_still_unvalidated(overrides: Path, tiny_onnx: Path) -> None:
    write_override("host-cpu", RATES)
    assert held_out_error(load_profile("host-cpu")) == "unvalidated"


def test_calibrated_host_prints_the_held_out_error(overrides: Path, tiny_onnx: Path) -> None:
    path = write_override("host-cpu", RATES)
    path.write_text(path.read_text(encoding="utf-8") + HELD_OUT, encoding="utf-8")
    report = predict(tiny_onnx, load_profile("host-cpu"))
    assert report.error.startswith("±21% median on 5 held-out models, 60% within ±25%")
    write_override("host-cpu", RATES)  # recalibrating drops the figure: it belonged to the old rates
    assert held_out_error(load_profile("host-cpu")) == "unvalidated"


def test_an_error_written_into_a_profile_is_not_printed(overrides: Path, tmp_path: Path, tiny_onnx: Path) -> None:
    folder = tmp_path / "profiles"
    folder.mkdir()
    text = (bundled("targets") / "host-cpu.toml").read_text(encoding="utf-8")
    (folder / "my-host.toml").write_text(text + HELD_OUT, encoding="utf-8")
    with use_profile_dirs([folder]):
        profile = load_profile("my-host")
    assert profile.performance is not None and profile.performance.error.models == 5
    assert predict(tiny_onnx, profile).error == "unvalidated"


def test_no_bundled_profile_carries_a_hand_copied_error() -> None:
    for path in sorted(bundled("targets").glob("*.toml")):
        assert "[performance.error]" not in path.read_text(encoding="utf-8"), path.name
