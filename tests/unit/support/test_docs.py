"""The checked-in supported-ops documents under docs/targets/ are what `edgepipe targets docs` writes now."""

from __future__ import annotations

from edgepipe.cli.targets_cmd import DOCS_FOLDER
from edgepipe.support.docs import render_all
from edgepipe.targets import available_targets, load_profile


def test_target_docs_are_current() -> None:
    expected = render_all([load_profile(name) for name in available_targets()])
    stale = [name for name, text in expected.items()
             if not (DOCS_FOLDER / name).is_file() or (DOCS_FOLDER / name).read_text(encoding="utf-8") != text]
    assert not stale, f"docs/targets is stale for {stale}: run `edgepipe targets docs` and commit the result"
    extra = sorted(p.name for p in DOCS_FOLDER.glob("*.md") if p.name not in expected)
    assert not extra, f"docs/targets has documents of no target: {extra}"


def test_docs_come_from_constraint_docstrings() -> None:
    text = render_all([load_profile("ethos-u55")])["ethos-u55.md"]
    assert "| CONV_2D | Stride above 3 is only supported with VALID padding and dilation 1." in text
    assert "Operators not listed run on the CPU." in text
