"""docs/results.md is what benchmarks/results_page.py renders from the committed result files, and it labels
what each figure is: the first runs as out-of-sample, the latest runs as in-sample, with their commits."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from edgepipe.config import PROJECT_ROOT

sys.path.insert(0, str(PROJECT_ROOT / "benchmarks"))

import results_page  # noqa: E402


def test_the_results_page_is_what_the_committed_files_give() -> None:
    page = (PROJECT_ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    assert page == results_page.render(), "docs/results.md is stale: run python benchmarks/results_page.py"


def test_the_out_of_sample_figures_come_first_and_are_the_first_runs() -> None:
    page = results_page.render()
    first, latest = page.index("### Out-of-sample"), page.index("### In-sample")
    assert first < latest
    assert "Source: `benchmarks/results/agreement_first_run.json`" in page[first:latest]
    assert "Source: `benchmarks/results/agreement.json`" in page[latest:]


def test_provenance_names_the_commits_and_says_when_no_date_is_recorded(tmp_path: Path) -> None:
    row = {"model": "m", "role": "held_out", "target": "rk3588", "status": "ran", "nodes": 4, "compared": 4,
           "agree": 3, "vendor_cpu": 1, "edgepipe_cpu": 2, "both_cpu": 1, "seconds": 0.1, "detail": ""}
    dated = tmp_path / "dated.json"
    dated.write_text(json.dumps({"written": "2026-01-02 03:04 UTC", "rows": [{**row, "commit": "abc1234"}]}))
    undated = tmp_path / "undated.json"
    undated.write_text(json.dumps({"rows": [{**row, "commit": ""}, {**row, "commit": "abc1234"}]}))
    rows, _ = results_page.read_rows(dated, roles_of_now=False)
    assert results_page.provenance("dated.json", rows, {}, "2026-01-02 03:04 UTC").endswith(
        "abc1234 (1). Date: 2026-01-02 03:04 UTC.")
    rows, _ = results_page.read_rows(undated, roles_of_now=False)
    text = results_page.provenance("undated.json", rows, {"vela": "5.2.0"}, None)
    assert "abc1234 (1); 1 rows were recorded before rows named their commit" in text
    assert "the file records none" in text and text.endswith("Tools: vela 5.2.0.")
    assert "| rk3588 | held_out | 1 | 1 | 0 | 0 | 0 | 0 | 4 | **75.00 %** | 100.00 % (1 vendor CPU ops) | " \
           "50.00 % (2 edgepipe CPU ops) |" in results_page.summary(rows[:1], ("held_out",))
