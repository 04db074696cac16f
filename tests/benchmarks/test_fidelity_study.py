"""The fidelity study's page is rendered from its committed JSON, and the defaults it backs flag what it found."""

from __future__ import annotations

import json

from benchmarks.fidelity_study import DOC, RESULTS, render, summarise
from edgepipe.config import AccuracyConfig


def test_the_page_is_the_json_rendered() -> None:
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert DOC.read_text(encoding="utf-8") == render(record), "run: python benchmarks/fidelity_study.py render"
    assert record["summary"] == summarise(record["rows"])


def test_the_default_gate_flags_every_broken_row_and_no_intact_one() -> None:
    record = json.loads(RESULTS.read_text(encoding="utf-8"))
    gate = record["summary"][-1]
    assert gate["broken"] > 0 and gate["flagged_broken"] == gate["broken"] and gate["flagged_intact"] == 0
    defaults = AccuracyConfig()
    assert (defaults.min_cosine, defaults.min_sqnr_db, defaults.min_part_sqnr_db) == (0.99, 15.0, 10.0)
