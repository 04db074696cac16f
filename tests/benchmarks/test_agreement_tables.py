"""benchmarks/agreement.py: ``--render`` prints the tables from the recorded rows without measuring, naming the
commits that measured them; first runs are recorded once. (docs/results.md: tests/benchmarks/test_results_page.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from edgepipe.config import PROJECT_ROOT

BENCHMARKS = PROJECT_ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import agreement  # noqa: E402


def test_render_measures_nothing_and_names_the_commits(tmp_path: Path) -> None:
    rows = [agreement.Row("ppocr_v3_rec", "held_out", "rk3588", "ran", 10, 10, 9, 2, 1, 1, commit="abc1234"),
            agreement.Row("ppocr_v6_tiny_det", "held_out", "rk3588", "failure predicted", detail="predicted (Loop)")]
    out = tmp_path / "rows.json"
    out.write_text(json.dumps({"versions": {}, "rows": [r.__dict__ for r in rows]}), encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "agreement.py"), "--render", "--out", str(out),
                           "--targets", "rk3588"], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "Rows measured at abc1234: 1, an earlier commit (not recorded in the row): 1." in proc.stdout
    assert "| rk3588 | held_out | 2 | 1 | 0 | 1 | 0 | 0 | 10 | **90.00 %** | 50.00 % (2 vendor CPU ops) | " \
           "100.00 % (1 edgepipe CPU ops) |" in proc.stdout
    assert [r["commit"] for r in json.loads(out.read_text(encoding="utf-8"))["rows"]] == ["abc1234", ""]


def test_measuring_needs_the_builds_folder(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(BENCHMARKS / "agreement.py")], capture_output=True, text=True,
                          check=False, cwd=tmp_path)
    assert proc.returncode == 2 and "--builds is required unless --render" in proc.stderr


def test_a_first_run_is_the_first_row_in_which_the_vendor_tool_ran(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # a held-out model with no TFLite gets "no artifact" rows for Ethos-U; the run once it exports is Vela's first
    # look at it and is recorded as the first run; a row recorded after that one never replaces it
    first_runs = tmp_path / "first.json"
    monkeypatch.setattr(agreement, "FIRST_RUNS", first_runs)

    def rows(*entries: tuple[str, str, int]) -> Path:
        path = tmp_path / f"run{len(list(tmp_path.glob('run*')))}.json"
        made = [agreement.Row("m", "held_out", target, status, nodes=agree, compared=agree, agree=agree)
                for target, status, agree in entries]
        path.write_text(json.dumps({"rows": [vars(r) for r in made]}))
        return path

    agreement.record_first_runs([rows(("ethos-u55", "no artifact", 0), ("rk3588", "ran", 5))])
    agreement.record_first_runs([rows(("ethos-u55", "ran", 12), ("rk3588", "ran", 6))])
    agreement.record_first_runs([rows(("ethos-u55", "ran", 13))])
    recorded = {(r["target"], r["status"], r["agree"]) for r in json.loads(first_runs.read_text())["rows"]}
    assert recorded == {("ethos-u55", "ran", 12), ("rk3588", "ran", 5)}
