"""Progress display and what the pipeline tells it: silent off a terminal, a bar over the planned stages on one."""

from __future__ import annotations

import io
import sys

import pytest

from edgepipe.cache import BuildCache
from edgepipe.cli.progress import stage_progress
from edgepipe.config import load_config
from edgepipe.pipeline import run_build
from tests.ci.conftest import Build


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


def test_a_cached_build_plans_and_reports_its_stages(first_build: Build, cached_build: Build) -> None:
    assert cached_build.proc.returncode == 0
    events: list[tuple[str, str]] = []
    config = load_config(None, {"output": first_build.cwd / "build"}, cwd=first_build.cwd)
    cache = BuildCache(first_build.cwd / "cache")
    result = run_build(config, lambda event, name: events.append((event, name)), cache=cache)
    assert result.cached == {"host-cpu": True}
    assert events[0] == ("plan", "1")
    assert [e for e in events if e[0] == "done"] == [("done", "cache:host-cpu")]
