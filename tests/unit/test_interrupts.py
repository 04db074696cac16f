"""A signal that lands in a finalizer (TensorFlow frees its C objects in ``__del__``) still stops the build.

Regression: CI's Ctrl-C-the-fleet test saw a worker's SIGTERM raised inside TensorFlow's
``UniquePtr.__del__``: Python printed "Exception ignored in … KeyboardInterrupt" with a traceback and the build
ran on until the worker was killed."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator

import pytest

from edgepipe.interrupts import Interrupted, raise_interrupted, redeliver_lost_signals
from edgepipe.limits import LimitExceeded, stage_deadline


class _SignalledInFinalizer:
    """Sends ``signum`` to this process from inside ``__del__``, where its handler's exception cannot propagate."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self) -> None:
        os.kill(os.getpid(), self.signum)
        sum(range(10_000))  # bytecodes inside the finalizer: the handler runs (and raises) here


def _run_past_finalizers(signum: int, seconds: float = 2.0) -> None:
    deadline = time.monotonic() + seconds
    _SignalledInFinalizer(signum)  # dropped at once: its finalizer runs here
    while time.monotonic() < deadline:
        time.sleep(0.001)


@pytest.fixture
def sigterm_raises() -> Iterator[None]:
    previous = signal.signal(signal.SIGTERM, raise_interrupted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_sigterm_lost_in_a_finalizer_is_raised_again_outside_it(sigterm_raises: None,
                                                                  capfd: pytest.CaptureFixture[str]) -> None:
    redeliver_lost_signals()
    with pytest.raises(Interrupted) as raised:
        _run_past_finalizers(signal.SIGTERM)
    assert raised.value.signum == signal.SIGTERM
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_stage_deadline_lost_in_a_finalizer_still_ends_the_stage() -> None:
    redeliver_lost_signals()
    with pytest.raises(LimitExceeded, match="stage 'export' ran longer"), stage_deadline("export", 60):
        _run_past_finalizers(signal.SIGALRM)


def test_other_unraisable_exceptions_still_reach_the_previous_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    class _Broken:
        def __del__(self) -> None:
            raise RuntimeError("a finalizer's own bug")

    seen: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(unraisable.exc_value))
    redeliver_lost_signals()
    _Broken()
    assert [str(error) for error in seen] == ["a finalizer's own bug"]
