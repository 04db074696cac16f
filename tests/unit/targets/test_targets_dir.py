"""User profiles from a folder: ``targets_dir`` in the config or ``--targets-dir``, searched before the built-ins."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.config import load_config
from edgepipe.errors import ProfileError
from edgepipe.pipeline import resolve_targets
from edgepipe.targets import available_targets, load_profile, use_profile_dirs

MY_NPU = '''inherit = "ethos-u55"
description = "our board: an Ethos-U55 with a smaller SRAM"
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    profiles = tmp_path / "boards"
    profiles.mkdir()
    (profiles / "my-npu.toml").write_text(MY_NPU, encoding="utf-8")
    return profiles


def test_targets_list_shows_user_profiles_beside_the_built_ins(folder: Path, capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    assert main(["targets", "list", "--targets-dir", str(folder)]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == sorted([*available_targets(), "my-npu"])
    assert "my-npu" not in available_targets(), "the folder counts only where it was named"


def test_a_user_profile_inherits_from_a_built_in_one(folder: Path) -> None:
    with use_profile_dirs([folder]):
        profile = load_profile("my-npu")
    builtin = load_profile("ethos-u55")
    assert profile.description.startswith("our board") and profile.device_class == builtin.device_class
    assert profile.op_table("tflite") == builtin.op_table("tflite")


def test_a_user_profile_shadows_the_built_in_of_the_same_name(folder: Path) -> None:
    (folder / "host-cpu.toml").write_text(MY_NPU, encoding="utf-8")
    with use_profile_dirs([folder]):
        assert load_profile("host-cpu").device_class == "npu"
    assert load_profile("host-cpu").device_class == "cpu"


def test_config_targets_dir_is_relative_to_the_config_file(folder: Path) -> None:
    config = folder.parent / "edgepipe.toml"
    config.write_text('targets = ["my-npu", "host-cpu"]\ntargets_dir = "boards"\n', encoding="utf-8")
    cfg = load_config(config)
    assert cfg.targets_dir == folder
    assert [p.name for p in resolve_targets(cfg)] == ["my-npu", "host-cpu"]


def test_a_missing_targets_folder_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets", "list", "--targets-dir", str(tmp_path / "nope")]) == 1
    assert "targets folder not found" in capsys.readouterr().err
    with pytest.raises(ProfileError, match="targets folder not found"):
        with use_profile_dirs([tmp_path / "nope"]):
            pass
