"""Resource limits: absurd inputs are refused before anything large is allocated.

A model file bigger than ``max_model_mb``, a declared tensor (a model input, an
array in a data file) bigger than ``max_tensor_mb``, or a data file declaring
more than ``max_data_mb`` in all is a user error raised from the file's size
and header alone, before it is read into memory. ``stage_timeout_s`` bounds the
wall time of every pipeline stage. The limits come from the ``[limits]`` table
of the config (see README) and are active for the duration of a build.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from edgepipe.errors import UserError

MB = 1024 * 1024


class LimitExceeded(UserError):
    """An input declares more than a resource limit allows, or a stage ran too long."""


@dataclass(frozen=True)
class ResourceLimits:
    """The limits of one build. Sizes in MiB (2**20 bytes); the stage timeout in seconds (None: none)."""

    max_model_mb: float = 2048.0
    max_tensor_mb: float = 1024.0
    max_data_mb: float = 4096.0
    stage_timeout_s: float | None = None

    @property
    def max_model_bytes(self) -> int:
        return int(self.max_model_mb * MB)

    @property
    def max_tensor_bytes(self) -> int:
        return int(self.max_tensor_mb * MB)

    @property
    def max_data_bytes(self) -> int:
        return int(self.max_data_mb * MB)


_ACTIVE: ContextVar[ResourceLimits] = ContextVar("edgepipe_limits", default=ResourceLimits())  # noqa: B039 - frozen


def active() -> ResourceLimits:
    """The limits in force (the defaults outside a build)."""
    return _ACTIVE.get()


@contextmanager
def use_limits(limits: ResourceLimits) -> Iterator[ResourceLimits]:
    """Make ``limits`` the ones in force for the body."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


def _mb(nbytes: int) -> str:
    return f"{nbytes / MB:,.1f} MiB" if nbytes >= MB else f"{nbytes:,} bytes"


def check_model_file(path: Path) -> int:
    """The size of the model file (or SavedModel folder) in bytes; a user error above ``max_model_mb``."""
    limit = active().max_model_bytes
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    if size > limit:
        raise LimitExceeded(f"model is {_mb(size)}, above the limit of {_mb(limit)}", path=path,
                            fix="Raise limits.max_model_mb in the config if the model really is that big")
    return size


def declared_bytes(shape: Sequence[int | None], itemsize: int) -> int:
    """Bytes a tensor of ``shape`` needs (unknown dims count as 1); exact for any size (Python ints)."""
    return math.prod(int(d) if d is not None else 1 for d in shape) * int(itemsize)


def check_declared_tensor(name: str, shape: Sequence[int | None], itemsize: int, path: Path) -> int:
    """Refuse a tensor whose declared shape × item size is above ``max_tensor_mb``, before allocating it."""
    if any(d is not None and int(d) < 0 for d in shape):
        raise LimitExceeded(f"tensor '{name}' declares a negative dimension {tuple(shape)}", path=path,
                            fix="Fix the tensor's shape")
    nbytes = declared_bytes(shape, itemsize)
    limit = active().max_tensor_bytes
    if nbytes > limit:
        raise LimitExceeded(f"tensor '{name}' declares shape {tuple(shape)} ({_mb(nbytes)}), above the limit "
                            f"of {_mb(limit)}", path=path,
                            fix="Fix the declared shape, or raise limits.max_tensor_mb in the config")
    return nbytes


def check_data_total(nbytes: int, path: Path) -> None:
    """Refuse a data file whose arrays declare more than ``max_data_mb`` in all."""
    limit = active().max_data_bytes
    if nbytes > limit:
        raise LimitExceeded(f"data file declares {_mb(nbytes)} of arrays, above the limit of {_mb(limit)}",
                            path=path, fix="Use fewer samples, or raise limits.max_data_mb in the config")


class _Deadline(BaseException):
    """Raised by the alarm; a BaseException so no ``except Exception`` inside a stage can swallow it."""

    signum = int(signal.SIGALRM)  # lost in a finalizer, it is raised again (edgepipe.interrupts)

    def __init__(self, stage: str):
        super().__init__(stage)
        self.stage = stage


@contextmanager
def stage_deadline(stage: str, seconds: float | None) -> Iterator[None]:
    """Raise :class:`LimitExceeded` in the body when it runs longer than ``seconds`` (wall time).

    Uses ``SIGALRM``, so it is enforced in the main thread (where the CLI runs
    the pipeline); elsewhere, or with ``seconds`` None, the body runs unbounded.
    """
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    fired: list[str] = []

    def _expired(signum: int, frame: object) -> None:
        fired.append(stage)
        raise _Deadline(stage)

    outer, _ = signal.getitimer(signal.ITIMER_REAL)  # a stage inside a stage keeps the outer deadline
    start = time.monotonic()
    previous = signal.signal(signal.SIGALRM, _expired)
    signal.setitimer(signal.ITIMER_REAL, min(seconds, outer) if outer > 0 else seconds)
    try:
        yield
    except KeyboardInterrupt:
        raise
    except BaseException:
        if not fired:
            raise
        # Whatever came out after the alarm is the alarm: C extensions re-raise it as their own errors.
        raise LimitExceeded(f"stage '{fired[0]}' ran longer than limits.stage_timeout_s = {seconds:g} s; "
                            "nothing was written",
                            fix="Raise limits.stage_timeout_s in the config, or build a smaller model") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer > 0:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))
