"""The default executor, a local process pool: a worker that really dies is retried once in a fresh pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.fleet.executors import LocalPoolExecutor
from edgepipe.fleet.run import run_fleet
from edgepipe.fleet.spec import load_fleet
from tests.fleet import crashing
from tests.fleet.conftest import write_fleet

pytestmark = [pytest.mark.fleet, pytest.mark.thirdparty, pytest.mark.slow]


def test_process_pool_retries_a_killed_worker(fleet_inputs: dict[str, Path], tmp_path: Path) -> None:
    source = write_fleet(tmp_path / "fleet.toml", fleet_inputs)
    run = run_fleet(load_fleet(source), source, LocalPoolExecutor(workers=2), work=crashing.crash_once)
    report = run.report
    assert (tmp_path / "out" / ".crashed-digits_cnn-0").is_file()
    attempts = {j.model: j.attempts for j in report.jobs}
    assert attempts["digits_cnn"] == 2
    assert all(c.status in ("built", "restored") for c in report.cells if c.model != "broken")
    assert all(c.status == "error" for c in report.cells if c.model == "broken")
    assert len(report.cells) == 9 and report.verdict == "fail"
