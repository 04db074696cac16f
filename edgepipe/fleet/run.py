"""The fleet driver: plan → run the jobs on an executor → assemble the report → write fleet.{json,md,html}.

A model whose targets need several quantization groups is built by several
jobs (possibly at once, on different workers), each writing its own target
folders under ``<output>/<model>/``; afterwards its ``summary.{json,md}`` and
``report.html`` are rewritten here to cover all its targets, read back through
the typed ``BuildReport``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from edgepipe.fleet.baseline import FleetDiff, diff_fleet, load_fleet_baseline, render_diff_markdown
from edgepipe.fleet.executors import OnDone, Work
from edgepipe.fleet.job import FleetJob, JobOutcome, run_job
from edgepipe.fleet.plan import FleetPlan, plan_fleet
from edgepipe.fleet.render_html import write_fleet_html
from edgepipe.fleet.render_md import render_fleet_markdown
from edgepipe.fleet.report import FLEET_HTML, FLEET_JSON, FLEET_MD, FleetReport, assemble
from edgepipe.fleet.spec import FleetSpec
from edgepipe.report import BuildReport
from edgepipe.report.summary import summarise, write_summary, write_text_atomic
from edgepipe.report.writer import REPORT_JSON

log = logging.getLogger(__name__)


class Executor(Protocol):
    """What :func:`run_fleet` needs of an executor (see :mod:`edgepipe.fleet.executors`)."""

    name: str
    workers: int | None

    def run(self, jobs: list[FleetJob], work: Work, on_done: OnDone) -> list[JobOutcome]: ...


@dataclass
class FleetRun:
    """A finished fleet: the report, the baseline diff (when asked for), and where the files went."""

    report: FleetReport
    diff: FleetDiff | None
    files: list[Path]


def _rewrite_model_overviews(spec: FleetSpec, report: FleetReport, plan: FleetPlan) -> None:
    """Rewrite summary.* and report.html of every model built by several jobs, over all its targets."""
    jobs = Counter(job.model for job in plan.jobs)
    for model in (m for m in report.models if jobs[m] > 1):
        cells = [c for c in report.cells if c.model == model and c.report]
        if not cells:
            continue
        folders = [spec.output / Path(str(c.report)).parent for c in cells]
        if not all((f / REPORT_JSON).is_file() for f in folders):
            log.info("%s: target folders not visible here; its summary covers each job's targets only", model)
            continue
        reports = {c.target: BuildReport.model_validate_json((f / REPORT_JSON).read_text(encoding="utf-8"))
                   for c, f in zip(cells, folders)}
        root = folders[0].parent
        write_summary(summarise(reports, {c.target: c.status == "restored" for c in cells}, {}), root)
        from edgepipe.report.html import write_html  # matplotlib: only when a model had several jobs

        write_html(list(reports.values()), root / "report.html")


def write_fleet_files(report: FleetReport, output: Path, diff: FleetDiff | None) -> list[Path]:
    """fleet.json, fleet.md (with the baseline diff when there is one) and fleet.html in ``output``."""
    output.mkdir(parents=True, exist_ok=True)
    markdown = render_fleet_markdown(report)
    if diff is not None:
        markdown += "\n" + render_diff_markdown(diff)
    return [write_text_atomic(output / FLEET_JSON, report.model_dump_json(indent=2) + "\n"),
            write_text_atomic(output / FLEET_MD, markdown),
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
    _rewrite_model_overviews(spec, report, plan)
    diff = diff_fleet(report, old, spec.gate, baseline) if old is not None and baseline is not None else None
    return FleetRun(report=report, diff=diff, files=write_fleet_files(report, spec.output, diff))
