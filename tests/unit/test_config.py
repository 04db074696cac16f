"""The build spec: defaults, strict keys, file discovery, path resolution, CLI overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.config import DEFAULT_DATA, DEFAULT_MODEL, load_config
from edgepipe.errors import ConfigError


def test_no_config_builds_bundled_model_for_host_cpu(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path)
    assert config.model == DEFAULT_MODEL
    assert config.targets == ["host-cpu"]
    assert config.data.calibration == DEFAULT_DATA / "calibration.npz"
    assert config.data.evaluation == DEFAULT_DATA / "evaluation.npz"
    assert config.accuracy.max_drop_points == 1.0


def test_unknown_key_names_key_file_and_allowed_keys(tmp_path: Path) -> None:
    path = tmp_path / "edgepipe.toml"
    path.write_text('model = "m.keras"\n[accuracy]\nmax_drop = 2\n')
    with pytest.raises(ConfigError) as err:
        load_config(cwd=tmp_path)
    message = str(err.value)
    assert "accuracy.max_drop" in message and str(path) in message
    assert "max_drop_points" in message and "metric" in message


def test_unknown_top_level_key_lists_top_level_keys(tmp_path: Path) -> None:
    (tmp_path / "edgepipe.toml").write_text('modle = "m.keras"\n')
    with pytest.raises(ConfigError, match="unknown key 'modle'.*model.*targets"):
        load_config(cwd=tmp_path)


def test_invalid_value_is_named(tmp_path: Path) -> None:
    (tmp_path / "edgepipe.toml").write_text("[accuracy]\nmax_drop_points = -1\n")
    with pytest.raises(ConfigError, match="accuracy.max_drop_points"):
        load_config(cwd=tmp_path)


def test_malformed_toml_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "edgepipe.toml").write_text("model = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(cwd=tmp_path)


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    sub = tmp_path / "proj"
    sub.mkdir()
    config_path = sub / "edgepipe.toml"
    config_path.write_text('model = "m.onnx"\noutput = "out"\n[data]\ncalibration = "c.npz"\n')
    config = load_config(config_path)
    assert config.model == sub / "m.onnx"
    assert config.output == sub / "out"
    assert config.data.calibration == sub / "c.npz"


def test_pyproject_tool_table_is_read(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.edgepipe]\ntargets = ["a", "b"]\n')
    assert load_config(cwd=tmp_path).targets == ["a", "b"]


def test_cli_overrides_win_over_file(tmp_path: Path) -> None:
    (tmp_path / "edgepipe.toml").write_text('targets = ["a"]\n[accuracy]\nmax_drop_points = 3.0\n')
    config = load_config(cwd=tmp_path, overrides={"targets": ["b"], "accuracy": {"max_drop_points": 0.5},
                                                  "model": None})
    assert config.targets == ["b"]
    assert config.accuracy.max_drop_points == 0.5


def test_custom_model_does_not_get_bundled_data(tmp_path: Path) -> None:
    config = load_config(cwd=tmp_path, overrides={"model": tmp_path / "other.onnx"})
    assert config.data.calibration is None and config.data.evaluation is None
