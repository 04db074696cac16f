"""``fleet.json``: the fleet compatibility report (models × targets), its jobs, and what the run cost.

Bump ``FLEET_VERSION`` on any change a reader would notice. ``edgepipe fleet --schema``
prints the JSON Schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from edgepipe import __version__
from edgepipe.fleet.cells import FleetCell
from edgepipe.fleet.job import JobOutcome
from edgepipe.report.files import Record

FLEET_VERSION = "1.1"
FLEET_JSON = "fleet.json"
FLEET_MD = "fleet.md"
FLEET_HTML = "fleet.html"


class JobRecord(Record):
    """One job: a model and a group of targets sharing quantization, and what it cost."""

    job_id: str
    model: str
    targets: list[str]
    seconds: float = Field(description="Wall time of the job in its worker (s).")
    cpu_seconds: float = Field(description="CPU time of the job in its worker process (s; children not counted).")
    subprocess_cpu_seconds: float = Field(0.0, description="CPU time of the subprocesses the job ran and waited "
                                               "for (s): converters, vendor compilers in their own environments.")
    cache_hits: int = Field(description="Cells restored from the build cache.")
    worker: str = Field(description="host:pid that ran it ('' when it never finished).")
    attempts: int | None = Field(None, description="Attempts made (None: the executor does not say, as with Ray).")


class FleetReport(Record):
    """Every cell of one fleet run, the jobs that made them, and the run's verdict."""

    fleet_version: str = FLEET_VERSION
    edgepipe_version: str = __version__
    fleet_file: str
    executor: Literal["serial", "process", "ray"]
    workers: int | None = Field(description="Parallel workers asked for (None: the cluster's).")
    wall_seconds: float = Field(description="Wall time of the whole run, planning to last job (s).")
    models: list[str]
    targets: list[str]
    cells: list[FleetCell]
    jobs: list[JobRecord]
    verdict: Literal["pass", "fail"] = Field(description="pass when every cell passed.")

    @property
    def cache_hits(self) -> int:
        return sum(c.status == "restored" for c in self.cells)

    def cell(self, model: str, target: str) -> FleetCell | None:
        return next((c for c in self.cells if c.model == model and c.target == target), None)

    @property
    def has_bug(self) -> bool:
        return any(c.status == "bug" for c in self.cells)


def job_record(outcome: JobOutcome, targets: list[str]) -> JobRecord:
    return JobRecord(job_id=outcome.job_id, model=outcome.model, targets=targets, seconds=round(outcome.seconds, 3),
                     cpu_seconds=round(outcome.cpu_seconds, 3),
                     subprocess_cpu_seconds=round(outcome.subprocess_cpu_seconds, 3), cache_hits=outcome.cache_hits,
                     worker=outcome.worker, attempts=outcome.attempts)


def assemble(*, fleet_file: Path, executor: str, workers: int | None, wall_seconds: float, models: list[str],
             targets: list[str], outcomes: list[tuple[JobOutcome, list[str]]]) -> FleetReport:
    """The report of a run: cells in model then target order (the fleet file's), one record per job."""
    cells = {c.key: c for outcome, _ in outcomes for c in outcome.cells}
    ordered = [cells[(m, t)] for m in models for t in targets if (m, t) in cells]
    verdict: Literal["pass", "fail"] = "pass" if all(c.passed for c in ordered) else "fail"
    return FleetReport(fleet_file=str(fleet_file), executor=executor, workers=workers,  # type: ignore[arg-type]
                       wall_seconds=round(wall_seconds, 3), models=models, targets=targets, cells=ordered,
                       jobs=[job_record(o, t) for o, t in outcomes], verdict=verdict)
