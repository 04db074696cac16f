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


def test_at_least_seven_build_targets_with_sources_and_op_tables() -> None:
    names = available_targets()
    assert {"host-cpu", "gpu-reference", "mobile-npu", "edge-tpu", "ethos-u55", "ethos-u85",
            "edge-box-npu"} <= set(names)
    for name in names:
        profile = load_profile(name)
        assert profile.sources, f"{name} lists no public sources"
        assert profile.op_table(profile.artifact.format) is not None, f"{name} cannot check its own artifact"


def test_family_base_is_not_a_target_and_is_not_inherited_as_abstract() -> None:
    assert "family-ethos-u" in available_targets(include_abstract=True)
    assert "family-ethos-u" not in available_targets()
    with pytest.raises(ProfileError, match="family base"):
        load_profile("family-ethos-u")
    member = load_profile("ethos-u55")
    assert not member.abstract and member.partition == "any" and member.deploy_formats == ["tflite"]


def test_edge_tpu_partitions_prefix_only() -> None:
    assert load_profile("edge-tpu").partition == "prefix"


def test_unknown_constraint_in_profile_names_it_and_the_file(profiles: Path) -> None:
    (profiles / "npu.toml").write_text('description = "x"\ndevice_class = "npu"\n'
                                       '[tflite.ops.CONV_2D]\nstride_maxx = 3\n')
    with pytest.raises(ProfileError) as err:
        load_profile("npu")
    assert "stride_maxx" in str(err.value) and "npu.toml" in str(err.value)


def test_constraint_parameter_of_wrong_type_is_an_error(profiles: Path) -> None:
    (profiles / "npu.toml").write_text('description = "x"\ndevice_class = "npu"\n'
                                       '[tflite.ops.CONV_2D]\nstride_max = "three"\n')
    with pytest.raises(ProfileError, match="stride_max"):
        load_profile("npu")
