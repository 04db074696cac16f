"""Progress display for long stages: a spinner on a terminal, silence elsewhere (CI logs stay clean)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

from edgepipe.pipeline import Listener


@contextmanager
def stage_progress(quiet: bool = False) -> Iterator[Listener | None]:
    """A listener that shows the running stage; ``None`` when quiet or not on a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console

    console = Console(stderr=True)
    with console.status("starting") as status:
        def listener(event: str, name: str) -> None:
            if event == "start":
                status.update(f"[bold]{name}[/bold]…")
            else:
                console.print(f"  ✓ {name}")

        yield listener
