"""Target profiles: every bundled profile validates; strict keys, inherit and cycles."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.errors import ProfileError
from edgepipe.targets import available_targets, load_profile
from edgepipe.targets.registry import TARGETS_PATH_ENV


def test_every_bundled_profile_validates() -> None:
    names = available_targets()
    assert "host-cpu" in names
    for name in names:
        assert load_profile(name).name == name


def test_unknown_target_lists_known_ones() -> None:
    with pytest.raises(ProfileError, match="unknown target 'nope'.*host-cpu"):
        load_profile("nope")


@pytest.fixture
def profiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(TARGETS_PATH_ENV, str(tmp_path))
    return tmp_path


def test_unknown_key_in_profile_names_key_and_file(profiles: Path) -> None:
    (profiles / "bad.toml").write_text('description = "x"\ndevice_class = "npu"\nclock_mhz = 3\n')
    with pytest.raises(ProfileError) as err:
        load_profile("bad")
    assert "clock_mhz" in str(err.value) and "bad.toml" in str(err.value)


def test_inherit_merges_parent(profiles: Path) -> None:
    (profiles / "family.toml").write_text('description = "family"\ndevice_class = "npu"\nsources = ["doc"]\n')
    (profiles / "member.toml").write_text('inherit = "family"\ndescription = "member"\n')
    profile = load_profile("member")
    assert profile.description == "member" and profile.device_class == "npu" and profile.sources == ["doc"]


def test_inherit_cycle_is_an_error(profiles: Path) -> None:
    (profiles / "a.toml").write_text('inherit = "b"\n')
    (profiles / "b.toml").write_text('inherit = "a"\n')
    with pytest.raises(ProfileError, match="inherit cycle a -> b -> a"):
        load_profile("a")


def test_malformed_profile(profiles: Path) -> None:
    (profiles / "broken.toml").write_text("description = [\n")
    with pytest.raises(ProfileError, match="malformed profile"):
        load_profile("broken")
