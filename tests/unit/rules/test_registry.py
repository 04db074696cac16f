"""The registry of constraints: every one has its fail/pass test, a checked parameter type, and a rule text a user
reads (short, in product terms, naming no model the project was developed on)."""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from pathlib import Path

import pytest

from edgepipe.rules import CONSTRAINTS, load_constraints

REPO = Path(__file__).resolve().parents[3]
#: Words that begin a model's name and are also plain words a rule may use (a face, a hand, open, rapid, ...).
_PLAIN_WORDS = {"arabic", "basic", "bicycle", "chess", "digit", "face", "hand", "immaculate", "iris", "leader",
                "micro", "mnist", "name", "open", "palm", "pose", "rapid", "selfie", "smart", "surfaces", "swift",
                "vital"}
#: How the project's own development shows in text: none of it belongs in a rule.
_HISTORY = re.compile(r"\bprobed\b|\bfound with\b|\bsession\b|\bbatch \d|\bissue\b|\bheld-out\b", re.I)


def _model_names() -> set[str]:
    """The real models of the test-side lists (zoo, held-out, vendor agreement) and the wheels they come from."""
    from tests.realmodels import heldout, zoo

    models = (*zoo.ZOO, *heldout.HELDOUT)
    with (REPO / "benchmarks" / "agreement_models.toml").open("rb") as handle:
        agreement = tomllib.load(handle).get("models", {})
    wheels = {re.split(r"[=<>\[ ;]", model.wheel.requirement)[0] for model in models}
    return {model.name for model in models} | set(agreement) | wheels


def _model_name_pattern() -> re.Pattern[str]:
    """Each name with its separators dropped (palm_detection, palmdetection), and its first word where that is no
    plain word (madmom, ppocr), matched at the start of a word of text whose hyphens and underscores are dropped."""
    words = set()
    for name in _model_names():
        parts = [part for part in re.split(r"[-_]", name.lower()) if part]
        words.add("".join(parts))
        if len(parts[0]) >= 4 and parts[0] not in _PLAIN_WORDS:
            words.add(parts[0])
    return re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + ")")


def _mentions(text: str, pattern: re.Pattern[str]) -> list[str]:
    return pattern.findall(re.sub(r"[-_]", "", text.lower()))


def test_every_constraint_has_a_test_and_a_rule() -> None:
    """Each constraint has a ``test_<name>`` in tests/unit/rules/test_<module>.py, ``<module>`` being the rule module
    that defines it."""
    load_constraints()
    missing = []
    for name, item in CONSTRAINTS.items():
        module = item.predicate.__module__.rsplit(".", 1)[-1]
        tests = importlib.import_module(f"tests.unit.rules.test_{module}")
        if not hasattr(tests, f"test_{name}"):
            missing.append(f"{name} (tests/unit/rules/test_{module}.py)")
    assert not missing, f"constraints without a fail/pass test: {missing}"
    for item in CONSTRAINTS.values():
        assert item.rule_template.endswith(".") and "{param}" in item.rule_template or item.param_type is bool


@pytest.mark.parametrize("value", ["three", [1, 2]])
def test_parameter_type_is_checked(value: object) -> None:
    with pytest.raises(ValueError, match="constraint 'stride_max' takes"):
        load_constraints()["stride_max"].validate_param(value)


def test_rule_text_is_short_and_names_no_model() -> None:
    """A rule is one or two sentences a user reads: at most 2 docstring lines and 240 characters, with no model
    name and no trace of how it was found (which probe or model showed it lives in its test)."""
    pattern = _model_name_pattern()
    long, named, history = [], [], []
    for name, item in load_constraints().items():
        paragraph = inspect.cleandoc(item.predicate.__doc__ or "").split("\n\n")[0]
        if paragraph.count("\n") >= 2 or len(item.rule_template) > 240:
            long.append(f"{name} ({paragraph.count(chr(10)) + 1} lines, {len(item.rule_template)} characters)")
        if found := _mentions(item.rule_template, pattern):
            named.append(f"{name}: {found}")
        if found_history := _HISTORY.findall(item.rule_template):
            history.append(f"{name}: {found_history}")
    assert not long, f"rules longer than 2 lines or 240 characters: {long}"
    assert not named, f"rules naming a model: {named}"
    assert not history, f"rules telling how they were found: {history}"


def test_the_model_name_check_finds_model_names() -> None:
    """The check above recognises a model however the text spells it."""
    pattern = _model_name_pattern()
    for text in ("as in palm_detection's head", "PP-OCRv4's recogniser", "madmom's notes CNN", "a MarbleNet VAD"):
        assert _mentions(text, pattern), text
    assert not _mentions("A reshape of a 4-D tensor keeps W as the last axis of a row width.", pattern)
