"""The fleet driver: plan → run the jobs on an executor → assemble the report → write fleet.{json,md,html}.

Jobs of one model (one per quantization group, possibly at once on different
workers) each write their targets' folders under ``<output>/<model>/``; then
the model's own overview is rewritten over all its targets (:mod:`.overview`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgepipe.cache import BuildCache
from edgepipe.fleet.baseline import FleetDiff, diff_fleet, load_fleet_baseline, render_diff_markdown
from edgepipe.fleet.executors import OnDone, Work
from edgepipe.fleet.job import FleetJob, JobOutcome, run_job
from edgepipe.fleet.overview import rewrite_model_overviews
from edgepipe.fleet.plan import FleetPlan, plan_fleet
from edgepipe.fleet.render_html import write_fleet_html
from edgepipe.fleet.render_md import render_fleet_markdown
from edgepipe.fleet.report import FLEET_HTML, FLEET_JSON, FLEET_MD, FleetReport, assemble
from edgepipe.fleet.spec import FleetSpec
from edgepipe.report.files import write_record


class Executor(Protocol):
    """What :func:`run_fleet` needs of an executor (see :mod:`edgepipe.fleet.executors`)."""

    name: str

    @property
    def workers(self) -> int | None:
        """How many jobs run at once (None: the engine decides)."""

    def run(self, jobs: list[FleetJob], work: Work, on_done: OnDone) -> list[JobOutcome]: ...


@dataclass
class FleetRun:
    """A finished fleet: the report, the baseline diff (when asked for), and where the files went."""

    report: FleetReport
    diff: FleetDiff | None
    files: list[Path]


def write_fleet_files(report: FleetReport, output: Path, diff: FleetDiff | None) -> list[Path]:
    """fleet.json, fleet.md (with the baseline diff when there is one) and fleet.html in ``output``."""
    output.mkdir(parents=True, exist_ok=True)
    markdown = render_fleet_markdown(report)
    if diff is not None:
        markdown += "\n" + render_diff_markdown(diff)
    return [*write_record(output, report, FLEET_JSON, markdown, FLEET_MD),
            write_fleet_html(report, output / FLEET_HTML)]


def run_fleet(spec: FleetSpec, source: Path, executor: Executor, *, work: Work = run_job,
              on_plan: Callable[[FleetPlan], None] | None = None, on_done: OnDone | None = None, use_cache: bool = True,
              baseline: Path | None = None) -> FleetRun:
    """Plan, run and report the fleet in ``spec`` (read from ``source``); a user error before any job on a
    bad fleet file or baseline. ``on_plan`` gets the plan, ``on_done`` each finished job."""
    old = load_fleet_baseline(baseline) if baseline is not None else None  # a bad baseline fails first
    started = time.perf_counter()
    plan = plan_fleet(spec, source, use_cache=use_cache)
    if on_plan is not None:
        on_plan(plan)
    outcomes = executor.run(plan.jobs, work, on_done or (lambda outcome: None))
    targets_of = {job.job_id: job.targets for job in plan.jobs}
    report = assemble(fleet_file=source, executor=executor.name, workers=executor.workers,
                      wall_seconds=time.perf_counter() - started, models=plan.models, targets=plan.targets,
                      outcomes=[(o, targets_of[o.job_id]) for o in outcomes])
    rewrite_model_overviews(spec.output, report, plan, BuildCache(spec.cache_dir()) if use_cache else None)
    diff = diff_fleet(report, old, spec.gate, baseline) if old is not None and baseline is not None else None
    return FleetRun(report=report, diff=diff, files=write_fleet_files(report, spec.output, diff))
