"""The ``edgepipe`` command line. Each sub-command lives in its own module and is registered here."""

from edgepipe.cli.app import app, main

__all__ = ["app", "main"]
