"""Where fleet jobs run: in this process (serial), or a local process pool (the default).

Every executor takes the jobs, the function a worker runs on each
(:func:`edgepipe.fleet.job.run_job`, or a test's), and a callback for each
finished job, and returns one outcome per job. A job whose worker raised an
exception that is not edgepipe's own (a bug) comes back as ``bug`` cells with
the traceback; a job whose worker process died is retried once in a fresh
pool, on its own, and comes back as ``crashed`` cells if it dies again. The
others always finish. Ray is in :mod:`edgepipe.fleet.ray_executor`.

Ctrl-C (SIGINT, or SIGTERM through the CLI) reaches the coordinator only:
pool workers ignore SIGINT, so a terminal's Ctrl-C, sent to the whole process
group, does not kill them half-way. The coordinator cancels the queued jobs and
sends each worker SIGTERM, which unwinds a running build (its staging folder is
removed, a vendor tool it runs is killed) and ends the worker; a worker still
alive after ``STOP_GRACE_SECONDS`` is killed. Then the interrupt propagates:
the fleet writes no report (exit 130).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass

from edgepipe.fleet.cells import unfinished_cells
from edgepipe.fleet.job import FleetJob, JobOutcome
from edgepipe.interrupts import raise_interrupted, redeliver_lost_signals
from edgepipe.output import signals_deferred

Work = Callable[[FleetJob], JobOutcome]
OnDone = Callable[[JobOutcome], None]

#: Seconds an interrupted worker gets to unwind its build (remove its staging folder) before it is killed.
STOP_GRACE_SECONDS = 20.0
#: Exit status of a worker stopped by the coordinator (as the CLI's on an interrupt).
STOPPED = 130
_busy = False  # in a pool worker: a job is running (SIGTERM unwinds it rather than exiting at once)


def quiet_worker_logs(level: int) -> None:
    """In a worker process: edgepipe logs at the coordinator's ``level``; other libraries only their errors
    (their advice, such as ONNX Runtime's quantizer hints, would repeat once per job; the reports hold results)."""
    logging.basicConfig(level=max(level, logging.ERROR), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("edgepipe").setLevel(level)


def _stop_worker(signum: int, frame: object) -> None:
    """SIGTERM in a pool worker: unwind the running build (KeyboardInterrupt), or exit at once when idle."""
    if _busy:
        raise_interrupted(signum, frame)
    os._exit(STOPPED)


def init_pool_worker(level: int) -> None:
    """A pool worker's set-up: quiet logs; Ctrl-C is the coordinator's to handle, SIGTERM stops this worker."""
    quiet_worker_logs(level)
    redeliver_lost_signals()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)


def run_in_pool_worker(work: Work, job: FleetJob) -> JobOutcome:
    """``work(job)`` in a pool worker; stopped by the coordinator, the worker exits once the build unwound."""
    global _busy
    _busy = True
    try:
        return work(job)
    except KeyboardInterrupt:  # the staging folder is gone by now; leave no half-stopped worker behind
        os._exit(STOPPED)
    finally:
        _busy = False


def stop_pool(pool: ProcessPoolExecutor, grace: float = STOP_GRACE_SECONDS) -> None:
    """Stop ``pool`` now: cancel its queued jobs, SIGTERM its workers, kill those alive after ``grace`` s."""
    # concurrent.futures has no way to stop running workers; its process table is the only handle on them
    processes = list((pool._processes or {}).values())  # noqa: SLF001
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


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
            try:
                outcome = work(job)
            except Exception as error:  # noqa: BLE001 - a bug in this job: its rows, with the traceback (exit 3)
                outcome = bug_outcome(job, error)
            outcome.attempts = 1
            on_done(outcome)
            outcomes.append(outcome)
        return outcomes


@contextmanager
def _stopped_on_interrupt(pool: ProcessPoolExecutor) -> Iterator[None]:
    """Stop ``pool``'s workers when the body is interrupted (a second Ctrl-C waits until they are stopped)."""
    try:
        yield
    except KeyboardInterrupt:
        with signals_deferred():
            stop_pool(pool)
        raise


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
                                   initializer=init_pool_worker, initargs=(level,))

    def _run_pool(self, pending: list[FleetJob], work: Work, on_done: OnDone,
                  done: dict[str, JobOutcome]) -> list[FleetJob]:
        """Run ``pending`` (popped from the end) until it is empty or the pool breaks; the jobs lost with it."""
        running: dict[Future[JobOutcome], FleetJob] = {}
        with self._pool(self.workers) as pool, _stopped_on_interrupt(pool):
            while pending or running:
                while pending and len(running) < self.workers:
                    job = pending.pop()
                    running[pool.submit(run_in_pool_worker, work, job)] = job
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
        with self._pool(1) as pool, _stopped_on_interrupt(pool):
            future = pool.submit(run_in_pool_worker, work, job)
            error = future.exception()
        if isinstance(error, BrokenProcessPool):
            return crashed_outcome(job, "the process pool broke", attempts=2)
        outcome = bug_outcome(job, error) if error is not None else future.result()
        outcome.attempts = 2
        return outcome


def default_workers() -> int:
    """The CPU count this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
