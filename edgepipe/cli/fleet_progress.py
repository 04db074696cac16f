"""Progress across a fleet on stderr: cells done of the total, jobs, elapsed time and an ETA.

One line per finished job (its cells' verdicts and its time), so a CI log shows
how far a long fleet got; on a terminal a rich bar over the cells stays below
the lines. ``--quiet`` silences it; ``--json`` does not (stdout keeps the one
JSON document, the lines go to stderr).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:  # the fleet's modules import the pipeline (seconds); the CLI loads them only to run a fleet
    from edgepipe.fleet.job import JobOutcome
    from edgepipe.fleet.plan import FleetPlan

    OnPlan = Callable[[FleetPlan], None]
    OnDone = Callable[[JobOutcome], None]


def clock(seconds: float) -> str:
    """A duration as ``45s``, ``3m05s`` or ``1h02m``."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def eta_seconds(elapsed: float, done: int, total: int) -> float | None:
    """Seconds left if the remaining cells go at the rate so far (s per cell); None before the first cell."""
    if done <= 0 or total <= done:
        return None if done <= 0 else 0.0
    return elapsed / done * (total - done)


@dataclass
class FleetTally:
    """What has finished so far: cells and jobs, of the plan's totals, since ``started`` (monotonic s)."""

    cells_total: int = 0
    jobs_total: int = 0
    cells_done: int = 0
    jobs_done: int = 0
    started: float = field(default_factory=time.monotonic)

    def plan(self, plan: FleetPlan) -> None:
        self.cells_total, self.jobs_total = plan.cells, len(plan.jobs)

    def finish(self, outcome: JobOutcome) -> str:
        """Count ``outcome`` and return its progress line."""
        self.cells_done += len(outcome.cells)
        self.jobs_done += 1
        elapsed = time.monotonic() - self.started
        eta = eta_seconds(elapsed, self.cells_done, self.cells_total)
        cells = ", ".join(f"{c.target} {c.verdict}{' (cache)' if c.status == 'restored' else ''}"
                          for c in outcome.cells)
        return (f"[{self.cells_done}/{self.cells_total} cells · {self.jobs_done}/{self.jobs_total} jobs · "
                f"{clock(elapsed)} elapsed · ETA {'–' if eta is None else clock(eta)}] "
                f"{outcome.model}: {cells} [{outcome.seconds:.1f} s]")


@contextmanager
def fleet_progress(quiet: bool) -> Iterator[tuple[OnPlan, OnDone]]:
    """Callbacks for the plan and each finished job: lines on stderr, under a rich bar on a terminal."""
    tally = FleetTally()
    if quiet:
        yield (lambda plan: None), (lambda outcome: None)
        return
    if not sys.stderr.isatty():
        def plain_plan(plan: FleetPlan) -> None:
            tally.plan(plan)
            typer.echo(f"fleet: {len(plan.models)} models × {len(plan.targets)} targets = {plan.cells} cells in "
                       f"{len(plan.jobs)} jobs", err=True)

        yield plain_plan, (lambda outcome: typer.echo(tally.finish(outcome), err=True))
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("cells"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("fleet", total=None)

        def on_plan(plan: FleetPlan) -> None:
            tally.plan(plan)
            progress.update(task, total=plan.cells,
                            description=f"fleet: {len(plan.models)} models × {len(plan.targets)} targets")

        def on_done(outcome: JobOutcome) -> None:
            line = tally.finish(outcome)
            progress.update(task, completed=tally.cells_done)
            progress.console.print(line, markup=False, highlight=False)

        yield on_plan, on_done
