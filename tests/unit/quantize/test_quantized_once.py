"""A build measures each thing once: quantization groups share quantized files, their scores, node damage and
per-layer sensitivity through the build's :class:`~edgepipe.quantize.quantized_once.QuantizationMemo`."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest

from edgepipe.quantize import alone_int8, ladder_context, sensitivity
from edgepipe.quantize.ladder import LadderSettings, run_ladder
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import QuantRecipe
from tests.unit.quantize.conv_context import conv_context


def test_a_copy_in_another_folder_is_the_same_source(tmp_path: Path) -> None:
    """Two groups' copies of one float rewrite (each in its own folder) are one quantization; an edit is not."""
    first = tmp_path / "a" / "model.onnx"
    first.parent.mkdir()
    first.write_bytes(b"model bytes")
    copy = tmp_path / "b" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(first, copy)
    memo = QuantizationMemo()
    calibration = object()
    assert memo.key(first, QuantRecipe(), calibration) == memo.key(copy, QuantRecipe(), calibration)
    assert memo.key(first, QuantRecipe(), calibration) != memo.key(first, QuantRecipe(per_channel=False), calibration)
    copy.write_bytes(b"other bytes")
    assert memo.digest(copy) != memo.digest(first)
    assert memo.key(first, QuantRecipe(), calibration) != memo.key(copy, QuantRecipe(), calibration)


def test_recall_computes_once_and_keeps_nothing_when_it_fails_or_is_too_large() -> None:
    memo = QuantizationMemo()
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert memo.recall(("figure", 1), compute) == 1
    assert memo.recall(("figure", 1), compute) == 1
    assert memo.recall(("figure", 2), compute) == 2

    def failing() -> int:
        raise RuntimeError("tool failed")

    with pytest.raises(RuntimeError):
        memo.recall(("failing",), failing)
    assert memo.recall(("failing",), compute) == 3
    assert memo.recall(("too large to keep",), compute, keep=lambda _: False) == 4
    assert memo.recall(("too large to keep",), compute, keep=lambda _: False) == 5


def test_a_second_group_reuses_the_first_groups_measurements(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """The second group's ladder (its own folders and float copy, the same build) runs no model for a decision the
    first group's ladder already made, nor NNCF again, nor the per-layer sensitivity of its missed result, and its
    trail has the same figures."""
    settings = LadderSettings(steps=("ptq", "calibration", "nncf", "mixed"), methods=("minmax", "percentile"),
                              time_budget_s=3600)
    (tmp_path / "first").mkdir()
    (tmp_path / "second").mkdir()
    first = conv_context(tmp_path / "first", settings)
    _, first_report = run_ladder(first)
    runs: list[str] = []
    for module, name in ((ladder_context, "run_outputs"), (alone_int8, "run_outputs"),
                         (sensitivity, "onnx_sensitivity")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda path, *a, _real=real, **k: runs.append(str(path)) or _real(
            path, *a, **k))
    second = conv_context(tmp_path / "second", settings, group_of=first)
    with caplog.at_level(logging.INFO, logger="edgepipe.quantize.quantized_once"):
        _, second_report = run_ladder(second)
    assert runs == []
    assert "NNCF rewrite" in [r.getMessage().removeprefix("reused ").split(" measured")[0] for r in caplog.records]
    assert any(r.getMessage() == "reused fidelity measured earlier in this build" for r in caplog.records)
    assert [s.step for s in second_report.steps] == [s.step for s in first_report.steps] == [
        "ptq", "calibration", "nncf", "mixed"]
    for ours, theirs in zip(second_report.steps, first_report.steps):
        assert ours.candidates == theirs.candidates and ours.selection == theirs.selection
    assert second_report.final_step == first_report.final_step
    assert second_report.sensitivity == first_report.sensitivity and first_report.sensitivity


def test_a_group_with_a_cpu_target_adds_only_the_runs_on_this_hosts_kernels(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """An NPU group's exact-integer scores are the CPU group's too; the CPU group runs each candidate once more, on
    this host's int8 kernels, and never again in exact integers."""
    settings = LadderSettings(steps=("ptq", "calibration"), methods=("minmax",), time_budget_s=3600)
    (tmp_path / "npu").mkdir()
    (tmp_path / "cpu").mkdir()
    npu = conv_context(tmp_path / "npu", settings)
    run_ladder(npu)
    runs: list[bool] = []
    real = ladder_context.run_outputs
    monkeypatch.setattr(ladder_context, "run_outputs", lambda path, *a, host=False, **k: runs.append(host) or real(
        path, *a, host=host, **k))
    cpu = conv_context(tmp_path / "cpu", settings, group_of=npu)
    cpu.host_kernels = True
    _, report = run_ladder(cpu)
    assert runs and all(runs), runs
    # one run per distinct file: step (a)'s is the calibration step's first candidate
    assert len(runs) == len({c.recipe for s in report.steps for c in s.candidates})
