"""mIoU vs float on class maps small enough to count by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.segmentation import class_ious, class_map, mean_iou, score_segmentation

REFERENCE = np.array([[[0, 0, 1],
                       [1, 1, 2]]])
CANDIDATE = np.array([[[0, 1, 1],
                       [1, 1, 1]]])


def scores(classes: np.ndarray, count: int = 3) -> np.ndarray:
    """``[N, C, H, W]`` one-hot scores of ``[N, H, W]`` class maps."""
    return np.moveaxis(np.eye(count)[classes], -1, 1)


def test_class_ious_of_a_2x3_map() -> None:
    # Class 0: both at 1 pixel, either at 2 → 1/2. Class 1: 3 of 5 → 3/5. Class 2: 0 of 1.
    assert class_ious(REFERENCE, CANDIDATE) == pytest.approx({0: 0.5, 1: 0.6, 2: 0.0})
    assert mean_iou(REFERENCE, CANDIDATE) == pytest.approx(1.1 / 3)


def test_score_takes_the_argmax_per_pixel_in_either_layout() -> None:
    score = score_segmentation(scores(REFERENCE), scores(CANDIDATE))
    assert score.value == pytest.approx(1.1 / 3)
    assert score.extra["pixel_agreement"] == pytest.approx(4 / 6)
    assert score.detail == "mIoU 0.367 over 3 classes, 66.7% of pixels agree, class 2 worst at IoU 0.00"
    last = score_segmentation(np.moveaxis(scores(REFERENCE), 1, -1), np.moveaxis(scores(CANDIDATE), 1, -1),
                              class_axis=-1)
    assert last.value == pytest.approx(1.1 / 3)
    assert score_segmentation(scores(REFERENCE), scores(REFERENCE)).value == 1.0


def test_a_one_channel_map_is_thresholded_into_two_classes() -> None:
    probability = np.array([[[[0.2, 0.6], [0.5, 0.9]]]])
    assert class_map(probability).tolist() == [[[0, 1], [1, 1]]]
    candidate = np.array([[[[0.2, 0.4], [0.5, 0.9]]]])
    # Background 1 of 2, foreground 2 of 3.
    assert score_segmentation(probability, candidate).value == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_labels_give_each_models_miou_against_them() -> None:
    score = score_segmentation(scores(REFERENCE), scores(CANDIDATE), labels=REFERENCE)
    assert score.extra["float_miou_vs_labels"] == 1.0
    assert score.extra["int8_miou_vs_labels"] == pytest.approx(1.1 / 3)
