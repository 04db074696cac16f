"""The held-out protocol is enforced by the repository's own history (benchmarks/protocol.py):

- no entry of benchmarks/agreement_models.toml (role, targets, tuned_on, source, round) changes or disappears once
  committed, counted from the commit that brought in this test;
- a round adds at least ten models, all held out, from wheels no other listed model comes from;
- a round's first-run record was measured at a commit whose model list already held every model of the round as
  held out, covers exactly those models and targets at that one commit, and is never edited after it is committed;
- benchmarks/seen.toml only grows.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from functools import cache
from pathlib import Path

import pytest

from benchmarks import protocol
from benchmarks.rounds import ROUNDS

ROOT = protocol.ROOT
THIS = "tests/benchmarks/test_protocol.py"
MODELS = "benchmarks/agreement_models.toml"


def git(*args: str) -> str:
    proc = subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, check=False)
    if proc.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


@cache
def history_available() -> str:
    """Why the git history cannot be read ("" when it can)."""
    try:
        if git("rev-parse", "--is-shallow-repository").strip() == "true":
            return "a shallow clone: the protocol is checked against the full history"
    except (RuntimeError, FileNotFoundError) as exc:
        return f"no git history here ({exc})"
    return ""


def versions(path: str, since: str | None = None) -> list[tuple[str, str]]:
    """(commit, text) of every committed version of ``path``, oldest first: from ``since`` on (its own state
    included) when given."""
    commits = git("log", "--reverse", "--format=%H", f"{since}..HEAD" if since else "HEAD", "--", path).split()
    if since:
        commits.insert(0, since)
    found = []
    for commit in commits:
        try:
            found.append((commit, git("show", f"{commit}:{path}")))
        except RuntimeError:  # the file did not exist yet at that commit
            continue
    return found


def protocol_start() -> str:
    """The commit that brought in this test (the first the protocol holds for); HEAD while it is uncommitted."""
    added = git("log", "--diff-filter=A", "--format=%H", "--", THIS).split()
    return added[-1] if added else git("rev-parse", "HEAD").strip()


@pytest.fixture
def history() -> None:
    reason = history_available()
    if reason:
        pytest.skip(reason)


def test_every_entry_and_first_run_matches_the_lock_that_only_grows() -> None:
    """Checked without git: an entry or a first-run record that changed no longer matches its committed digest
    (and the lock itself may only grow, checked against git history below)."""
    lock = json.loads(protocol.LOCK.read_text(encoding="utf-8"))
    now = protocol.current_lock()
    for part in ("entries", "first_runs"):
        for name, digest in lock[part].items():
            assert now[part].get(name) == digest, (
                f"{name} changed or disappeared ({part}); roles and first runs never change: record a model looked "
                "at after its first run in benchmarks/seen.toml instead")
        added = sorted(set(now[part]) - set(lock[part]))
        assert not added, f"{part} {added} are not in {protocol.LOCK.name}: add them with `python -m benchmarks lock`"


@pytest.mark.usefixtures("history")
def test_the_lock_only_grows() -> None:
    relative = str(protocol.LOCK.relative_to(ROOT))
    seen: dict[str, dict[str, str]] = {"entries": {}, "first_runs": {}}
    for commit, text in versions(relative):
        lock = json.loads(text)
        for part, known in seen.items():
            for name, digest in known.items():
                assert lock[part].get(name) == digest, f"{relative} changed {name} ({part}) at {commit[:7]}"
            known.update(lock[part])


@pytest.mark.usefixtures("history")
def test_no_listed_entry_changes_or_disappears_once_committed() -> None:
    first: dict[str, tuple[str, protocol.ListedModel]] = {}
    texts = [*versions(MODELS, protocol_start()), ("the working tree", (ROOT / MODELS).read_text(encoding="utf-8"))]
    for where, text in texts:
        listed = protocol.parse(text)
        for name, (since, entry) in first.items():
            assert name in listed, f"{name} (listed since {since[:7]}) is gone from {MODELS} in {where[:16]}"
            assert listed[name] == entry, (
                f"{name}'s entry changed in {where[:16]}: {entry} -> {listed[name]}. Roles never change: record a "
                "model looked at after its first run in benchmarks/seen.toml instead")
        for name, entry in listed.items():
            first.setdefault(name, (where, entry))


def test_a_round_adds_ten_held_out_models_from_new_wheels() -> None:
    from tests.realmodels import heldout, zoo

    listed = protocol.listed()
    wheel = {**{m.name: m.wheel.requirement for m in zoo.ZOO}, **{m.name: m.wheel.requirement for m in heldout.HELDOUT}}

    def package(requirement: str) -> str:
        return requirement.split("==")[0].lower().replace("_", "-")

    for name in protocol.rounds():
        models = protocol.round_models(name)
        assert len(models) >= protocol.MIN_ROUND_MODELS, f"round {name}: {len(models)} models"
        assert all(m.role == "held_out" and not m.tuned_on and m.source == "heldout" for m in models)
        earlier = {package(wheel[m.name]) for m in listed.values()
                   if m.name in wheel and (not m.round or m.round < name)}
        reused = sorted({package(wheel[m.name]) for m in models} & earlier)
        assert not reused, f"round {name} reuses wheels of earlier models: {reused}"


def _records() -> list[Path]:
    return sorted(ROUNDS.glob("*.json"))


@pytest.mark.usefixtures("history")
@pytest.mark.parametrize("path", _records(), ids=lambda p: p.stem)
def test_a_first_run_measured_a_round_registered_before_it_at_one_commit(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    measured_at = record["provenance"]["commit"]
    assert not record["provenance"]["dirty"], "a first run is measured on a clean tree"
    assert {r["commit"] for r in record["rows"]} == {measured_at}
    then = protocol.parse(git("show", f"{measured_at}:{MODELS}"))
    models = [m for m in then.values() if m.round == record["round"]]
    assert len(models) >= protocol.MIN_ROUND_MODELS
    assert all(m.role == "held_out" for m in models), "every model of the round was held out when it was measured"
    expected = {(m.name, t) for m in models for t in m.targets}
    assert {(r["model"], r["target"]) for r in record["rows"]} == expected
    assert all(r["role"] == "held_out" for r in record["rows"])


@pytest.mark.usefixtures("history")
@pytest.mark.parametrize("path", _records(), ids=lambda p: p.stem)
def test_a_recorded_first_run_is_never_edited(path: Path) -> None:
    relative = str(path.relative_to(ROOT))
    added = git("log", "--diff-filter=A", "--format=%H", "--", relative).split()
    if not added:
        pytest.skip(f"{relative} is not committed yet")
    assert git("show", f"{added[-1]}:{relative}") == path.read_text(encoding="utf-8"), (
        f"{relative} differs from the version first committed: a first run is recorded once")
    assert not git("log", "--format=%H", f"{added[-1]}..HEAD", "--", relative).split(), f"{relative} was rewritten"


@pytest.mark.usefixtures("history")
def test_the_seen_list_only_grows() -> None:
    def entries(text: str) -> list[dict[str, object]]:
        return list(tomllib.loads(text).get("seen", []))

    current = entries(protocol.SEEN.read_text(encoding="utf-8"))
    for commit, text in versions("benchmarks/seen.toml"):
        before = entries(text)
        assert current[:len(before)] == before, f"benchmarks/seen.toml lost or changed entries since {commit[:7]}"
    listed = protocol.listed()
    for seen in protocol.seen():
        assert seen.model in listed and set(seen.targets) <= set(listed[seen.model].targets), seen


def test_an_unknown_key_in_the_model_list_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"\[models.m\] has unknown key\(s\) \['rol'\]"):
        protocol.parse('[models.m]\nrol = "held_out"\nrole = "held_out"\ntargets = []\n')
