"""The fleet command's stderr progress (cells done, elapsed, ETA) and its one JSON document on every exit.

Cheap: no build runs. The bug case stands a ValueError in for a bug inside ``run_build`` (serial executor, in
this process); exit 0 and 2 with --json are in test_fleet_executors.py, 130 in test_fleet_interrupt.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.cli.fleet_progress import FleetTally, clock, eta_seconds
from edgepipe.config import DEFAULT_MODEL
from edgepipe.fleet import job as fleet_job
from edgepipe.fleet.cells import unfinished_cells
from edgepipe.fleet.job import JobOutcome


def test_clock_and_eta() -> None:
    assert [clock(s) for s in (4.4, 59.6, 65, 3599, 3720)] == ["4s", "1m00s", "1m05s", "59m59s", "1h02m"]
    assert eta_seconds(10.0, 0, 8) is None  # no rate before the first cell
    assert eta_seconds(30.0, 3, 9) == pytest.approx(60.0)  # 10 s per cell, 6 cells left
    assert eta_seconds(30.0, 9, 9) == 0.0


def test_progress_line_counts_cells_jobs_and_eta() -> None:
    tally = FleetTally(cells_total=6, jobs_total=3, started=0.0)
    outcome = JobOutcome(job_id="kws#0", model="kws", seconds=12.34,
                         cells=unfinished_cells("kws", ["host-cpu", "ethos-u55"], "error", "bad model"))
    line = tally.finish(outcome)
    assert line.startswith("[2/6 cells · 1/3 jobs · ") and "elapsed · ETA " in line
    assert line.endswith("kws: host-cpu error, ethos-u55 error [12.3 s]")
    assert tally.cells_done == 2 and tally.jobs_done == 1


def _fleet(folder: Path) -> Path:
    path = folder / "fleet.toml"
    path.write_text(f'targets = ["host-cpu", "mobile-npu"]\noutput = "out"\n\n[[models]]\nname = "digits"\n'
                    f'model = "{DEFAULT_MODEL}"\n', encoding="utf-8")
    return path


def test_json_is_one_document_on_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "fleet.toml"
    bad.write_text(f'targets = ["host-cpu"]\nworkerz = 2\n[[models]]\nname = "a"\nmodel = "{DEFAULT_MODEL}"\n',
                   encoding="utf-8")
    assert main(["fleet", str(bad), "--json"]) == 1
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["exit_code"] == 1 and "workerz" in document["error"]["message"]
    assert not (tmp_path / "out").exists()


def test_json_is_one_document_on_a_bug(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    def broken_build(*args: object, **kwargs: object) -> None:
        raise ValueError("the truth value of an array with more than one element is ambiguous")

    monkeypatch.setattr(fleet_job, "run_build", broken_build)
    assert main(["fleet", str(_fleet(tmp_path)), "-e", "serial", "--json"]) == 3
    captured = capsys.readouterr()
    document = json.loads(captured.out)  # one document: the fleet's, not a second error document after it
    assert document["exit_code"] == 3 and document["verdict"] == "fail"
    assert [c["status"] for c in document["fleet"]["cells"]] == ["bug", "bug"]
    assert "ValueError: the truth value" in document["fleet"]["cells"][0]["reason"]
    assert (tmp_path / "out" / "fleet.json").is_file()
    assert "fleet: 1 models × 2 targets = 2 cells in 1 jobs" in captured.err  # progress on stderr
    assert "[2/2 cells · 1/1 jobs · " in captured.err and "ETA 0s] digits: host-cpu error" in captured.err
    assert "broken_build" in captured.err  # the bug's traceback
