"""Progress display for long stages: a rich progress bar on a terminal, silence elsewhere (CI logs stay clean).

The pipeline tells its listener ``("plan", "<stage count>")`` once, then
``("start", name)`` and ``("done", name)`` per stage. Off a terminal, with
``--quiet`` or with ``--json`` there is no display at all; rich also drops
colours by itself when stderr is not a terminal or ``NO_COLOR`` is set.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from edgepipe.pipeline import Listener


@contextmanager
def stage_progress(quiet: bool = False) -> Iterator[Listener | None]:
    """A listener that shows the running stage and a bar over the planned ones; ``None`` when silent."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("starting", total=None)

        def listener(event: str, name: str) -> None:
            if event == "plan":
                progress.update(task, total=int(name))
            elif event == "start":
                progress.update(task, description=name)
            else:
                progress.advance(task)
                progress.console.print(f"  ✓ {name}")

        yield listener
