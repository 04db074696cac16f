"""Ctrl-C in the middle of a fleet, for real: ``edgepipe fleet`` in its own process group, SIGINT while its two
workers build. It exits 130 with one JSON document, writes no fleet report, leaves no half-written target folder,
finishes no build after the signal, and no worker process outlives it.

The pool gets SIGINT on the command alone (``kill -INT``; a CI runner's cancel reaches only the command, too):
the command itself must stop its workers. Ray gets it on the whole group, as a terminal's Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from edgepipe.config import DEFAULT_MODEL
from edgepipe.fleet.report import FLEET_HTML, FLEET_JSON, FLEET_MD

#: Seconds the command may take to stop after the signal: the workers' grace period and Ray's shutdown.
STOP_LIMIT = 60.0


def _fleet_file(folder: Path, inputs: dict[str, Path]) -> Path:
    """Two rows of the bundled model on host-cpu: two jobs, one per worker, each a real build (seconds)."""
    rows = "".join(f'\n[[models]]\nname = "{name}"\nmodel = "{DEFAULT_MODEL}"\n[models.data]\n'
                   f'calibration = "{inputs["digits_calib"]}"\nevaluation = "{inputs["digits_eval"]}"\n'
                   for name in ("first", "second"))
    path = folder / "fleet.toml"
    path.write_text(f'targets = ["host-cpu"]\noutput = "out"\nworkers = 2\n{rows}', encoding="utf-8")
    return path


def _start(fleet: Path, executor: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-c", "from edgepipe.cli.app import entry_point; entry_point()", "fleet", str(fleet),
               "-e", executor, "--no-cache", "--json"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=fleet.parent, start_new_session=True)  # its own group: the signal hits only it


def _busy(process: psutil.Process, executor: str) -> bool:
    """A worker running a job: a pool worker past its start-up, or a Ray worker titled after the job function."""
    try:
        if executor == "ray":
            return "run_job" in " ".join(process.cmdline())
        return "python" in process.name().lower() and process.cpu_times().user > 3.0
    except psutil.NoSuchProcess:
        return False


def _workers_busy(proc: subprocess.Popen[str], executor: str, timeout: float) -> list[psutil.Process]:
    """Every process under the command once two workers are running jobs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        children = psutil.Process(proc.pid).children(recursive=True)
        if sum(_busy(c, executor) for c in children) >= 2:
            return children
        time.sleep(0.5)
    raise AssertionError(f"no two busy workers after {timeout} s")


@pytest.mark.parametrize(("executor", "group"), [("process", False), ("ray", True)])
def test_ctrl_c_stops_the_fleet_cleanly(executor: str, group: bool, fleet_inputs: dict[str, Path],
                                        tmp_path: Path) -> None:
    proc = _start(_fleet_file(tmp_path, fleet_inputs), executor)
    children = _workers_busy(proc, executor, timeout=240)
    time.sleep(2.0)  # well inside the jobs: TensorFlow is loading or the model is being exported
    signalled_at = time.time()
    os.killpg(proc.pid, signal.SIGINT) if group else proc.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    stdout, stderr = proc.communicate(timeout=STOP_LIMIT + 30)
    assert proc.returncode == 130, stderr[-3000:]
    assert time.monotonic() - signalled < STOP_LIMIT
    document = json.loads(stdout)  # one JSON document, nothing else
    assert document["exit_code"] == 130 and document["error"]["kind"] == "interrupted"
    assert "Traceback" not in stderr, stderr[-3000:]
    output = tmp_path / "out"
    assert not any((output / name).exists() for name in (FLEET_JSON, FLEET_MD, FLEET_HTML))
    files = list(output.rglob("*")) if output.exists() else []
    assert [p for p in files if ".tmp-" in p.name] == []  # every target folder is a finished build or absent
    late = [p for p in files if p.name == "report.json" and p.stat().st_mtime > signalled_at]
    assert late == []  # the workers stopped: no build went on to finish after the signal
    _, alive = psutil.wait_procs(children, timeout=15)  # Ray's own processes exit just after the command
    assert alive == [], [(c.pid, c.name()) for c in alive]
