"""The bad-input corpus, generated once per session, and the checks every entry must pass."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from edgepipe.errors import ExitCode
from tests.corpus import make_corpus

ERROR_PREFIX = "edgepipe: error:"


@pytest.fixture(scope="session")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus folder written by make_corpus.py (its manifest.json included)."""
    folder = tmp_path_factory.mktemp("corpus") / "corpus"
    make_corpus.main(folder)
    return folder


def snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``root``: relative path → (size, mtime ns); symlinks are not followed."""
    if not root.exists():
        return {}
    tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            stat = path.lstat()
            tree[str(path.relative_to(root))] = (stat.st_size if path.is_file() else 0, stat.st_mtime_ns)
    return tree


def substitute(value: str, corpus: Path, out: Path, tmp: Path) -> str:
    return value.replace("{corpus}", str(corpus)).replace("{out}", str(out)).replace("{tmp}", str(tmp))


def assert_clean_answer(entry: dict[str, Any], code: int, err: str, corpus: Path, out: Path, tmp: Path) -> None:
    """The documented exit code, exactly one error line with the fragments and the file, no traceback."""
    lines = [line for line in err.splitlines() if line.startswith(ERROR_PREFIX)]
    assert code == entry["exit_code"], (entry["name"], code, err[-3000:])
    assert "Traceback" not in err, err[-3000:]
    if entry["exit_code"] == ExitCode.OK:
        assert not lines, err
        return
    assert len(lines) == 1, err
    for fragment in entry["fragments"]:
        assert fragment in lines[0], (fragment, lines[0])
    assert substitute(entry["names"], corpus, out, tmp) in lines[0], (entry["names"], lines[0])
