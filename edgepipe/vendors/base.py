"""One interface for every vendor compiler edgepipe checks its placement against (Vela, QNN, RKNN).

A :class:`Toolchain` says which version is installed and in which environment,
how to install it, and compiles one model with the options a target profile
names (``vendor_tool = "vela --accelerator-config ethos-u55-128"``). The public
:meth:`Toolchain.compile` checks availability and turns the tool's own failures
(a crash, a timeout, a broken environment) into a :class:`CompileResult`; each
adapter writes only :meth:`Toolchain.compile_impl`. A graph the vendor compiler
rejects is a result too (``compile_failed``), never an exception.
"""

from __future__ import annotations

import copy
import logging
import os
import shlex
import subprocess
from abc import ABC, abstractmethod
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from edgepipe.errors import UserError
from edgepipe.graph.opgraph import OpGraph
from edgepipe.hashing import sha256_of
from edgepipe.support.report import Placement

log = logging.getLogger(__name__)

#: Environment variable that sets every vendor compiler's time limit (seconds).
TIMEOUT_VARIABLE = "EDGEPIPE_TOOLCHAIN_TIMEOUT_S"

CompileStatus = Literal["compiled", "compile_failed", "failed", "not installed"]
#: Results the compiler itself decided (not a timeout or a broken environment): the same again for the same input.
_DETERMINED: tuple[CompileStatus, ...] = ("compiled", "compile_failed")
#: How many compile results one process keeps (a fleet worker builds many models).
_KEPT = 16


@dataclass(frozen=True)
class ToolchainInfo:
    """What ``edgepipe toolchain list`` shows for one tool."""

    name: str
    installed: bool
    version: str | None
    environment: str = field(metadata={"doc": "The Python environment the tool runs in."})
    install_command: str


@dataclass
class CompileResult:
    """One vendor compile of one model: the vendor's placement by edgepipe node name, and its estimate.

    ``status``: "compiled" (placement is valid), "compile_failed" (the compiler ran and rejected or could not
    finalize the graph; ``detail`` is its message), "failed" (the tool itself broke), "not installed".
    ``unmatched`` holds the vendor's placement of layers or nodes that match no node of edgepipe's graph
    (renamed, fused, inserted): they are disagreements, never silently dropped; an edgepipe node missing from
    ``placement`` is one too. ``estimate`` holds the vendor's own
    figures with their units in the key (``cycles``, ``inference_ms``, ``clock_mhz``).
    """

    tool: str
    status: CompileStatus
    detail: str = ""
    placement: dict[str, Placement] = field(default_factory=dict)
    unmatched: dict[str, Placement] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)
    estimate: dict[str, float] = field(default_factory=dict)
    extra: dict[str, float | str] = field(default_factory=dict)


class ToolchainMissing(UserError):
    """A vendor toolchain the user asked for is not installed (exit 1, naming the install command)."""


class OptionError(ValueError):
    """A profile's ``vendor_tool`` names an option the tool does not take."""


