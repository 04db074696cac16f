"""The legalization page is what its committed result file gives."""

from __future__ import annotations

import json

import pytest

from benchmarks import legalize_reach


def test_the_page_is_rendered_from_the_committed_json() -> None:
    if not legalize_reach.RESULT.is_file():
        pytest.skip("no legalization run committed")
    record = json.loads(legalize_reach.RESULT.read_text(encoding="utf-8"))
    assert legalize_reach.DOC.read_text(encoding="utf-8") == legalize_reach.render(record)
    assert all(row["before"] and row["after"] for row in record["rows"])
