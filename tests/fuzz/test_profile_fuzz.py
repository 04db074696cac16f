"""Fuzzing the target-profile parser: any set of profile files loads, or is a ProfileError, never another exception.

Each example writes up to three profiles (``fz-a``, ``fz-b``, ``fz-c``) into a
folder on ``EDGEPIPE_TARGETS_PATH``; they may ``inherit`` from each other (cycles
included) or from the bundled profiles, so merging is fuzzed along with validation.
"""

from __future__ import annotations

import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgepipe.errors import ProfileError
from edgepipe.targets import TargetProfile, load_profile
from edgepipe.targets.registry import BUNDLED_TARGETS, TARGETS_PATH_ENV, available_targets
from tests.fuzz.findings import assert_expected_refusal
from tests.fuzz.toml_strategies import EXAMPLES, documents, field_names, scalars, to_toml

FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["fz-a", "fz-b", "fz-c"]

def _rule_names() -> set[str]:
    from edgepipe.rules import load_constraints

    return set(load_constraints()) | {"skip", "ADD", "CONV_2D", "Conv", "MatMul"}


KEYS = sorted(field_names(TargetProfile) | {"inherit"} | _rule_names())
PARENTS = st.sampled_from(NAMES + available_targets() + ["missing-target"])


def _profiles() -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    with_inherit = st.tuples(documents(KEYS), st.one_of(st.none(), PARENTS, st.integers(), st.lists(PARENTS)))
    return st.dictionaries(st.sampled_from(NAMES), with_inherit, min_size=1, max_size=3).map(
        lambda drawn: {name: {**doc, **({} if parent is None else {"inherit": parent})}
                       for name, (doc, parent) in drawn.items()})


def _load_all(files: dict[str, str | bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, text in files.items():
            data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
            (Path(folder) / f"{name}.toml").write_bytes(data)
        previous = os.environ.get(TARGETS_PATH_ENV)
        os.environ[TARGETS_PATH_ENV] = folder
        try:
            for name in files:
                try:
                    profile = load_profile(name)
                except ProfileError as exc:
                    assert_expected_refusal(exc)
                    continue
                assert isinstance(profile, TargetProfile) and profile.name == name
        finally:
            if previous is None:
                os.environ.pop(TARGETS_PATH_ENV, None)
            else:
                os.environ[TARGETS_PATH_ENV] = previous


@FUZZ
@given(_profiles())
def test_any_profiles_load_or_are_a_profile_error(profiles: dict[str, dict[str, Any]]) -> None:
    _load_all({name: to_toml(document) for name, document in profiles.items()})


@FUZZ
@given(st.dictionaries(st.sampled_from(NAMES), st.one_of(st.binary(max_size=200), st.text(max_size=200)),
                       min_size=1, max_size=3))
def test_any_profile_bytes_load_or_are_a_profile_error(files: dict[str, str | bytes]) -> None:
    _load_all(files)


def _mutate(data: st.DataObject, value: Any) -> Any:
    """``value`` with some leaves (and whole tables) swapped for arbitrary TOML values."""
    if data.draw(st.integers(0, 9)) == 0:
        return data.draw(scalars() if not isinstance(value, dict) else documents(KEYS))
    if isinstance(value, dict):
        return {k: _mutate(data, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mutate(data, v) for v in value]
    return value


BUNDLED = {path.stem: path for path in sorted(BUNDLED_TARGETS.glob("*.toml"))}


@FUZZ
@given(st.data())
def test_mutated_bundled_profiles_load_or_are_a_profile_error(data: st.DataObject) -> None:
    """Real profiles (every table the schema has) with random leaves replaced: reaches the deep validators."""
    name = data.draw(st.sampled_from(sorted(BUNDLED)))
    raw = tomllib.loads(BUNDLED[name].read_text(encoding="utf-8"))
    _load_all({"fz-a": to_toml(_mutate(data, raw))})


def test_every_bundled_profile_survives_a_round_trip_through_the_fuzz_writer() -> None:
    """The writer the fuzz tests use produces TOML the parser reads back to the same profile."""
    for path in BUNDLED.values():
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
        assert tomllib.loads(to_toml(raw)) == raw, path
