"""A held-out round's first run: every model of the round built and compared with the vendor compilers, once,
at one commit, before anyone looked at it.

    python -m benchmarks round 2026-12-07 --work /tmp/round     # resumable: run again to finish
    python -m benchmarks round 2026-12-07 --work /tmp/round --status

A round is the set of models of benchmarks/agreement_models.toml whose ``round`` names it: all registered held out,
in a commit made before this command first ran. For each model (in list order) the command prepares its folder
(``tests.realmodels.heldout`` at the CI data sizes, 8 calibration samples), runs ``edgepipe build`` (PTQ only) for
the targets it is listed for, and compares each target's artifact with the vendor compiler
(``benchmarks/agreement.py``: same adapter as ``edgepipe check --verify``), keeping every node's placement on
both sides. Each model's rows go to ``WORK/<commit>/rows/<model>.json`` as soon as they are measured, so a stopped
run resumes where it stopped; parts measured at another commit are never mixed in.

When every model has its part, the record ``benchmarks/results/rounds/<round>.json`` is written: the rows and
their provenance (commit, dates, machine, CPU and its flags, tool versions, compile time min / median / max). It
is written once: a recorded first run is never replaced (tests/benchmarks/test_protocol.py checks the file is
what its first commit holds), and the command refuses a tree with uncommitted changes.
"""

from __future__ import annotations

import json
import logging
import shutil
import statistics
from dataclasses import asdict
from pathlib import Path

from benchmarks import protocol
from benchmarks.agreement import BUILD_TARGET, Row, artifacts, build, measure
from benchmarks.provenance import Provenance, commit, now, tree_is_clean

ROUNDS = protocol.ROOT / "benchmarks" / "results" / "rounds"
log = logging.getLogger("rounds")

#: A build that takes longer is stopped (its targets then have no artifact: rows that count, shown as such).
BUILD_TIMEOUT_S = 3600.0


def record_path(name: str) -> Path:
    return ROUNDS / f"{name}.json"


def _part(work: Path, model: str) -> Path:
    return work / commit() / "rows" / f"{model}.json"


def measure_model(model: protocol.ListedModel, work: Path) -> list[Row]:
    """Prepare, build and compare one listed model at the CI data sizes; its rows (one per listed target), each
    with the model's role on that target."""
    from tests.realmodels import heldout, zoo

    prepared = work / commit() / "models"
    builds = work / commit() / "builds" / model.name
    definitions = heldout.BY_NAME if model.source == "heldout" else zoo.BY_NAME
    (heldout.prepare if model.source == "heldout" else zoo.prepare)(definitions[model.name], prepared, zoo.SMALL)
    if builds.exists():
        shutil.rmtree(builds)
    builds.parent.mkdir(parents=True, exist_ok=True)
    code, seconds = build(model.name, prepared, builds, list(model.targets), timeout=BUILD_TIMEOUT_S)
    rows = []
    for target in model.targets:
        found = artifacts(builds, BUILD_TARGET.get(target, target)) if builds.exists() else {}
        row = measure(model.name, model.role_on(target), target, found)
        if row.status == "no artifact":
            row.detail = f"{row.detail}; edgepipe build exit {code} after {seconds:.0f} s"[:300]
        log.info("%-24s %-10s %-18s %5d/%-5d %s", model.name, target, row.status, row.agree, row.compared,
                 row.detail[:100])
        rows.append(row)
    return rows


def run(name: str, work: Path) -> Path | None:
    """Measure every model of round ``name`` not measured yet at this commit; write the record when all are.
    Returns the record's path, or None while models remain."""
    if record_path(name).exists():
        raise SystemExit(f"{record_path(name)} exists: a round's first run is recorded once and never replaced")
    if not tree_is_clean():
        raise SystemExit("the tree has uncommitted changes: a first run is measured at a commit")
    models = protocol.round_models(name)
    if len(models) < protocol.MIN_ROUND_MODELS:
        raise SystemExit(f"round {name} has {len(models)} models; a round adds at least {protocol.MIN_ROUND_MODELS}")
    started = now()
    for model in models:
        part = _part(work, model.name)
        if part.exists():
            continue
        rows = measure_model(model, work)
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps({"started": started, "finished": now(), "rows": [asdict(r) for r in rows]}),
                        encoding="utf-8")
    return finish(name, work)


def status(name: str, work: Path) -> list[str]:
    """Which models of the round have their rows at this commit."""
    return [f"{m.name}: {'measured' if _part(work, m.name).exists() else 'to do'}" for m in protocol.round_models(name)]


def finish(name: str, work: Path) -> Path | None:
    """The record of round ``name`` from the parts measured at this commit (None while a model has none)."""
    models = protocol.round_models(name)
    parts = [_part(work, m.name) for m in models]
    if not all(p.exists() for p in parts):
        return None
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in parts]
    rows = [Row(**raw) for part in loaded for raw in part["rows"]]
    commits = {r.commit for r in rows}
    if commits != {commit()}:
        raise SystemExit(f"rows measured at {sorted(commits)}, not only at {commit()}: rerun them at one commit")
    started = min(part["started"] for part in loaded)
    seconds = [r.seconds for r in rows if r.seconds]
    provenance = Provenance.here(started, tools=tool_versions())
    provenance.finished = max(part["finished"] for part in loaded)
    record = {"round": name, "kind": "first run", "provenance": provenance.as_dict(),
              "runs": "one vendor compile per model and target (the compilers are deterministic)",
              "compile_seconds": {"min": min(seconds), "median": statistics.median(seconds), "max": max(seconds)}
              if seconds else {}, "rows": [asdict(r) for r in rows]}
    ROUNDS.mkdir(parents=True, exist_ok=True)
    path = record_path(name)
    path.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


def tool_versions() -> dict[str, str]:
    """The installed vendor tools' versions, by tool name."""
    from edgepipe.targets import load_profile
    from edgepipe.vendors.registry import toolchain_for

    versions = {}
    for target in protocol.AGREEMENT_TARGETS:
        found = toolchain_for(load_profile(target))
        if found:
            versions[found[0].name] = found[0].version() or "not installed"
    return versions


def pending() -> list[str]:
    """Rounds of the model list that have no first-run record yet."""
    return [name for name in protocol.rounds() if not record_path(name).exists()]