class Toolchain(ABC):
    """A vendor compiler behind one adapter; subclasses write ``version_impl`` and ``compile_impl``."""

    name: ClassVar[str]
    install_command: ClassVar[str]
    #: option name (as written in a profile's ``vendor_tool``) -> what it sets.
    options: ClassVar[dict[str, str]] = {}
    #: The adapter's time limit (s); :data:`TIMEOUT_VARIABLE` overrides it (:meth:`limit_s`).
    timeout_s: ClassVar[float] = 900.0

    def limit_s(self) -> float:
        """How long one run of this tool may take (s): :data:`TIMEOUT_VARIABLE` when set, else ``timeout_s``. A
        graph a tool needs longer on (Vela's tensor allocator on a long audio model) is then a result, not a wait
        without end."""
        raw = os.environ.get(TIMEOUT_VARIABLE, "").strip()
        if not raw:
            return self.timeout_s
        try:
            value = float(raw)
        except ValueError:
            value = float("nan")
        if not value > 0:
            raise UserError(f"{TIMEOUT_VARIABLE}={raw!r} is not a number of seconds",
                            fix=f"set it to a positive number (e.g. 3600) or unset it for {self.timeout_s:.0f} s")
        return value

    @abstractmethod
    def version(self) -> str | None:
        """The installed tool's version, or None when it is not installed."""

    @abstractmethod
    def environment(self) -> str:
        """Where the tool runs: this Python, or the path of its own virtual environment."""

    def available(self) -> bool:
        """Whether the tool can be run now."""
        return self.version() is not None

    def info(self) -> ToolchainInfo:
        """Name, version, environment and install command, for ``edgepipe toolchain list``."""
        version = self.version()
        return ToolchainInfo(name=self.name, installed=version is not None, version=version,
                             environment=self.environment(), install_command=self.install_command)

    def install(self) -> float:
        """Install the tool where edgepipe manages it; returns seconds taken. Tools that live in edgepipe's own
        environment are installed with pip, so this only names the command."""
        if self.available():
            return 0.0
        raise ToolchainMissing(f"{self.name} installs into edgepipe's own environment",
                               fix=f"Run {self.install_command}")

    def parse_options(self, words: list[str]) -> dict[str, str]:
        """``["--accelerator-config", "ethos-u55-128"]`` -> ``{"accelerator-config": "ethos-u55-128"}``."""
        parsed: dict[str, str] = {}
        pairs = iter(words)
        for word in pairs:
            key = word.removeprefix("--")
            if not word.startswith("--") or key not in self.options:
                raise OptionError(f"{self.name} takes no option '{word}'. Known: "
                                  f"{', '.join('--' + k for k in sorted(self.options)) or 'none'}")
            value = next(pairs, None)
            if value is None:
                raise OptionError(f"{self.name} option '{word}' needs a value")
            parsed[key] = value
        return parsed

    def compile(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        """Compile ``model`` (whose graph edgepipe read as ``graph``) with ``options``; never raises for the
        tool's own failures.

        A build compiles one file with one tool and the same options more than once (edge-box-npu and rk3588
        deploy the same float ONNX to the same SoC; an Ethos-U target's placement check and its Vela estimate
        compile alike), so a result the compiler decided is kept per process and given again, as a copy, for
        the same bytes, tool version, options and adapter settings.
        """
        self.limit_s()  # a bad EDGEPIPE_TOOLCHAIN_TIMEOUT_S is an error whether or not this file was compiled before
        tool = self.label(options)
        if not self.available():
            return CompileResult(tool=tool, status="not installed", detail=self.install_command)
        key = (type(self).__name__, self.version() or "", tool, repr(sorted(vars(self).items())), sha256_of(model))
        if key in _RESULTS:
            _RESULTS.move_to_end(key)
            log.info("%s: %s (same file compiled earlier in this process)", tool, _RESULTS[key].status)
            return copy.deepcopy(_RESULTS[key])
        result = self._compile_once(model, graph, options, workdir)
        if result.status in _DETERMINED:
            _RESULTS[key] = copy.deepcopy(result)
            while len(_RESULTS) > _KEPT:
                _RESULTS.popitem(last=False)
        return result

    def _compile_once(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        tool = self.label(options)
        workdir.mkdir(parents=True, exist_ok=True)
        try:
            result = self.compile_impl(model, graph, options, workdir)
        except subprocess.TimeoutExpired:
            return CompileResult(tool=tool, status="failed", detail=f"timed out after {self.limit_s():g} s "
                                                                   f"(set {TIMEOUT_VARIABLE} to allow longer)")
        except OSError as exc:  # the tool's executable or environment is broken
            return CompileResult(tool=tool, status="failed", detail=f"{type(exc).__name__}: {exc}")
        log.info("%s: %s %s", result.tool, result.status, result.detail[:200])
        return result

    def label(self, options: dict[str, str]) -> str:
        """The tool and its options, as reports name it."""
        return " ".join([self.name, *(f"--{k} {v}" for k, v in sorted(options.items()))])

    @abstractmethod
    def compile_impl(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        """Run the tool; return its placement by node name of ``graph``."""


_RESULTS: OrderedDict[tuple[str, ...], CompileResult] = OrderedDict()


def split_vendor_tool(text: str) -> tuple[str, list[str]]:
    """A profile's ``vendor_tool`` string -> (tool name, option words)."""
    words = shlex.split(text)
    if not words:
        raise OptionError("vendor_tool is empty")
    return words[0], words[1:]


def last_line(text: str, fallback: str = "no output") -> str:
    """The last non-empty line of a tool's output (its error message, usually)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else fallback
