"""Where fleet jobs run: in this process (serial), or a local process pool (the default).

Every executor takes the jobs, the function a worker runs on each
(:func:`edgepipe.fleet.job.run_job`, or a test's), and a callback for each
finished job, and returns one outcome per job. A job whose worker raised an
exception that is not edgepipe's own (a bug) comes back as ``bug`` cells with
the traceback; a job whose worker process died is retried once in a fresh
pool, on its own, and comes back as ``crashed`` cells if it dies again. The
others always finish. Ray is in :mod:`edgepipe.fleet.ray_executor`.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import traceback
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from edgepipe.fleet.cells import unfinished_cells
from edgepipe.fleet.job import FleetJob, JobOutcome

Work = Callable[[FleetJob], JobOutcome]
OnDone = Callable[[JobOutcome], None]


def quiet_worker_logs(level: int) -> None:
    """In a worker process: edgepipe logs at the coordinator's ``level``; other libraries only their errors
    (their advice, such as ONNX Runtime's quantizer hints, would repeat once per job; the reports hold results)."""
    logging.basicConfig(level=max(level, logging.ERROR), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("edgepipe").setLevel(level)


def bug_outcome(job: FleetJob, error: BaseException) -> JobOutcome:
    """A job whose worker raised something edgepipe did not mean to raise: a bug, reported with its traceback."""
    text = "".join(traceback.format_exception(error))
    cause = error.__cause__  # concurrent.futures attaches the worker's traceback as the cause
    if cause is not None:
        text = f"{cause}\n{text}"
    return JobOutcome(job_id=job.job_id, model=job.model, traceback=text,
                      cells=unfinished_cells(job.model, job.targets, "bug",
                                             f"internal error (a bug in edgepipe): {type(error).__name__}: {error}"))


def crashed_outcome(job: FleetJob, detail: str, attempts: int) -> JobOutcome:
    """A job whose worker process died on every attempt."""
    return JobOutcome(job_id=job.job_id, model=job.model, attempts=attempts,
                      cells=unfinished_cells(job.model, job.targets, "crashed",
                                             f"the worker died on all {attempts} attempts ({detail})"))


class SerialExecutor:
    """Every job in this process, one after the other (the baseline the benchmark compares with)."""

    name = "serial"
    workers = 1

    def run(self, jobs: list[FleetJob], work: Work, on_done: OnDone) -> list[JobOutcome]:
        outcomes = []
        for job in jobs:
            outcome = work(job)
            outcome.attempts = 1
            on_done(outcome)
            outcomes.append(outcome)
        return outcomes


@dataclass
class LocalPoolExecutor:
    """A pool of ``workers`` fresh Python processes (spawned: no state shared with this process).

    At most ``workers`` jobs are in flight, so when the pool breaks (a worker
    died) the jobs that were running are known: each is retried once, alone,
    in a fresh single-worker pool, so a job that kills its worker again takes
    no other job with it. Then the rest go on in a fresh pool.
    """

    workers: int
    name: str = "process"

    def run(self, jobs: list[FleetJob], work: Work, on_done: OnDone) -> list[JobOutcome]:
        pending = list(reversed(jobs))
        done: dict[str, JobOutcome] = {}
        while pending:
            suspects = self._run_pool(pending, work, on_done, done)
            for job in suspects:
                outcome = self._retry_alone(job, work)
                on_done(outcome)
                done[job.job_id] = outcome
        return [done[job.job_id] for job in jobs]

    def _pool(self, workers: int) -> ProcessPoolExecutor:
        level = logging.getLogger("edgepipe").getEffectiveLevel()
        return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=quiet_worker_logs, initargs=(level,))

    def _run_pool(self, pending: list[FleetJob], work: Work, on_done: OnDone,
                  done: dict[str, JobOutcome]) -> list[FleetJob]:
        """Run ``pending`` (popped from the end) until it is empty or the pool breaks; the jobs lost with it."""
        running: dict[Future[JobOutcome], FleetJob] = {}
        with self._pool(self.workers) as pool:
            while pending or running:
                while pending and len(running) < self.workers:
                    job = pending.pop()
                    running[pool.submit(work, job)] = job
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                lost = [job for job in (self._settle(f, running.pop(f), on_done, done) for f in finished) if job]
                if lost:  # the pool is broken: every job still in flight fails with it
                    wait(running)
                    lost += [job for job in (self._settle(f, j, on_done, done) for f, j in running.items()) if job]
                    return lost
        return []

    @staticmethod
    def _settle(future: Future[JobOutcome], job: FleetJob, on_done: OnDone,
                done: dict[str, JobOutcome]) -> FleetJob | None:
        """Record a finished future's outcome; the job back when its worker was lost."""
        error = future.exception()
        if isinstance(error, BrokenProcessPool):
            return job
        outcome = bug_outcome(job, error) if error is not None else future.result()
        outcome.attempts = 1
        on_done(outcome)
        done[job.job_id] = outcome
        return None

    def _retry_alone(self, job: FleetJob, work: Work) -> JobOutcome:
        with self._pool(1) as pool:
            future = pool.submit(work, job)
            error = future.exception()
        if isinstance(error, BrokenProcessPool):
            return crashed_outcome(job, "the process pool broke", attempts=2)
        outcome = bug_outcome(job, error) if error is not None else future.result()
        outcome.attempts = 2
        return outcome


def default_workers() -> int:
    """The CPU count this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
