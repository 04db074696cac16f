"""Same inputs, byte-identical artifacts: two clean builds in different folders, without the cache."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.e2e.conftest import Build

pytestmark = pytest.mark.slow

ARTIFACTS = ("model.onnx", "model.tflite", "model_int8.onnx", "model_int8.tflite")
#: Report fields that are measurements of this run (wall times, host latency) or of the stages it ran.
MEASURED = ("latency_ms", "latency", "stages", "performance")


def _stable(node: Any, top: bool = True) -> Any:
    """``node`` without the measurements: the MEASURED sections, and every wall time (``seconds``) inside."""
    if isinstance(node, dict):
        return {k: _stable(v, False) for k, v in node.items() if k != "seconds" and not (top and k in MEASURED)}
    if isinstance(node, list):
        return [_stable(v, False) for v in node]
    return node


def test_two_clean_builds_give_byte_identical_artifacts(first_build: Build, all_targets_build: Build) -> None:
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    assert all_targets_build.proc.returncode in (0, 2), all_targets_build.proc.stderr[-3000:]
    one, two = first_build.root / "host-cpu", all_targets_build.root / "host-cpu"
    assert one != two
    models = sorted(p.name for p in one.iterdir() if p.suffix in (".onnx", ".tflite"))
    assert set(ARTIFACTS) <= set(models)
    assert models == sorted(p.name for p in two.iterdir() if p.suffix in (".onnx", ".tflite"))
    for artifact in models:
        assert (one / artifact).read_bytes() == (two / artifact).read_bytes(), artifact


def test_two_clean_builds_agree_on_everything_but_measurements(first_build: Build, all_targets_build: Build) -> None:
    one = json.loads((first_build.root / "host-cpu" / "report.json").read_text())
    two = json.loads((all_targets_build.root / "host-cpu" / "report.json").read_text())
    assert _stable(one) == _stable(two)
