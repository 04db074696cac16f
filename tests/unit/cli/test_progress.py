"""Progress display: silent off a terminal, a bar over the planned stages on one."""

from __future__ import annotations

import io
import sys

import pytest

from edgepipe.cli.progress import stage_progress


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_display_when_quiet_or_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with stage_progress(False) as listener:
        assert listener is None
    monkeypatch.setattr(sys, "stderr", _Terminal())
    with stage_progress(True) as listener:
        assert listener is None


def test_terminal_display_ticks_off_each_stage(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with stage_progress(False) as listener:
        assert listener is not None
        listener("plan", "2")
        for name in ("export", "quantize"):
            listener("start", name)
            listener("done", name)
    shown = terminal.getvalue()
    assert "✓ export" in shown and "✓ quantize" in shown
