"""The ladder driver's choices without running a quantizer: which step is kept, and the time budget.

Steps are replaced by functions that return scored :class:`StepOutcome` records, and the clock by a
counter the steps advance, so what is asserted is the driver's rule, not a machine's speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.artifacts import Artifact
from edgepipe.data.dataset import Dataset
from edgepipe.quantize import ladder
from edgepipe.quantize.ladder_context import LadderContext, LadderSettings, StepResult, selection_rank
from edgepipe.quantize.report import SelectionScore, StepOutcome
from edgepipe.quantize.vendor_check import CandidateCompile

# The reference model digits_nobn on its 197-sample selection split (ONNX and TFLite): plain per-tensor PTQ
# changes 4 top-1 answers with cosine 0.9888 (3.75 points lost on evaluation); QAT changes 9 and 8 answers
# with cosine 0.9951 (0.25 points lost on evaluation). Neither holds the 1-point rule.
PTQ = SelectionScore(min_cosine=0.988795, min_sqnr_db=15.888, accuracy=0.9594, drop_points=0.0, flips_points=2.0305,
                     failures=["output cosine 0.9888 < 0.995", "output SQNR 15.9 dB < 18.0 dB"], met=False)
QAT = SelectionScore(min_cosine=0.995102, min_sqnr_db=19.261, accuracy=0.9543, drop_points=0.5076,
                     flips_points=4.5685, failures=[], met=False)
HELD = SelectionScore(min_cosine=0.9991, min_sqnr_db=24.0, accuracy=0.9594, drop_points=0.0, flips_points=0.5076,
                      failures=[], met=True)


def _result(step: str, score: SelectionScore, tmp_path: Path) -> StepResult:
    outcome = StepOutcome(step=step, title=step, status="met" if score.met else "missed",
                          selection={"onnx": score, "tflite": score})
    path = tmp_path / f"{step}.onnx"
    path.write_bytes(b"")
    return StepResult(outcome, {"onnx": Artifact(path, "onnx", "int8")})


def test_no_step_held_keeps_the_best_fidelity_not_the_fewest_top1_changes(tmp_path: Path) -> None:
    results = [_result("ptq", PTQ, tmp_path), _result("calibration", PTQ, tmp_path), _result("qat", QAT, tmp_path)]
    final = ladder.kept_step(results)
    assert final is not None and final.outcome.step == "qat"


def test_the_first_step_that_held_is_kept(tmp_path: Path) -> None:
    results = [_result("ptq", PTQ, tmp_path), _result("mixed", HELD, tmp_path), _result("qat", HELD, tmp_path)]
    final = ladder.kept_step(results)
    assert final is not None and final.outcome.step == "mixed"


def test_on_a_tie_the_earlier_step_is_kept(tmp_path: Path) -> None:
    results = [_result("ptq", QAT, tmp_path), _result("calibration", QAT, tmp_path)]
    final = ladder.kept_step(results)
    assert final is not None and final.outcome.step == "ptq"


def test_selection_rank_orders_by_rule_then_misses_then_cosine_then_sqnr() -> None:
    assert selection_rank([HELD]) < selection_rank([QAT]) < selection_rank([PTQ])
    a = QAT.model_copy(update={"min_sqnr_db": 20.0})
    assert selection_rank([a]) < selection_rank([QAT])  # same cosine: the higher SQNR
    one_format_held = selection_rank([HELD, QAT])
    assert selection_rank([HELD, HELD]) < one_format_held < selection_rank([QAT, QAT])


class _Clock:
    """Seconds that pass only when a fake step says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _context(tmp_path: Path, budget: float, clock: _Clock) -> LadderContext:
    data = Dataset(tmp_path / "calibration.npz", (np.zeros((4, 2), np.float32),), None, "0" * 64)
    return LadderContext(model=Any, graph=None, floats={}, calibration=data, selection=None,  # type: ignore[arg-type]
                         evaluation=None, train=None, threshold=1.0, work=tmp_path,
                         settings=LadderSettings(time_budget_s=budget, sensitivity="auto"), clock=clock)


def _fake_steps(clock: _Clock, tmp_path: Path, seconds: dict[str, float], scores: dict[str, SelectionScore]) -> list:
    def step(name: str):
        def run(context: LadderContext) -> StepResult:
            clock.now += seconds[name]
            return _result(name, scores[name], tmp_path)
        return run
    return [(name, step(name)) for name in seconds]


