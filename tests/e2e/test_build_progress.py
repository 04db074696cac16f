"""What the pipeline tells the progress display: a cached build plans and reports its stages."""

from __future__ import annotations

from edgepipe.cache import BuildCache
from edgepipe.config import load_config
from edgepipe.pipeline import run_build
from tests.e2e.conftest import Build


def test_a_cached_build_plans_and_reports_its_stages(first_build: Build, cached_build: Build) -> None:
    assert cached_build.proc.returncode == 0
    events: list[tuple[str, str]] = []
    config = load_config(None, {"output": first_build.cwd / "build"}, cwd=first_build.cwd)
    cache = BuildCache(first_build.cwd / "cache")
    result = run_build(config, lambda event, name: events.append((event, name)), cache=cache)
    assert result.cached == {"host-cpu": True}
    assert events[0] == ("plan", "1")
    assert [e for e in events if e[0] == "done"] == [("done", "cache:host-cpu")]
