"""Ladder settings, recipes and the QAT applicability rule (fast, no conversion)."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.config import BuildConfig
from edgepipe.errors import ConfigError, ProfileError
from edgepipe.load import load_model
from edgepipe.quantize.ladder import LadderContext, LadderSettings
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.settings import ladder_settings
from edgepipe.quantize.steps import LADDER_STEPS, qat_step
from edgepipe.targets import load_profile
from edgepipe.targets.profile import Quantization, TargetProfile
from edgepipe.targets.registry import use_profile_dirs


def test_ladder_steps_are_registered_in_order() -> None:
    assert [name for name, _ in LADDER_STEPS] == ["ptq", "calibration", "equalize", "nncf", "mixed", "qat"]


def test_recipe_labels_and_mixed_layers() -> None:
    recipe = QuantRecipe(method="entropy", per_channel=False, symmetric_activations=True)
    assert recipe.label == "entropy/per-tensor/int8/sym"
    assert not recipe.is_mixed
    mixed = recipe.raising("conv1", "a16w8").raising("conv2", "float")
    assert mixed.is_mixed and mixed.keep_a16w8 == ("conv1",) and mixed.keep_float == ("conv2",)
    assert mixed.label == "entropy/per-tensor/int8/sym +1 a16w8 +1 float"


def test_settings_follow_config_and_target_profile() -> None:
    config = BuildConfig.model_validate({"quantization": {"granularity": "per-tensor", "precisions": ["int8", "float"],
                                                          "mixed_budget": 0.5}})
    settings = ladder_settings(config, (load_profile("host-cpu"),))
    assert settings.start == QuantRecipe(per_channel=False)
    assert settings.precisions == ("int8", "float") and settings.mixed_budget == 0.5


def test_the_qat_budget_reaches_the_ladder_and_must_be_positive() -> None:
    config = BuildConfig.model_validate({"quantization": {"qat_budget_s": 120}})
    assert ladder_settings(config, (load_profile("host-cpu"),)).qat_budget_s == 120.0
    assert ladder_settings(BuildConfig(), ()).qat_budget_s == 900.0
    with pytest.raises(ValueError, match="qat_budget_s"):
        BuildConfig.model_validate({"quantization": {"qat_budget_s": 0}})


def _profile(**quantization: object) -> TargetProfile:
    spec = {"activations": ["int8"], "weights": ["int8"], **quantization}
    return TargetProfile(name="npu", description="an NPU", device_class="npu", quantization=Quantization(**spec))


def test_profile_without_int16_or_per_channel_narrows_the_ladder() -> None:
    settings = ladder_settings(BuildConfig(), (_profile(per_channel_weights=False),))
    assert "a16w8" not in settings.precisions and settings.granularities == ("per-tensor",)
    assert settings.granularity == "per-tensor"


@pytest.mark.parametrize(("spec", "allowed"), [
    ({"activations": ["int8", "int16"], "cpu_fallback": False}, ("int8", "a16w8")),
    ({"activations": ["int8", "int16"], "cpu_fallback": True}, ("int8", "a16w8", "float")),
    ({"activations": ["int8", "fp16"], "weights": ["int8", "fp16"], "cpu_fallback": False}, ("int8", "float")),
    ({"activations": ["int8", "int16"], "weights": ["int16"], "cpu_fallback": False}, ()),
])
def test_layer_precisions_follow_the_formats_the_accelerator_runs(spec: dict, allowed: tuple) -> None:
    assert _profile(**spec).quantization.layer_precisions == allowed  # type: ignore[union-attr]


@pytest.mark.parametrize(("target", "allowed"), [
    ("ethos-u55", ("int8", "a16w8")), ("ethos-u85", ("int8", "a16w8")), ("edge-tpu", ("int8",)),
    ("mobile-npu", ("int8", "a16w8", "float")), ("rk3588", ("int8", "float")), ("gpu-reference", ("int8", "float")),
    ("host-cpu", ("int8", "a16w8", "float")),
])
def test_the_ladder_proposes_only_what_each_target_runs(target: str, allowed: tuple) -> None:
    assert ladder_settings(BuildConfig(), (load_profile(target),)).precisions == allowed


def test_an_unknown_quantization_key_names_the_key_the_file_and_what_is_allowed(tmp_path: Path) -> None:
    (tmp_path / "my-npu.toml").write_text('description = "x"\ndevice_class = "npu"\n[quantization]\n'
                                          'activations = ["int8"]\nweights = ["int8"]\ncpu_falback = false\n')
    with use_profile_dirs([tmp_path]), pytest.raises(ProfileError) as error:
        load_profile("my-npu")
    message = error.value.one_line()
    assert "cpu_falback" in message and "my-npu.toml" in message and "cpu_fallback" in message


def test_unknown_quantization_key_is_a_config_error(tmp_path: Path) -> None:
    from edgepipe.config import load_config

    (tmp_path / "edgepipe.toml").write_text("[quantization]\nbudget = 0.3\n")
    with pytest.raises(ConfigError, match="quantization.budget"):
        load_config(cwd=tmp_path)


def test_qat_says_why_it_cannot_train_an_onnx_model_without_calibration_data(tiny: dict[str, Path]) -> None:
    model = load_model(tiny["onnx"])
    context = LadderContext(model=model, graph=None, floats={"onnx": tiny["onnx"]}, calibration=None,  # type: ignore[arg-type]
                            selection=None, evaluation=None, train=None, threshold=1.0,  # type: ignore[arg-type]
                            settings=LadderSettings(), work=Path("unused"))
    outcome = qat_step(context).outcome
    assert outcome.status == "skipped" and "ONNX" in outcome.note and "calibration" in outcome.note
    assert "\n" not in outcome.note
