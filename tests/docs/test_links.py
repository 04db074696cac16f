"""Every relative link in README.md, CHANGELOG.md and docs/ resolves: the file exists, and a #fragment names a
heading of the file it points to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from edgepipe.config import PROJECT_ROOT

PAGES = sorted([PROJECT_ROOT / "README.md", PROJECT_ROOT / "CHANGELOG.md", *(PROJECT_ROOT / "docs").rglob("*.md")])
#: [text](target) outside code; the target stops at whitespace or the closing parenthesis.
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")


def links(page: Path) -> list[str]:
    """The link targets of ``page``, outside fenced code blocks and inline code."""
    text = CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    return LINK.findall(text)


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the headings of ``page``: lower case, punctuation dropped, spaces as hyphens."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    found = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(PROJECT_ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: — not ours to check offline
            continue
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target} (no heading '#{fragment}')")
    assert not broken, f"{page.relative_to(PROJECT_ROOT)}: broken links: {broken}"


def test_the_link_checker_sees_links_and_headings(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title: with `code`\n\nsee [b](b.md#part-two), ![img](x.png), `[not](a-link)`\n"
                    "```\n[nor](this)\n```\n", encoding="utf-8")
    assert links(page) == ["b.md#part-two"]
    assert anchors(page) == {"a-title-with-code"}
