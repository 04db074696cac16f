"""Resource limits: refused from sizes and headers before allocation; the stage timeout; the [limits] table."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from edgepipe.config import load_config
from edgepipe.errors import ConfigError, DataError
from edgepipe.limits import (
    LimitExceeded,
    ResourceLimits,
    active,
    check_declared_tensor,
    check_model_file,
    stage_deadline,
    use_limits,
)
from edgepipe.stage_log import StageLog


def test_declared_size_is_exact_for_absurd_shapes(tmp_path: Path) -> None:
    with pytest.raises(LimitExceeded, match="above the limit"):
        check_declared_tensor("x", [2**62, 2**62, 2**62], 4, tmp_path / "m.onnx")  # no overflow, no allocation
    with pytest.raises(LimitExceeded, match="negative"):
        check_declared_tensor("x", [1, -5], 4, tmp_path / "m.onnx")
    assert check_declared_tensor("x", [None, 8, 8, 1], 4, tmp_path / "m.onnx") == 256


def test_limits_apply_only_inside_use_limits(tmp_path: Path) -> None:
    model = tmp_path / "m.tflite"
    model.write_bytes(b"\0" * 4096)
    assert check_model_file(model) == 4096
    with use_limits(ResourceLimits(max_model_mb=1 / 1024)), pytest.raises(LimitExceeded, match="4,096 bytes"):
        check_model_file(model)
    assert active() == ResourceLimits()


def test_npz_member_declaring_too_much_is_refused_before_loading(tmp_path: Path) -> None:
    from edgepipe.data.headers import check_declared_arrays

    path = tmp_path / "calib.npz"
    np.savez(path, x=np.zeros((64, 8, 8, 1), np.float32), y=np.zeros((64, 8, 8, 1), np.float32))
    check_declared_arrays(path, is_npy=False)
    with use_limits(ResourceLimits(max_data_mb=0.02)), pytest.raises(LimitExceeded, match="declares 32.*bytes"):
        check_declared_arrays(path, is_npy=False)
    with use_limits(ResourceLimits(max_tensor_mb=0.01)), pytest.raises(LimitExceeded, match="tensor 'x'"):
        check_declared_arrays(path, is_npy=False)


def test_object_array_is_refused_from_its_header(tmp_path: Path) -> None:
    from edgepipe.data.headers import check_declared_arrays

    path = tmp_path / "calib.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="pickled"):
        check_declared_arrays(path, is_npy=True)


def test_stage_deadline_stops_a_stage_that_runs_too_long() -> None:
    with pytest.raises(LimitExceeded, match="stage 'latency' ran longer than limits.stage_timeout_s = 0.05 s"):
        with stage_deadline("latency", 0.05):
            while True:
                time.sleep(0.01)


def test_a_nested_stage_keeps_the_outer_deadline() -> None:
    with pytest.raises(LimitExceeded, match="'report'"):
        with stage_deadline("report", 0.2):
            with stage_deadline("support", 60):
                pass
            while True:
                time.sleep(0.01)


def test_stage_log_applies_the_active_timeout() -> None:
    stages = StageLog()
    with use_limits(ResourceLimits(stage_timeout_s=0.05)), pytest.raises(LimitExceeded, match="'quantize'"):
        with stages.stage("quantize"):
            while True:
                time.sleep(0.01)
    with stages.stage("export"):  # no limit outside the build: the timer was cancelled
        time.sleep(0.1)


@pytest.mark.parametrize("table", ["max_model_mb = 0", "stage_timeout_s = -1", "max_tensor_mb = 'big'",
                                   "max_rows = 5"])
def test_bad_limits_table_is_a_config_error(tmp_path: Path, table: str) -> None:
    config = tmp_path / "edgepipe.toml"
    config.write_text(f"[limits]\n{table}\n")
    with pytest.raises(ConfigError, match="limits"):
        load_config(config)


def test_limits_table_reaches_the_build_limits(tmp_path: Path) -> None:
    config = tmp_path / "edgepipe.toml"
    config.write_text("[limits]\nmax_model_mb = 10\nstage_timeout_s = 600\n")
    limits = load_config(config).limits.to_limits()
    assert limits == ResourceLimits(max_model_mb=10, stage_timeout_s=600)
    assert limits.max_model_bytes == 10 * 2**20
