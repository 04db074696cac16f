"""One fleet job: a model and a group of targets that share quantization, built where a worker runs it.

A job is plain data (picklable, so a process pool or Ray ships it to a worker)
and :func:`run_job` is what the worker runs: ``run_build`` through the shared,
content-addressed build cache, so an unchanged cell is restored, not rebuilt.
A bad model or data becomes the job's cells with the reason (this row only);
so does edgepipe's own internal error (a stage that produced a broken artifact:
``bug`` cells, exit 3); any other exception propagates, and the executor turns
it into ``bug`` cells with its traceback.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from edgepipe.cache import BuildCache
from edgepipe.config import BuildConfig
from edgepipe.errors import EdgepipeError, ExitCode
from edgepipe.fleet.cells import CellStatus, FleetCell, cell_from_report, unfinished_cells
from edgepipe.limits import use_limits
from edgepipe.pipeline import run_build
from edgepipe.report.writer import REPORT_MD


@dataclass(frozen=True)
class FleetJob:
    """Build ``config`` (its ``targets`` are one quantization group) for the fleet row ``model``."""

    job_id: str
    model: str
    config: BuildConfig
    fleet_output: Path  # the root report paths are relative to
    cache_dir: Path | None = None

    @property
    def targets(self) -> list[str]:
        return list(self.config.targets)


@dataclass
class JobOutcome:
    """What a job sends back: its cells, and what it cost (s of wall, of this worker's CPU, and of the CPU of
    the subprocesses it ran and waited for: converters, vendor compilers in their own environments)."""

    job_id: str
    model: str
    cells: list[FleetCell]
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    subprocess_cpu_seconds: float = 0.0
    worker: str = ""
    attempts: int | None = None
    traceback: str | None = None

    @property
    def cache_hits(self) -> int:
        return sum(c.status == "restored" for c in self.cells)


def worker_name() -> str:
    """``host:pid`` of the process running a job."""
    return f"{socket.gethostname()}:{os.getpid()}"


def children_cpu_seconds() -> float:
    """User + system CPU (s) of this process's finished, waited-for subprocesses so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_job(job: FleetJob) -> JobOutcome:
    """Build one job (the function a worker runs); edgepipe's own user errors become this row's cells."""
    started, cpu_started, children_started = time.perf_counter(), time.process_time(), children_cpu_seconds()
    cache = BuildCache(job.cache_dir) if job.cache_dir is not None else None
    try:
        with use_limits(job.config.limits.to_limits()):
            result = run_build(job.config, None, cache=cache)
    except EdgepipeError as exc:  # reported in this row, the fleet goes on: a bad input is an error, else a bug
        status: CellStatus = "error" if exc.exit_code == ExitCode.USER_ERROR else "bug"
        cells = unfinished_cells(job.model, job.targets, status, str(exc))
    else:
        cells = []
        for name, report in result.reports.items():
            folder = result.folders[name]
            relative = folder.resolve().relative_to(job.fleet_output.resolve()) / REPORT_MD
            cells.append(cell_from_report(job.model, report, relative, result.cached.get(name, False)))
    return JobOutcome(job_id=job.job_id, model=job.model, cells=cells, seconds=time.perf_counter() - started,
                      cpu_seconds=time.process_time() - cpu_started,
                      subprocess_cpu_seconds=children_cpu_seconds() - children_started, worker=worker_name())
