"""The two kinds of failure edgepipe knows, and the exit codes CI reads.

User errors (a bad model, a malformed profile, missing data) become one readable
line and a documented exit code, never a traceback. Anything else is a bug in
edgepipe and keeps its traceback (exit code 3).
"""

from __future__ import annotations

from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    """Process exit codes; documented in README.md and ``edgepipe --help``."""

    OK = 0
    USER_ERROR = 1
    GATE_FAILED = 2
    INTERNAL_ERROR = 3
    INTERRUPTED = 130


class EdgepipeError(Exception):
    """Base of every error edgepipe raises on purpose."""

    exit_code: ExitCode = ExitCode.INTERNAL_ERROR


class UserError(EdgepipeError):
    """Bad input from the user: printed as one line naming the file and the fix.

    ``path`` is the file or folder at fault; ``fix`` is what the user should do.
    """

    exit_code = ExitCode.USER_ERROR

    def __init__(self, problem: str, *, path: str | Path | None = None, fix: str | None = None):
        self.problem = problem
        self.path = None if path is None else str(path)
        self.fix = fix
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The message shown to the user: ``<path>: <problem>. <fix>``."""
        text = f"{self.path}: {self.problem}" if self.path else self.problem
        if self.fix:
            text = f"{text.rstrip('.')}. {self.fix}"
        return text


class ConfigError(UserError):
    """A build config or CLI option is invalid."""


class ModelLoadError(UserError):
    """A model file cannot be read, or is not the format its name says."""


class DataError(UserError):
    """Calibration or evaluation data is missing, unsafe or does not fit the model."""


class ProfileError(UserError):
    """A target profile is unknown or malformed."""


class GateFailed(EdgepipeError):
    """The accuracy gate failed: the build finished, but CI must fail (exit 2)."""

    exit_code = ExitCode.GATE_FAILED


class MissingToolchain(UserError):
    """An optional toolchain (a vendor compiler, a converter) is not installed (exit 1).

    ``tool`` names it; ``install`` is the command that installs it, e.g. ``pip install 'edgepipe[vela]'``.
    A build does not raise this for a vendor check: it records the check as not run and goes on.
    """

    def __init__(self, tool: str, install: str, *, path: str | Path | None = None):
        self.tool = tool
        self.install = install
        super().__init__(f"{tool} is not installed", path=path, fix=f"Install it: {install}")


class ToolFailed(UserError):
    """A third-party tool (quantizer, converter, runtime, vendor compiler) failed on the user's model.

    ``tool`` names the tool, ``message`` is the tool's own message (first line) and ``next_step``
    the config key or option that avoids the failure. A build records it as a failed stage or a
    missing artifact and goes on with what it has; a command that only runs that tool exits 1.
    Raised only by the boundaries in :mod:`edgepipe.containment`, from the tool's own exception.
    """

    def __init__(self, tool: str, message: str, next_step: str):
        self.tool = tool
        self.message = message
        self.next_step = next_step
        super().__init__(f"{tool} failed: {message}", fix=next_step)
