"""Fuzzing the build-config parser: any input is a valid BuildConfig or a ConfigError, never another exception."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgepipe.config import BuildConfig, load_config
from edgepipe.errors import ConfigError
from tests.fuzz.findings import assert_expected_refusal
from tests.fuzz.toml_strategies import EXAMPLES, documents, field_names, to_toml

FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = sorted(field_names(BuildConfig))


def _load_text(text: str | bytes, name: str = "edgepipe.toml") -> BuildConfig | None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        try:
            config = load_config(path)
        except ConfigError as exc:
            assert_expected_refusal(exc)
            return None
    assert isinstance(config, BuildConfig)
    return config


@FUZZ
@given(documents(KEYS))
def test_any_config_document_is_valid_or_a_config_error(document: dict[str, Any]) -> None:
    _load_text(to_toml(document))


@FUZZ
@given(documents(KEYS))
def test_any_pyproject_table_is_valid_or_a_config_error(document: dict[str, Any]) -> None:
    _load_text(to_toml({"tool": {"edgepipe": document}}), name="pyproject.toml")


@FUZZ
@given(st.one_of(st.binary(max_size=300), st.text(max_size=300)))
def test_any_bytes_are_valid_or_a_config_error(text: str | bytes) -> None:
    _load_text(text)


@FUZZ
@given(documents(KEYS))
def test_any_cli_overrides_are_valid_or_a_config_error(overrides: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        try:
            config = load_config(None, overrides, cwd=Path(folder))
        except ConfigError as exc:
            assert_expected_refusal(exc)
            return
    assert isinstance(config, BuildConfig)
