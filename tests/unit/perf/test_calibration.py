"""``edgepipe calibrate`` writes a local override, and host-cpu predictions use it."""

from __future__ import annotations

import json

import pytest

from edgepipe.perf.calibration import HostMeasurement, effective_performance, override_path, write_override
from edgepipe.perf.predict import predict
from edgepipe.targets import load_profile
from tests.conftest import run_cli

MEASURED = HostMeasurement(conv_gmacs=100.0, gemm_gmacs=50.0, depthwise_gmacs=10.0, bandwidth_gbps=20.0,
                           weight_bandwidth_gbps=10.0, per_op_overhead_us=1.0, per_run_overhead_us=5.0)


@pytest.fixture
def overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEPIPE_OVERRIDES_DIR", str(tmp_path))
    return tmp_path


def test_override_path_follows_env_then_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEPIPE_OVERRIDES_DIR", str(tmp_path / "a"))
    assert override_path("host-cpu") == tmp_path / "a" / "host-cpu.toml"
    monkeypatch.delenv("EDGEPIPE_OVERRIDES_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert override_path("host-cpu") == tmp_path / "cfg" / "edgepipe" / "host-cpu.toml"


def test_predictor_uses_the_override(overrides, tiny):
    profile = load_profile("host-cpu")
    before = predict(tiny["onnx"], profile).delegate.total_ms
    write_override("host-cpu", MEASURED)
    spec = effective_performance(profile)
    assert spec.accelerator.fp32_gmacs == 100.0 and spec.accelerator.efficiency["gemm"] == 0.5
    after = predict(tiny["onnx"], profile).delegate.total_ms
    # by hand (µs): conv max(5184/100e3, 1440 B/20e3 + 608 B/10e3) + 1 = 1.1328; pool max(288/100e3,
    # 1184/20e3) + 1 = 1.0592; matmul max(32/50e3, 48/20e3 + 128/10e3) + 1 = 1.0152; + 5 per run
    assert after == pytest.approx((1.1328 + 1.0592 + 1.0152 + 5.0) / 1e3)
    assert after != pytest.approx(before)


def test_calibrate_cli_writes_the_override(overrides, tmp_path):
    proc = run_cli("calibrate", "host-cpu", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["override"] == str(overrides / "host-cpu.toml")
    assert result["conv_gmacs"] > 0 and result["bandwidth_gbps"] > 0
    spec = effective_performance(load_profile("host-cpu"))
    assert spec.accelerator.fp32_gmacs == pytest.approx(result["conv_gmacs"], rel=1e-3)


def test_calibrate_refuses_a_device_it_cannot_measure(overrides, tmp_path):
    proc = run_cli("calibrate", "ethos-u55", cwd=tmp_path)
    assert proc.returncode == 1 and "host-cpu" in proc.stderr
