"""Every task kind has a scoring function, each scores identical outputs 1.0 with the parameters guessed for it."""

from __future__ import annotations

import inspect
from typing import get_args

import numpy as np
import pytest

import edgepipe.metrics.task as task
from edgepipe.metrics.task import TASK_METRICS, guess_kind
from edgepipe.metrics.task.kinds import Kind
from tests.unit.metrics.task.synthetic import yolo_output
from tests.unit.metrics.task.test_kinds import ctc_scores, softmax

RNG = np.random.default_rng(11)
EXAMPLES = {
    "classification": (softmax(RNG.normal(size=(4, 10)), 1), ""),
    "detection-yolo": (yolo_output(np.random.default_rng(0)), ""),
    "detection-heatmap": (RNG.random((2, 3, 32, 32)) ** 8, "hm"),
    "text-detection": (RNG.random((2, 1, 32, 32)), "text"),
    "ctc": (ctc_scores(), ""),
    "segmentation": (softmax(RNG.normal(size=(2, 4, 16, 16)), 1), ""),
    "keypoints": (RNG.uniform(0, 200, (2, 17, 3)), "pose"),
}


def test_every_kind_has_a_scoring_function() -> None:
    assert set(TASK_METRICS) == set(get_args(Kind)) - {"unknown"}


@pytest.mark.parametrize("kind", sorted(EXAMPLES))
def test_a_guessed_kind_scores_identical_outputs_one(kind: str) -> None:
    values, name = EXAMPLES[kind]
    guess = guess_kind(values, name)
    assert guess.kind == kind
    score = TASK_METRICS[kind](values, values.copy(), **guess.params)
    assert score.value == 1.0 and score.samples == len(values) and score.detail


def test_every_scoring_function_and_module_says_what_it_measures() -> None:
    for function in TASK_METRICS.values():
        assert function.__doc__ and inspect.getmodule(function).__doc__
        options = list(inspect.signature(function).parameters.values())[2:]
        assert all(option.kind is inspect.Parameter.KEYWORD_ONLY for option in options)
    assert set(task.__all__) <= set(dir(task))
