"""benchmarks/agreement.py: the agreement tables in docs/TARGETS.md are what its recorded rows give, and
``--render`` rewrites them from those rows without measuring, naming the commits that measured them."""

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


def _body(text: str) -> list[str]:
    """The table lines between the markers, without the "Written by" line (its date and commit change)."""
    return [line for line in text.splitlines() if line.startswith("|")]


def _recorded(path: Path, roles_of_now: bool) -> list[agreement.Row]:
    """The rows of ``path``; with ``roles_of_now`` each with its model's role of now (as the script reads them),
    else as recorded (first runs keep the role they had: held out)."""
    import tomllib

    listed = tomllib.loads((BENCHMARKS / "agreement_models.toml").read_text(encoding="utf-8"))["models"]
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return [agreement.Row(**{**r, "role": agreement.role_of(listed[r["model"]], r["target"])} if roles_of_now
                          else r) for r in rows]


def test_the_docs_tables_are_the_recorded_rows() -> None:
    doc = (PROJECT_ROOT / "docs" / "TARGETS.md").read_text(encoding="utf-8")
    for markers, rows_file, now in (((agreement.START, agreement.END), agreement.ROWS, True),
                                    (agreement.FIRST, agreement.FIRST_RUNS, False)):
        section = doc.partition(markers[0])[2].partition(markers[1])[0]
        assert _body(section) == _body(agreement.tables(_recorded(rows_file, now), {}, markers)), rows_file.name


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
