"""Every bundled profile's [performance] validates; power modes where the issue asks for them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from edgepipe.perf.calibration import effective_performance
from edgepipe.targets import available_targets, load_profile
from edgepipe.targets.performance import MeasuredError, PerformanceSpec

BUILDABLE = [name for name in available_targets() if not getattr(load_profile(name), "abstract", False)]


@pytest.mark.parametrize("name", BUILDABLE)
def test_every_target_declares_performance(name, monkeypatch, tmp_path):
    monkeypatch.setenv("EDGEPIPE_OVERRIDES_DIR", str(tmp_path))
    spec = effective_performance(load_profile(name))
    assert spec is not None, f"{name} has no [performance]"
    assert spec.accelerator.clock > 0 and spec.accelerator.bandwidth > 0
    assert spec.mode().name == spec.default_power_mode
    assert spec.sources, f"{name}: performance figures need sources"


def test_power_modes_in_at_least_four_profiles():
    with_modes = [n for n in BUILDABLE if (load_profile(n).performance or None) and
                  len(load_profile(n).performance.power_modes) >= 2]
    assert len(with_modes) >= 4, with_modes


def test_mobile_npu_modes_are_qnn_htp_performance_modes():
    names = {m.name for m in load_profile("mobile-npu").performance.power_modes}
    assert {"burst", "sustained_high_performance", "power_saver"} <= names


def test_unknown_key_is_rejected(toy_spec):
    raw = toy_spec.model_dump()
    raw["accelerator"]["turbo"] = True
    with pytest.raises(ValidationError, match="turbo"):
        PerformanceSpec.model_validate(raw)


def test_default_mode_must_exist(toy_spec):
    with pytest.raises(ValidationError, match="default_power_mode"):
        PerformanceSpec.model_validate({**toy_spec.model_dump(), "default_power_mode": "warp"})


def test_error_text():
    assert MeasuredError().describe() == "unvalidated"
    assert MeasuredError(median_abs_pct=12.4, models=17).describe() == "±12%, measured on 17 models"
