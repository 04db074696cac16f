"""The agreement of every listed model with the vendor compilers, all measured at one commit: the in-sample figure.

    python -m benchmarks in-sample --work DIR     # resumable: run again to go on where it stopped

The same measurement as a round's first run (benchmarks/rounds.py: prepare at the CI data sizes, ``edgepipe
build`` PTQ only, the vendor compile through edgepipe's adapter, every node's placement kept), for every model of
benchmarks/agreement_models.toml. Parts go to ``WORK/<commit>/rows/<model>.json``; when every model has its part at
this commit the record ``benchmarks/results/in_sample.json`` is written (replacing the previous one: in-sample
figures describe the current code). On a 2-core host it takes many hours (one Vela compile of an unrolled
recurrent model took over an hour), so it is meant to be resumed across calls; the results page says when no
record at the current profiles exists.

It is in-sample: profiles were fixed on some of these models. Rows carry each model's role on the target (tuning
where ``tuned_on`` names it) and whether it still counts as held out (never seen: benchmarks/seen.toml).
"""

from __future__ import annotations

import json
import logging
import statistics
from dataclasses import asdict
from pathlib import Path

from benchmarks import protocol
from benchmarks.agreement import Row
from benchmarks.provenance import Provenance, commit, now, tree_is_clean
from benchmarks.rounds import measure_model, tool_versions

RECORD = protocol.ROOT / "benchmarks" / "results" / "in_sample.json"
log = logging.getLogger("in_sample")


def _part(work: Path, model: str) -> Path:
    return work / commit() / "rows" / f"{model}.json"


def run(work: Path) -> Path | None:
    """Measure the listed models that have no part at this commit yet; write the record when all have one."""
    if not tree_is_clean():
        raise SystemExit("the tree has uncommitted changes: in-sample figures are measured at a commit")
    started = now()
    for model in protocol.listed().values():
        part = _part(work, model.name)
        if part.exists():
            continue
        rows = measure_model(model, work)
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_text(json.dumps({"started": started, "finished": now(), "rows": [asdict(r) for r in rows]}),
                        encoding="utf-8")
    return finish(work)


def finish(work: Path) -> Path | None:
    """The record from the parts measured at this commit (None while a listed model has none)."""
    models = list(protocol.listed().values())
    parts = [_part(work, m.name) for m in models]
    if not all(p.exists() for p in parts):
        log.info("%d of %d models measured at %s", sum(p.exists() for p in parts), len(parts), commit())
        return None
    loaded = [json.loads(p.read_text(encoding="utf-8")) for p in parts]
    rows = [Row(**raw) for part in loaded for raw in part["rows"]]
    seconds = [r.seconds for r in rows if r.seconds]
    provenance = Provenance.here(min(part["started"] for part in loaded), tools=tool_versions())
    provenance.finished = max(part["finished"] for part in loaded)
    record = {"kind": "in-sample", "provenance": provenance.as_dict(),
              "runs": "one vendor compile per model and target (the compilers are deterministic)",
              "compile_seconds": {"min": min(seconds), "median": statistics.median(seconds), "max": max(seconds)}
              if seconds else {}, "rows": [asdict(r) for r in rows]}
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return RECORD
