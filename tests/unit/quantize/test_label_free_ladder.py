"""The fallback ladder without labels: every step runs on label-free fidelity of the selection split.

On :func:`tests.models.onnx_exports.paddle_like` (opset 11, Softmax + Sigmoid + HardSigmoid), ONNX
only. The evaluation split handed to the ladder cannot even be run (wrong shape): the ladder
must decide without reading it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest

from edgepipe.config import TaskConfig
from edgepipe.data.dataset import Dataset
from edgepipe.load import load_model
from edgepipe.metrics.label_free import Thresholds
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder
from edgepipe.quantize.settings import prepare_float_onnx
from tests.models.onnx_exports import image_batches, paddle_like

SETTINGS = LadderSettings(steps=("ptq", "calibration", "mixed"), methods=("minmax",), precisions=("int8", "float"),
                          mixed_budget=0.5)


def _context(folder: Path, min_cosine: float, *, selection: bool, min_sqnr_db: float | None = None) -> LadderContext:
    model = load_model(paddle_like(folder / "source.onnx"), input_shapes={"x": [1, 3, 32, 48]})
    float_path = folder / "model.onnx"
    onnx.save(model.handle, str(float_path))
    calibration = Dataset(folder / "calibration.npz", (image_batches(12, 32, 48, 0),), None, "0" * 64)
    chosen = Dataset(folder / "selection.npz", (image_batches(8, 32, 48, 1),), None, "1" * 64) if selection else None
    unreadable = Dataset(folder / "evaluation.npz", (np.zeros((4, 3, 5, 5), np.float32),), None, "2" * 64)
    work = folder / "ladder"
    work.mkdir()
    settings, notes = prepare_float_onnx({"onnx": float_path}, calibration, SETTINGS, work)
    return LadderContext(model=model, graph=None, floats={"onnx": float_path}, calibration=calibration,
                         selection=chosen, evaluation=unreadable, train=None, threshold=1.0, settings=settings,
                         work=work, preparation=notes, task=TaskConfig(kind="none"),  # gated on cosine/SQNR only
                         thresholds=Thresholds(min_cosine=min_cosine, min_sqnr_db=min_sqnr_db, min_part_sqnr_db=None))


@pytest.fixture(scope="module")
def strict(tmp_path_factory: pytest.TempPathFactory):
    """A cosine and an SQNR nothing reaches, so every step runs and says why."""
    return run_ladder(_context(tmp_path_factory.mktemp("strict"), 0.999999, selection=True, min_sqnr_db=150.0))


def test_every_step_runs_label_free_and_says_why(strict) -> None:
    kept, report = strict
    assert report.metric == "label_free" and not report.met
    assert report.decided_on.startswith("selection split, 8 samples of selection.npz: label-free fidelity")
    assert any("opset 11 upgraded to 13" in note for note in report.preparation)
    steps = {s.step: s for s in report.steps}
    assert list(steps) == ["ptq", "calibration", "mixed"]
    assert steps["ptq"].why == "first step"
    assert steps["calibration"].why.startswith("ptq missed on the selection split: onnx ")
    assert "cosine" in steps["calibration"].why
    assert steps["mixed"].why.startswith("calibration missed on the selection split")
    for step in steps.values():
        score = step.selection["onnx"]
        assert step.status == "missed" and not score.met and score.failures and -1.0 <= score.min_cosine <= 1.0
        assert score.accuracy is None and step.accuracy == {}  # no labels anywhere, nothing read from evaluation
    assert len(steps["calibration"].candidates) == 4  # minmax × 2 granularities × 2 activation symmetries
    assert all(c.min_cosine is not None and c.flips_points is None for c in steps["calibration"].candidates)
    mixed = steps["mixed"]
    assert mixed.kept_layers["onnx"] and "tried:" in mixed.note and "nodes" in mixed.cost
    assert any(group in mixed.note for group in ("Softmax", "Sigmoid", "HardSigmoid", "weight layer"))
    assert kept and kept[0].format == "onnx"


def test_mixed_precision_improves_the_selection_cosine(strict) -> None:
    _, report = strict
    steps = {s.step: s for s in report.steps}
    assert steps["mixed"].selection["onnx"].min_cosine >= steps["calibration"].selection["onnx"].min_cosine
    assert report.final_step in ("calibration", "mixed")


def test_ladder_stops_at_the_first_step_that_holds_on_calibration_split(tmp_path: Path) -> None:
    """Without data.selection the calibration split decides (and the trail says so); a loose gate stops at (a)."""
    kept, report = run_ladder(_context(tmp_path, 0.5, selection=False))
    assert report.met and report.final_step == "ptq" and [s.step for s in report.steps] == ["ptq"]
    assert report.decided_on.startswith("calibration (no data.selection given) split, 12 samples")
    assert kept[0].precision == "int8"


def test_mixed_precision_ranks_once_then_bisects(strict, tmp_path: Path) -> None:
    """A gate between what calibration reaches and what keeping the whole budget reaches: mixed precision holds
    with the fewest top-ranked nodes, found in about log2(budget) tries rather than one try per layer."""
    _, loose = strict
    steps = {s.step: s for s in loose.steps}
    reached = steps["mixed"].selection["onnx"].min_cosine
    before = steps["calibration"].selection["onnx"].min_cosine
    assert reached > before, "keeping the budget above int8 must improve on plain PTQ"
    kept, report = run_ladder(_context(tmp_path, (reached + before) / 2, selection=True))
    mixed = {s.step: s for s in report.steps}["mixed"]
    assert report.met and report.final_step == "mixed" and mixed.status == "met"
    nodes = int(re.search(r"of (\d+) nodes", steps["mixed"].cost).group(1))  # type: ignore[union-attr]
    budget = int(SETTINGS.mixed_budget * nodes)
    tries = [part for part in mixed.note.split("; ") if part.startswith("onnx: top ")]
    assert 1 <= len(mixed.kept_layers["onnx"]) <= budget
    assert len(tries) <= 1 + max(1, budget).bit_length(), mixed.note
    assert "onnx: float ranking: " in mixed.note
    assert kept[0].precision == "mixed"


def test_when_no_cut_holds_every_activation_int16_is_tried_last(tmp_path: Path) -> None:
    """Error spread over the whole graph: a target that runs int16 activations gets the whole-model a16w8 try
    (ONNX Runtime QDQ with int16 activations); it is kept when it scores best, and its cost says so."""
    context = _context(tmp_path, 0.999999, selection=True)
    context.settings = replace(context.settings, precisions=("int8", "a16w8"))
    context.thresholds = Thresholds(min_cosine=0.999999, min_sqnr_db=150.0)  # no cut of the ranking reaches it
    kept, report = run_ladder(context)
    mixed = {s.step: s for s in report.steps}["mixed"]
    assert "onnx: every activation -> a16w8: cosine" in mixed.note, mixed.note
    calibration = {s.step: s for s in report.steps}["calibration"]
    if mixed.recipe["onnx"].endswith("/a16w8"):
        assert "every activation int16" in mixed.cost and kept[0].precision == "mixed"
        assert mixed.selection["onnx"].min_cosine >= calibration.selection["onnx"].min_cosine
