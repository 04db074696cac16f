"""Corpus entries that need a fault or a second process: a full disk, SIGINT/SIGTERM mid-build, two builds at once.

Each builds the corpus' tiny ONNX model (no TensorFlow: a few seconds). The
interrupt tests send the signal once the build has started staging (a hidden
``*.tmp-*`` folder exists under the output root), while the latency stage's
100 000 timed runs keep it busy there.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.output import StagingFolder
from tests.corpus import make_corpus
from tests.corpus.conftest import ERROR_PREFIX, assert_clean_answer, snapshot

SPECIAL = {entry["name"]: entry for entry in make_corpus.special_entries()}
EXPECTED_FILES = ["model.onnx", "model_int8.onnx", "report.json", "report.md"]
BUSY_CONFIG = ('model = "{corpus}/model.onnx"\n[data]\ncalibration = "{corpus}/calib.npz"\n'
               'evaluation = "{corpus}/eval.npz"\n[latency]\nwarmup = {warmup}\nruns = {runs}\n')


def _config(tmp_path: Path, corpus: Path, *, busy: bool) -> Path:
    path = tmp_path / "edgepipe.toml"
    warmup, runs = (10_000, 100_000) if busy else (1, 5)
    path.write_text(BUSY_CONFIG.format(corpus=corpus, warmup=warmup, runs=runs), encoding="utf-8")
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "EDGEPIPE_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}


def _start(config: Path, out: Path, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    code = "import sys; from edgepipe.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen([sys.executable, "-c", code, "build", "-q", "--config", str(config), "--output", str(out)],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_staging(out: Path, proc: subprocess.Popen[str]) -> None:
    """Block until the build has a staging folder under ``out`` (it has started writing)."""
    while proc.poll() is None:
        if out.exists() and any(".tmp-" in p.name for p in out.rglob("*")):
            return
        time.sleep(0.01)
    raise AssertionError(f"the build ended before staging anything: {proc.communicate()}")


def test_full_disk_is_a_user_error_with_no_partial_output(corpus: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """ENOSPC on the second file written into the target's staging folder (fault injected into copyfile)."""
    entry = SPECIAL["disk_full"]
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EDGEPIPE_CACHE_DIR", str(tmp_path / "cache"))
    real_copyfile = shutil.copyfile
    staged: list[str] = []

    def copyfile(src: str, dst: str, **kwargs: object) -> str:
        if ".host-cpu.tmp-" in str(dst):
            staged.append(str(dst))
            if len(staged) == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_copyfile(src, dst, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", copyfile)
    config = _config(tmp_path, corpus, busy=False)
    before = snapshot(tmp_path)
    code = main(["build", "-q", "--config", str(config), "--output", str(out)])
    assert_clean_answer(entry, code, capsys.readouterr().err, corpus, out, tmp_path)
    assert len(staged) == 2, "the fault must hit after a first file was staged"
    assert not out.exists(), sorted(map(str, out.rglob("*")))
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("cache")} == before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_interrupt_mid_build_exits_130_and_leaves_nothing(sig: signal.Signals, corpus: Path, tmp_path: Path) -> None:
    entry = SPECIAL["sigint_mid_build" if sig == signal.SIGINT else "sigterm_mid_build"]
    out = tmp_path / "out"
    config = _config(tmp_path, corpus, busy=True)
    before = snapshot(tmp_path)
    proc = _start(config, out, tmp_path, _env(tmp_path))
    _wait_for_staging(out, proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=300)
    assert_clean_answer(entry, proc.returncode, err, corpus, out, tmp_path)
    assert not out.exists(), sorted(map(str, out.rglob("*")))
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("cache")} == before


def test_stage_timeout_stops_the_build_cleanly(corpus: Path, tmp_path: Path) -> None:
    """[limits] stage_timeout_s = 0.5 on a build whose latency stage alone runs 100 000 times (a subprocess:
    the alarm may fire inside any stage, TensorFlow's import included)."""
    entry = SPECIAL["stage_timeout"]
    out = tmp_path / "out"
    before = snapshot(tmp_path)
    code = "import sys; from edgepipe.cli import main; sys.exit(main(sys.argv[1:]))"
    args = [arg.replace("{corpus}", str(corpus)).replace("{out}", str(out)) for arg in entry["args"]]
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=_env(tmp_path),
                          capture_output=True, text=True, timeout=600)
    assert_clean_answer(entry, proc.returncode, proc.stderr, corpus, out, tmp_path)
    assert not out.exists()
    assert {k: v for k, v in snapshot(tmp_path).items() if not k.startswith("cache")} == before


def test_two_concurrent_builds_into_one_folder(corpus: Path, tmp_path: Path) -> None:
    """Two real processes build the same model into the same output root at once: both succeed, one wins whole."""
    out = tmp_path / "out"
    config = _config(tmp_path, corpus, busy=False)
    builds = [_start(config, out, tmp_path, {**_env(tmp_path), "EDGEPIPE_CACHE_DIR": str(tmp_path / f"cache{i}")})
              for i in range(2)]
    results = [proc.communicate(timeout=600) for proc in builds]
    for proc, (_, err) in zip(builds, results):
        assert proc.returncode == 0, err
        assert ERROR_PREFIX not in err and "Traceback" not in err
    root = out / "model"
    folder = root / "host-cpu"
    assert sorted(p.name for p in folder.iterdir() if p.name in EXPECTED_FILES) == EXPECTED_FILES
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "pass"
    shipped = {a["path"]: a["size_bytes"] for a in report["artifacts"]}
    assert all((folder / name).stat().st_size == size for name, size in shipped.items()), "report and files disagree"
    leftovers = [p.name for p in root.rglob("*") if ".tmp-" in p.name or ".old-" in p.name or p.name == ".scratch"]
    assert leftovers == []


def test_commits_racing_on_one_folder_each_leave_a_whole_folder(tmp_path: Path) -> None:
    """Eight stagings commit into one final folder at once: every commit succeeds, the result is one whole set."""
    final = tmp_path / "root" / "target"
    barrier = threading.Barrier(8)
    errors: list[BaseException] = []

    def build(n: int) -> None:
        try:
            with StagingFolder(final) as staged:
                assert staged.path is not None
                for i in range(20):
                    (staged.path / f"file{i}.txt").write_text(str(n))
                barrier.wait()
                staged.commit()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=build, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    contents = {(final / f"file{i}.txt").read_text() for i in range(20)}
    assert len(contents) == 1, "files from different builds were mixed"
    assert sorted(p.name for p in final.parent.iterdir()) == ["target"]
