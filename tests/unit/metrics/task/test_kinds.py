"""Each task kind guessed from a synthetic reference output, and ``unknown`` where the data does not say."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.kinds import guess_kind
from tests.unit.metrics.task.synthetic import yolo_output

RNG = np.random.default_rng(7)


def softmax(logits: np.ndarray, axis: int) -> np.ndarray:
    exp = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return exp / exp.sum(axis=axis, keepdims=True)


def ctc_logits(blank: int = 0) -> np.ndarray:
    """[2, 24, 12] steps where ``blank`` wins two steps in three."""
    logits = RNG.normal(size=(2, 24, 12))
    logits[:, ::3, blank] -= 10
    logits[:, 1::3, blank] += 10
    logits[:, 2::3, blank] += 10
    return logits


def ctc_scores(blank: int = 0) -> np.ndarray:
    """:func:`ctc_logits` through a softmax."""
    return softmax(ctc_logits(blank), 2)


def test_softmax_rows_are_class_scores() -> None:
    guess = guess_kind(softmax(RNG.normal(size=(4, 10)), 1))
    assert (guess.kind, guess.params) == ("classification", {"class_axis": -1})
    assert guess_kind(RNG.normal(size=(4, 10)), "logits").kind == "classification"


def test_a_yolo_head_with_its_layout_and_objectness() -> None:
    guess = guess_kind(yolo_output(np.random.default_rng(0)))
    assert guess.kind == "detection-yolo"
    assert guess.params == {"layout": "channels-first", "objectness": False, "box_format": "xywh"}
    v5 = np.swapaxes(yolo_output(np.random.default_rng(1), samples=1, classes=81, anchors=2100), 1, 2)
    assert guess_kind(v5).params == {"layout": "anchors-first", "objectness": True, "box_format": "xywh"}


def test_corner_boxes_are_told_from_centre_boxes() -> None:
    output = yolo_output(np.random.default_rng(2))
    output[:, 2:4] += output[:, 0:2]  # x2 = x1 + w, y2 = y1 + h
    assert guess_kind(output).params["box_format"] == "xyxy"


@pytest.mark.parametrize("blank", [0, 11])
def test_ctc_steps_and_their_blank(blank: int) -> None:
    guess = guess_kind(ctc_scores(blank))
    assert (guess.kind, guess.params) == ("ctc", {"blank": blank, "class_axis": -1})
    assert guess_kind(np.swapaxes(ctc_scores(blank), 1, 2)).params == {"blank": blank, "class_axis": 1}
    logits = guess_kind(ctc_logits(blank))
    assert (logits.kind, logits.params, logits.confidence) == ("ctc", {"blank": blank, "class_axis": -1}, 0.6)


def test_distributions_per_position_without_a_blank_are_class_scores() -> None:
    guess = guess_kind(softmax(RNG.normal(size=(2, 16, 12)), 2))
    assert (guess.kind, guess.params) == ("classification", {"class_axis": -1})


def test_per_pixel_distributions_are_segmentation() -> None:
    maps = softmax(RNG.normal(size=(2, 4, 16, 16)), 1)
    assert guess_kind(maps).params == {"class_axis": 1}
    assert guess_kind(np.moveaxis(maps, 1, -1)).params == {"class_axis": -1}
    assert guess_kind(maps).kind == "segmentation"


def test_a_one_channel_probability_map_is_text_detection_when_named_so() -> None:
    probability = RNG.random((2, 1, 32, 32))
    assert guess_kind(probability, "text_prob_map").kind == "text-detection"
    binary = guess_kind(probability)
    assert (binary.kind, binary.params) == ("segmentation", {"class_axis": 1, "threshold": 0.5})


def test_named_keypoints_and_heat_maps() -> None:
    assert guess_kind(RNG.uniform(0, 200, (2, 17, 2)), "keypoints").params == {"dims": 2}
    assert guess_kind(RNG.uniform(0, 200, (2, 10)), "landmarks").params == {"dims": 2}
    heat = guess_kind(RNG.random((2, 3, 32, 32)) ** 8, "hm")
    assert (heat.kind, heat.params) == ("detection-heatmap", {"class_axis": 1})


@pytest.mark.parametrize(("values", "name"), [
    (RNG.normal(size=(4, 64)), "embedding"),  # an embedding: no softmax rows, no class name
    (RNG.normal(size=(2, 16, 32, 32)), ""),  # a feature map
    (RNG.normal(size=(2, 17, 2)), ""),  # pairs, unnamed
    (np.abs(RNG.normal(size=(2, 84, 100))), ""),  # too few anchors for a YOLO head, no distributions
    (RNG.normal(size=(2, 24, 12)), ""),  # per-step logits without a dominant class
    (RNG.random((2, 1, 4, 4)), ""),  # too small for a map
    (np.full((2, 10), np.nan), "prob"),
    (RNG.random((1, 2, 3, 4, 5)), ""),
])
def test_ambiguous_outputs_are_unknown(values: np.ndarray, name: str) -> None:
    guess = guess_kind(values, name)
    assert guess.kind == "unknown" and guess.confidence == 0.0 and guess.reason


def test_normalised_yolo_boxes_are_not_guessed() -> None:
    output = yolo_output(np.random.default_rng(0))
    output[:, :4] /= 320.0  # boxes in [0, 1] like the scores: nothing tells them apart
    assert guess_kind(output).kind == "unknown"


def test_box_regressors_whose_largest_coordinate_wins_every_step_are_not_ctc() -> None:
    """An SSD face detector's ``regressors`` [N, 896, 16] (box and keypoint offsets): one coordinate is the largest
    at every anchor, which looks like a CTC blank to the unnamed-logits rule; named as regressors, they are not."""
    rng = np.random.default_rng(0)
    regressors = rng.normal(0.0, 5.0, (4, 896, 16))
    regressors[..., 2] += 40.0  # the box width: the largest value at every anchor
    assert guess_kind(regressors, "regressors").kind != "ctc"