@pytest.fixture
def unscored(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fake steps come scored; no sensitivity is measured."""
    monkeypatch.setattr(ladder, "score", lambda context, result: result)
    monkeypatch.setattr(ladder, "measure_sensitivity", lambda context: None)


def test_time_budget_spent_keeps_the_best_so_far_and_says_what_did_not_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unscored: None) -> None:
    clock = _Clock()
    seconds = {"ptq": 5.0, "calibration": 30.0, "mixed": 40.0, "qat": 50.0}
    scores = {"ptq": PTQ, "calibration": QAT, "mixed": HELD, "qat": HELD}
    monkeypatch.setattr(ladder, "LADDER_STEPS", _fake_steps(clock, tmp_path, seconds, scores))
    kept, report = ladder.run_ladder(_context(tmp_path, budget=20.0, clock=clock))
    assert [s.status for s in report.steps] == ["missed", "missed", "skipped", "skipped"]
    assert report.final_step == "calibration" and not report.met
    assert kept[0].path.name == "calibration.onnx"
    assert report.time_budget_s == 20.0 and report.seconds == 35.0
    assert all("time budget of 20 s (quantization.time_budget_s) was spent after 35 s" in s.note
               for s in report.steps[2:])
    assert [line.split(":")[0] for line in report.unfinished] == [
        "step mixed not run", "step qat not run", "per-layer sensitivity not measured"]


def test_step_a_runs_whatever_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unscored: None) -> None:
    clock = _Clock()
    seconds = {"ptq": 5.0, "calibration": 1.0}
    monkeypatch.setattr(ladder, "LADDER_STEPS", _fake_steps(clock, tmp_path, seconds, {"ptq": PTQ, "calibration": QAT}))
    context = _context(tmp_path, budget=0.001, clock=clock)
    kept, report = ladder.run_ladder(context)
    assert [s.status for s in report.steps] == ["missed", "skipped"] and report.final_step == "ptq" and kept


def test_within_the_budget_every_step_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unscored: None) -> None:
    clock = _Clock()
    seconds = {"ptq": 5.0, "calibration": 30.0, "mixed": 40.0, "qat": 50.0}
    scores = {"ptq": PTQ, "calibration": PTQ, "mixed": QAT, "qat": HELD}
    monkeypatch.setattr(ladder, "LADDER_STEPS", _fake_steps(clock, tmp_path, seconds, scores))
    _, report = ladder.run_ladder(_context(tmp_path, budget=600.0, clock=clock))
    assert report.final_step == "qat" and report.met and not report.unfinished


def _mixed_result(step: str, score: SelectionScore, tmp_path: Path) -> StepResult:
    result = _result(step, score, tmp_path)
    result.artifacts["onnx"] = Artifact(result.artifacts["onnx"].path, "onnx", "mixed")
    return result


def test_a_mixed_result_the_vendor_compiler_refuses_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unscored: None) -> None:
    """On a target without CPU fallback: a mixed-precision step that holds but leaves more ops on the CPU than the
    plain int8 model (a float HARD_SWISH Vela will not take) is not kept; the best plain int8 step is."""
    clock = _Clock()
    steps = [("ptq", lambda context: _result("ptq", PTQ, tmp_path)),
             ("mixed", lambda context: _mixed_result("mixed", HELD, tmp_path))]
    monkeypatch.setattr(ladder, "LADDER_STEPS", steps)
    context = _context(tmp_path, budget=600.0, clock=clock)
    seen = []

    def vela(artifact: Artifact, int8: Artifact | None) -> list[CandidateCompile]:
        seen.append((artifact.path.name, int8.path.name if int8 else None))
        return [CandidateCompile("ethos-u55", "vela --accelerator-config ethos-u55-128", "compiled", "", 3, 0)]

    context.vendor_check = vela
    kept, report = ladder.run_ladder(context)
    assert seen == [("mixed.onnx", "ptq.onnx")]  # compiled beside the plain int8 artifact of its format
    mixed = report.steps[1]
    assert mixed.status == "missed" and "vendor compiler refused" in mixed.note
    assert mixed.vendor_compile == ["ethos-u55: vela --accelerator-config ethos-u55-128 compiled mixed.onnx, "
                                    "3 ops on the CPU (plain int8: 0)"]
    assert report.final_step == "ptq" and kept[0].path.name == "ptq.onnx" and not report.met


def test_a_mixed_result_the_vendor_compiler_takes_whole_is_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unscored: None) -> None:
    steps = [("ptq", lambda context: _result("ptq", PTQ, tmp_path)),
             ("mixed", lambda context: _mixed_result("mixed", HELD, tmp_path))]
    monkeypatch.setattr(ladder, "LADDER_STEPS", steps)
    context = _context(tmp_path, budget=600.0, clock=_Clock())
    context.vendor_check = lambda artifact, int8: [CandidateCompile("ethos-u55", "vela", "compiled", "", 0, 0)]
    _, report = ladder.run_ladder(context)
    assert report.final_step == "mixed" and report.met and report.steps[1].vendor_compile
