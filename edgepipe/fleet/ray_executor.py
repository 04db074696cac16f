"""Fleet jobs as Ray tasks: a local Ray instance by default, or an existing cluster (``--address``).

Each job is one task asking for one CPU; Ray retries a task whose worker
process or node died (``max_retries``), and a task that raised comes back as
an error this executor turns into the job's cells, so one bad cell never stops
the fleet. Outcomes are small typed rows shipped back through the object
store; the build outputs and the content-addressed cache are written where the
workers run, so on a cluster ``output`` and ``cache`` must be a folder every
node sees (docs/guide/fleets.md).

A local instance gets ``workers`` CPUs, no dashboard, quiet logs (workers'
output stays in Ray's session logs), a small object store, and its temporary
folder under the fleet's output (or a short folder in the system's temporary
folder when that path is too long for Ray's Unix sockets). Its workers import
the same edgepipe as this process.

Interrupted (Ctrl-C, or SIGTERM through the CLI), the executor cancels every
unfinished task (a running one gets a KeyboardInterrupt: its build unwinds and
removes its staging folder), waits up to ``STOP_GRACE_SECONDS`` for them, and
stops the local instance it started; the interrupt then propagates (exit 130).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.config import PROJECT_ROOT
from edgepipe.errors import ToolFailed
from edgepipe.fleet.executors import (
    STOP_GRACE_SECONDS,
    OnDone,
    Work,
    bug_outcome,
    crashed_outcome,
    default_workers,
)
from edgepipe.fleet.job import FleetJob, JobOutcome
from edgepipe.output import signals_deferred

log = logging.getLogger(__name__)

#: Ray's session folder adds ~65 characters to its temporary folder; Unix socket paths stop at 107.
_MAX_TEMP_DIR = 40
_OBJECT_STORE_BYTES = 256 * 1024 * 1024  # outcomes are small rows; a big store would only reserve memory
#: Ray's message when a local instance's raylet does not register within its fixed 30 s, and our attempts.
_STARTUP_TIMEOUT = "timed out during startup"
_START_ATTEMPTS = 3


@dataclass
class RayExecutor:
    """Run jobs on Ray: ``address`` None starts a local instance with ``workers`` CPUs (default: all)."""

    output: Path
    workers: int | None = None
    address: str | None = None
    retries: int = 1
    name: str = "ray"

    def run(self, jobs: list[FleetJob], work: Work, on_done: OnDone) -> list[JobOutcome]:
        import ray  # heavy optional dependency

        temp_dir = None if ray.is_initialized() else self.connect()
        try:
            task = ray.remote(num_cpus=1, max_retries=self.retries)(work)
            refs = {task.remote(job): job for job in jobs}
            done: dict[str, JobOutcome] = {}
            try:
                while refs:
                    ready, _ = ray.wait(list(refs), num_returns=1)
                    for ref in ready:
                        job = refs.pop(ref)
                        outcome = self._collect(ray, ref, job)
                        on_done(outcome)
                        done[job.job_id] = outcome
            except KeyboardInterrupt:
                with signals_deferred():
                    _cancel(ray, list(refs))
                raise
            return [done[job.job_id] for job in jobs]
        finally:
            if temp_dir is not None:
                ray.shutdown()
                if temp_dir != self._temp_under_output():
                    shutil.rmtree(temp_dir, ignore_errors=True)

    def _collect(self, ray: Any, ref: Any, job: FleetJob) -> JobOutcome:
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:  # the job raised: not edgepipe's own error, so a bug
            return bug_outcome(job, exc.cause if isinstance(exc.cause, BaseException) else exc)
        except ray.exceptions.RayError as exc:  # the worker or its node was lost on every attempt
            return crashed_outcome(job, f"{type(exc).__name__}: {str(exc).splitlines()[0]}",
                                   attempts=self.retries + 1)

    def _temp_under_output(self) -> Path:
        return self.output.resolve() / ".ray"

    def connect(self) -> Path:
        """Connect to ``address``, or start a local instance; the temporary folder it uses.

        :meth:`run` calls it unless Ray is already initialized (then it uses that instance and leaves it up).
        """
        import ray  # heavy optional dependency

        quiet: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.ERROR,
                                 "log_to_driver": False}
        if self.address is not None:
            ray.init(address=self.address, **quiet)
            return self._temp_under_output()  # nothing of ours to remove: the cluster's folders are its own
        temp_dir = self._temp_under_output()
        if len(str(temp_dir)) > _MAX_TEMP_DIR:
            temp_dir = Path(tempfile.mkdtemp(prefix="edgepipe-ray-"))
            log.info("Ray temporary folder %s (the output path is too long for Ray's sockets)", temp_dir)
        temp_dir.mkdir(parents=True, exist_ok=True)
        saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "RAY_USAGE_STATS_ENABLED")}
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), saved["PYTHONPATH"]) if p)
        os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
        try:  # the local instance's processes inherit this environment: workers import this edgepipe
            _start_local(ray, num_cpus=self.workers or default_workers(), object_store_memory=_OBJECT_STORE_BYTES,
                         _temp_dir=str(temp_dir), **quiet)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return temp_dir


def _start_local(ray: Any, **options: Any) -> None:
    """``ray.init`` a local instance; started again (``_START_ATTEMPTS`` in all) when it does not come up in
    Ray's fixed 30 s, as on an overloaded machine, then a tool failure (exit 1) naming the next step."""
    for attempt in range(1, _START_ATTEMPTS + 1):
        try:
            ray.init(**options)
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception when its raylet does not register
            if _STARTUP_TIMEOUT not in str(exc):
                raise
            ray.shutdown()  # stop what did start, then try again
            log.warning("Ray's local instance did not start (attempt %d of %d): %s", attempt, _START_ATTEMPTS, exc)
    raise ToolFailed("ray", f"the local Ray instance did not start in {_START_ATTEMPTS} attempts ({_STARTUP_TIMEOUT})",
                     "Retry when the machine is less loaded, or run the fleet with --executor process")


def _cancel(ray: Any, refs: list[Any], grace: float = STOP_GRACE_SECONDS) -> None:
    """Cancel unfinished tasks: queued ones never start, running ones unwind (KeyboardInterrupt in the task);
    wait up to ``grace`` s for them to end."""
    for ref in refs:
        ray.cancel(ref, recursive=True)
    if refs:
        ray.wait(refs, num_returns=len(refs), timeout=grace)
