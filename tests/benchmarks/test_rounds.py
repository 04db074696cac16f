"""benchmarks/rounds.py: a round's first run is recorded once, from parts all measured at the current commit, and
never on a tree with uncommitted changes; nothing is measured here (the parts are written by hand)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import pytest

from benchmarks import protocol, rounds
from benchmarks.agreement import Row

ROUND = "2026-12-07"


def _parts(work: Path, commit: str) -> None:
    for model in protocol.round_models(ROUND):
        rows = [Row(model.name, "held_out", t, "ran", 3, 3, 3, commit=commit, placements={"a": "AA", "b": "AA",
                                                                                           "c": "AA"})
                for t in model.targets]
        part = work / "abc1234" / "rows" / f"{model.name}.json"
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps({"started": "2026-12-07 05:00 UTC", "finished": "2026-12-07 05:10 UTC",
                                    "rows": [asdict(r) for r in rows]}), encoding="utf-8")


@pytest.fixture
def here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(rounds, "commit", lambda: "abc1234")
    monkeypatch.setattr(rounds, "ROUNDS", tmp_path / "rounds")
    monkeypatch.setattr(rounds, "tool_versions", lambda: {"vela": "5.2.0"})
    monkeypatch.setattr(rounds.Provenance, "here", classmethod(lambda cls, started, tools=None: cls(
        commit="abc1234", dirty=False, started=started, finished="", machine="Linux x86_64", cpu="a CPU",
        cpu_flags=["avx2"], cpus=2, python="3.11.7", tools=dict(tools or {}))))
    return tmp_path / "work"


def test_the_record_is_written_when_every_model_has_its_rows_at_this_commit(here: Path) -> None:
    models = protocol.round_models(ROUND)
    _parts(here, "abc1234")
    path = rounds.finish(ROUND, here)
    assert path is not None
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["provenance"]["commit"] == "abc1234" and record["provenance"]["finished"] == "2026-12-07 05:10 UTC"
    assert len(record["rows"]) == sum(len(m.targets) for m in models)


def test_a_model_without_rows_keeps_the_record_unwritten(here: Path) -> None:
    _parts(here, "abc1234")
    next((here / "abc1234" / "rows").glob("*.json")).unlink()
    assert rounds.finish(ROUND, here) is None and not rounds.ROUNDS.exists()


def test_rows_of_another_commit_are_refused(here: Path) -> None:
    _parts(here, "0000000")
    with pytest.raises(SystemExit, match="rows measured at \\['0000000'\\], not only at abc1234"):
        rounds.finish(ROUND, here)


def test_a_recorded_first_run_is_never_measured_again(here: Path) -> None:
    rounds.ROUNDS.mkdir(parents=True)
    rounds.record_path(ROUND).write_text("{}", encoding="utf-8")
    with pytest.raises(SystemExit, match="recorded once and never replaced"):
        rounds.run(ROUND, here)


def test_a_tree_with_uncommitted_changes_measures_nothing(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rounds, "tree_is_clean", lambda: False)
    with pytest.raises(SystemExit, match="uncommitted changes"):
        rounds.run(ROUND, here)
