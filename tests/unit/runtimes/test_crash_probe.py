"""A TFLite file is opened by LiteRT in a child process first (edgepipe/runtimes/crash_probe.py): a file LiteRT
runs is no crash, and a file it refuses with a Python exception is left to the in-process load to report."""

from __future__ import annotations

from pathlib import Path

from edgepipe.export.tflite_ops import runnable_in_litert
from edgepipe.runtimes.crash_probe import litert_crash
from tests.models.probes.tflite import dynamic_batch_tflite


def test_a_tflite_litert_runs_is_no_crash(tmp_path: Path) -> None:
    path = dynamic_batch_tflite(tmp_path / "model.tflite")
    assert litert_crash(path) is None and runnable_in_litert(path) is None


def test_a_refused_tflite_is_reported_by_litert_itself(tmp_path: Path) -> None:
    path = dynamic_batch_tflite(tmp_path / "model.tflite")
    broken = tmp_path / "broken.tflite"
    broken.write_bytes(path.read_bytes()[:400])
    assert litert_crash(broken) is None
    problem = runnable_in_litert(broken)
    assert problem is not None and "crashed" not in problem
