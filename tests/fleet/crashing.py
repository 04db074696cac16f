"""A job function whose worker process really dies on its first attempt (``os._exit``), then builds normally.

Whether it has crashed already is a marker file in the fleet's output folder
(the test's tmp dir), so the retry — in a new worker process — builds.
"""

from __future__ import annotations

import os

from edgepipe.fleet.job import FleetJob, JobOutcome, run_job

CRASHING_MODEL = "digits_cnn"
EXIT_STATUS = 17


def marker(job: FleetJob) -> os.PathLike[str]:
    return job.fleet_output / f".crashed-{job.job_id.replace('#', '-')}"


def crash_once(job: FleetJob) -> JobOutcome:
    """Kill this worker process the first time CRASHING_MODEL's first job runs; build on any later attempt.

    Only that one job: another job lost with the broken pool before it started would otherwise crash on its retry."""
    path = marker(job)
    if job.job_id == f"{CRASHING_MODEL}#0" and not os.path.exists(path):
        os.makedirs(job.fleet_output, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()}\n")
        os._exit(EXIT_STATUS)
    return run_job(job)


def bug_in_silero(job: FleetJob) -> JobOutcome:
    """Raise an exception edgepipe never raises on purpose (a stand-in for a bug) in silero's job only."""
    if job.model == "silero_vad":
        raise ValueError("the truth value of an array with more than one element is ambiguous")
    return run_job(job)
