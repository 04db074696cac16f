"""docs/results.md is what benchmarks/results_page.py renders from the committed JSON, every file behind it was
measured at one commit, and the headline is the latest round's first run with every figure and its trivial
baseline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import protocol, results_page
from benchmarks.agreement import Row

RESULT_FILES = sorted(results_page.RESULTS.rglob("*.json"))


def test_the_results_page_is_what_the_committed_files_give() -> None:
    page = results_page.PAGE.read_text(encoding="utf-8")
    assert page == results_page.render(), "docs/results.md is stale: run python -m benchmarks render"


@pytest.mark.parametrize("path", RESULT_FILES, ids=lambda p: str(p.relative_to(results_page.RESULTS)))
def test_every_result_file_was_measured_at_one_commit_on_a_clean_tree(path: Path) -> None:
    record = results_page.load_record(path)
    provenance = record["provenance"]
    assert provenance["commit"] and not provenance["dirty"]
    assert provenance["started"] <= provenance["finished"] and provenance["cpu"] and provenance["cpus"] > 0
    assert record["runs"]


def test_a_file_whose_rows_name_two_commits_is_refused(tmp_path: Path) -> None:
    rows = [{"model": "m", "commit": "abc1234"}, {"model": "n", "commit": "def5678"}]
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"provenance": {"commit": "abc1234"}, "rows": rows}), encoding="utf-8")
    with pytest.raises(results_page.MixedCommits, match="measured at abc1234, but rows name \\['def5678'\\]"):
        results_page.load_record(path)


def test_the_headline_is_the_latest_rounds_first_run_on_every_target() -> None:
    records = results_page.round_records()
    if not records:
        pytest.skip("no round has a recorded first run")
    page = results_page.render()
    headline = page[page.index("### Out-of-sample"):page.index("### Every round")]
    _, record = records[-1]
    assert f"Round **{record['round']}**" in headline and f"commit `{record['provenance']['commit']}`" in headline
    for target in protocol.AGREEMENT_TARGETS:
        line = next(line for line in headline.splitlines() if line.startswith(f"| {target} |"))
        models = int(line.split("|")[2])
        assert models >= protocol.MIN_ROUND_MODELS, f"{target}: {models} models"
        assert line.count("(") >= 5, "every figure has its trivial baseline or its counts beside it"


def test_each_figure_has_its_trivial_baseline_and_counts() -> None:
    rows = [Row("a", "held_out", "rk3588", "ran", placements={"x": "AA", "y": "AC", "z": "CC"}),
            Row("b", "held_out", "rk3588", "no artifact")]
    (line,) = results_page.figures_table(rows, ("rk3588",))[2:]
    assert line == ("| rk3588 | 2 | 1 | 0 | 0 | 0 | 1 | **33.3 %** (16.7 %) | 0.0 % (0.0 %) | 66.7 % of 3 (33.3 %) | "
                    "50.0 % (1 of 2) | 100.0 % (1 of 1) |")


def test_sections_without_a_record_say_what_is_not_measured_yet(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    monkeypatch.setattr(results_page, "RESULTS", tmp_path)
    page = results_page.render()
    assert "No round has a recorded first run yet." in page
    assert "Not measured at the current profiles yet" in page and "Not measured at one commit yet" in page
