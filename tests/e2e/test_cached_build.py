"""A real cached rebuild of the reference model: identical outputs, no TensorFlow on a hit, partly cached
builds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import Build, edgepipe

HEAVY = ("tensorflow", "keras", "tf2onnx", "onnxruntime", "ai_edge_litert", "matplotlib")


def test_cached_rebuild_restores_identical_outputs(first_build: Build, cached_build: Build) -> None:
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    assert cached_build.proc.returncode == 0, cached_build.proc.stderr[-3000:]
    document = json.loads(cached_build.proc.stdout)
    assert [t["cached"] for t in document["summary"]["targets"]] == [True]
    assert len(document["summary"]["targets"][0]["cache_key"]) == 64
    after = {p.name: p.read_bytes() for p in (cached_build.root / "host-cpu").iterdir()}
    assert cached_build.before is not None and after == cached_build.before, "restored files differ from the build"


def test_cache_hit_never_imports_tensorflow(first_build: Build, cached_build: Build) -> None:
    assert cached_build.proc.returncode == 0
    script = ("import sys\nfrom edgepipe.cli.app import main\ncode = main(['build', '--quiet'])\n"
              f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    env = {**first_build.env, "GITHUB_STEP_SUMMARY": ""}
    proc = subprocess.run([sys.executable, "-c", script], cwd=first_build.cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "(from cache)" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "0 []"


def test_no_cache_builds_everything(all_targets_build: Build) -> None:
    assert all_targets_build.proc.returncode in (0, 2), all_targets_build.proc.stderr[-3000:]
    summary = json.loads((all_targets_build.root / "summary.json").read_text())
    assert not any(t["cached"] for t in summary["targets"])
    assert not (all_targets_build.cwd / "cache").exists(), "--no-cache must not fill the cache"


def test_partly_cached_build_restores_some_targets_and_builds_the_rest(first_build: Build, cached_build: Build,
                                                                       tmp_path: Path) -> None:
    assert cached_build.proc.returncode == 0
    env = {"EDGEPIPE_CACHE_DIR": first_build.env["EDGEPIPE_CACHE_DIR"]}
    proc = edgepipe("build", "--quiet", "--json", "--target", "ethos-u55", "--target", "host-cpu", cwd=tmp_path,
                    env=env)
    assert proc.returncode in (0, 2), proc.stderr[-3000:]
    summary = json.loads(proc.stdout)["summary"]
    assert [(t["target"], t["cached"]) for t in summary["targets"]] == [("ethos-u55", False), ("host-cpu", True)]
    root = tmp_path / "build" / "digits_cnn"
    for name, data in (cached_build.before or {}).items():
        assert (root / "host-cpu" / name).read_bytes() == data, name
    assert (root / "ethos-u55" / "report.json").is_file() and (root / "report.html").is_file()
