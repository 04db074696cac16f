"""Signals that stop a build (Ctrl-C, SIGTERM, the stage timeout) must not be lost inside a finalizer.

Python runs a signal handler at the next bytecode of the main thread. When that
bytecode is in a ``__del__`` (TensorFlow, ONNX and PyTorch free their C objects
in finalizers), the exception the handler raises cannot propagate: Python
prints it as "Exception ignored in …" with a traceback and drops it, so the
build runs on past Ctrl-C or past its deadline. :func:`redeliver_lost_signals`
installs a hook that catches exactly those: it prints nothing and, a moment
later from another thread, trips the same signal again, so its handler raises
at a bytecode outside the finalizer. (Tripped from the hook itself, the handler
would raise inside the hook, and be lost the same way.) A signal whose handler
is gone by then (the stage ended) is not tripped: ``interrupt_main`` does
nothing for a signal Python does not handle.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

#: Seconds between a lost signal and its redelivery: long enough for the finalizer to return.
REDELIVERY_DELAY_S = 0.01


class Interrupted(KeyboardInterrupt):
    """A KeyboardInterrupt raised by a handler of ``signum`` (SIGTERM handled as Ctrl-C)."""

    def __init__(self, signum: int):
        super().__init__()
        self.signum = signum


def raise_interrupted(signum: int, frame: object) -> None:
    """A signal handler: unwind as on Ctrl-C, remembering which signal did it."""
    raise Interrupted(signum)


def lost_signal(error: BaseException | None) -> int | None:
    """The signal whose exception ``error`` is, if a signal handler raised it (None otherwise)."""
    signum = getattr(error, "signum", None)
    if isinstance(signum, int):
        return signum
    if isinstance(error, KeyboardInterrupt):  # Python's own SIGINT handler
        return int(signal.SIGINT)
    return None


class _Redelivery:
    """``sys.unraisablehook``: a lost signal is tripped again; anything else goes to the hook that was there."""

    def __init__(self, previous: Callable[[Any], object]):
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        signum = lost_signal(unraisable.exc_value)
        if signum is None:
            self.previous(unraisable)
            return
        timer = threading.Timer(REDELIVERY_DELAY_S, _thread.interrupt_main, args=(signum,))
        timer.daemon = True
        timer.start()


def redeliver_lost_signals() -> None:
    """Install the hook (once: a second call keeps the one installed)."""
    if not isinstance(sys.unraisablehook, _Redelivery):
        sys.unraisablehook = _Redelivery(sys.unraisablehook)
