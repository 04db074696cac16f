"""Detection F1 and mAP@0.5 vs float on hand-computed boxes, the three head decoders, and why task metrics exist."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.similarity import cosine
from edgepipe.metrics.task.detection import (
    Detections,
    average_precision,
    decode_ssd,
    decode_yolo,
    f1_against,
    heatmap_peaks,
    score_heatmap,
    score_ssd,
    score_yolo,
    yolo_layout,
)
from tests.unit.metrics.task.synthetic import fake_quantize, yolo_output

THREE = Detections.of([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]])


def test_f1_with_one_of_two_candidates_below_the_iou() -> None:
    # One box exact, one over [20,0,30,10] at IoU 40/100 = 0.4: P 1/2, R 1/3, F1 2·(1/6)/(5/6) = 0.4.
    candidate = Detections.of([[0, 0, 10, 10], [20, 0, 30, 4]], scores=[0.9, 0.8])
    score = f1_against([THREE], [candidate])
    assert score.value == pytest.approx(0.4)
    assert score.extra["precision"] == pytest.approx(0.5) and score.extra["recall"] == pytest.approx(1 / 3)
    assert score.detail == "F1 0.40 at IoU 0.5 (3 float boxes, 2 int8)"
    assert score.metric == "detection F1 vs float" and score.samples == 1


def test_identical_detections_score_one() -> None:
    score = f1_against([THREE, THREE], [THREE, THREE])
    assert score.value == 1.0 and score.extra["map50"] == 1.0 and score.samples == 2


def test_empty_reference_and_candidate_is_perfect_and_says_so() -> None:
    empty = Detections.of(np.zeros((0, 4)))
    score = f1_against([empty], [empty])
    assert score.value == 1.0 and score.extra["map50"] == 1.0
    assert "nothing to find, nothing found" in score.detail


def test_boxes_where_the_reference_has_none_score_zero() -> None:
    empty = Detections.of(np.zeros((0, 4)))
    score = f1_against([empty], [THREE])
    assert score.value == 0.0 and score.extra["map50"] == 0.0
    assert f1_against([THREE], [empty]).value == 0.0


def test_average_precision_with_all_point_interpolation() -> None:
    reference = Detections.of([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]], classes=[0, 0, 1])
    # Class 0 ranked: hit (P 1, R 1/2), miss (P 1/2), hit (P 2/3, R 1): AP = 1/2·1 + 1/2·2/3 = 5/6.
    # Class 1 is never found: AP 0. Class 2 is not in the reference and is left out of the mean.
    candidate = Detections.of([[0, 0, 10, 10], [60, 0, 70, 10], [20, 0, 30, 10], [40, 0, 50, 10]],
                              classes=[0, 0, 0, 2], scores=[0.9, 0.8, 0.7, 0.95])
    assert average_precision([reference], [candidate]) == pytest.approx((5 / 6 + 0) / 2)
    # Spread over two samples, the ranking (and so the AP) is the same.
    first = Detections.of([[0, 0, 10, 10], [20, 0, 30, 10]], classes=[0, 0])
    second = Detections.of([[40, 0, 50, 10]], classes=[1])
    split = [Detections.of([[0, 0, 10, 10], [20, 0, 30, 10]], classes=[0, 0], scores=[0.9, 0.7]),
             Detections.of([[60, 0, 70, 10]], classes=[0], scores=[0.8])]
    assert average_precision([first, second], split) == pytest.approx(5 / 12)


def _yolo_rows() -> np.ndarray:
    """[1, 24, 4+2] anchors-first: two overlapping class-0 boxes, one class-1 box, one below the threshold."""
    rows = np.zeros((1, 24, 6))
    rows[0, :, 0:4] = [200.0, 200.0, 4.0, 4.0]
    rows[0, 0] = [50, 50, 20, 20, 0.9, 0.1]
    rows[0, 1] = [51, 50, 20, 20, 0.8, 0.1]  # IoU 380/420 with anchor 0: suppressed
    rows[0, 2] = [51, 50, 20, 20, 0.1, 0.7]  # same place, other class: kept
    rows[0, 3] = [150, 150, 10, 10, 0.2, 0.0]  # below 0.25
    return rows


def test_yolo_decode_thresholds_and_suppresses_per_class_in_either_layout() -> None:
    rows = _yolo_rows()
    for output in (rows, np.swapaxes(rows, 1, 2)):
        (found,) = decode_yolo(output)
        assert found.boxes.tolist() == [[40, 40, 60, 60], [41, 40, 61, 60]]
        assert found.scores.tolist() == [0.9, 0.7] and found.classes.tolist() == [0, 1]
    assert yolo_layout(rows.shape) == "anchors-first"
    assert yolo_layout(np.swapaxes(rows, 1, 2).shape) == "channels-first"
    with pytest.raises(ValueError, match="set the layout"):
        yolo_layout((1, 10, 12))


def test_yolo_objectness_multiplies_class_scores_and_xyxy_boxes_are_kept() -> None:
    rows = np.zeros((1, 30, 7))
    rows[0, 0] = [10, 10, 30, 40, 0.5, 0.9, 0.2]  # 0.45 ≥ 0.25
    rows[0, 1] = [50, 50, 70, 70, 0.2, 0.9, 0.0]  # 0.18 < 0.25
    (found,) = decode_yolo(rows, objectness=True, box_format="xyxy")
    assert found.boxes.tolist() == [[10, 10, 30, 40]]
    assert found.scores.tolist() == pytest.approx([0.45]) and found.classes.tolist() == [0]


def test_ssd_decode_never_reports_the_background_class() -> None:
    boxes = np.array([[[0, 0, 10, 10], [20, 20, 30, 30]]], dtype=float)
    scores = np.array([[[0.9, 0.6, 0.1], [0.95, 0.1, 0.2]]])
    (found,) = decode_ssd(boxes, scores, background=0)
    assert found.boxes.tolist() == [[0, 0, 10, 10]] and found.classes.tolist() == [1]
    (with_background,) = decode_ssd(boxes, scores)
    assert with_background.classes.tolist() == [0, 0]
    assert score_ssd((boxes, scores), (boxes, scores), background=0).value == 1.0


def test_labels_add_each_models_f1_against_them() -> None:
    rows = _yolo_rows()
    labels = [Detections.of([[40, 40, 60, 60]], classes=[0])]
    score = score_yolo(rows, rows, labels=labels)
    assert score.value == 1.0
    assert score.extra["float_f1_vs_labels"] == pytest.approx(2 / 3)  # 1 of 2 found boxes, the 1 label
    assert score.extra["int8_map50_vs_labels"] == pytest.approx(1.0)


def _centre_maps() -> np.ndarray:
    maps = np.zeros((1, 2, 8, 8))
    maps[0, 0, 1, 1] = 0.9
    maps[0, 0, 1, 2] = 0.5  # beside a higher value: not a peak
    maps[0, 1, 5, 5] = 0.4
    maps[0, 1, 7, 7] = 0.2  # below 0.3
    return maps


def test_heatmap_peaks_are_local_maxima_above_the_threshold() -> None:
    (peaks,) = heatmap_peaks(_centre_maps())
    assert peaks.points.tolist() == [[1, 1], [5, 5]]
    assert peaks.scores.tolist() == [0.9, 0.4] and peaks.classes.tolist() == [0, 1]
    (last,) = heatmap_peaks(np.moveaxis(_centre_maps(), 1, -1), class_axis=-1)
    assert last.points.tolist() == [[1, 1], [5, 5]]


def test_heatmap_peaks_match_within_the_radius() -> None:
    reference = _centre_maps()
    candidate = np.zeros_like(reference)
    candidate[0, 0, 2, 2] = 0.8  # √2 px from (1, 1): found
    candidate[0, 1, 5, 2] = 0.7  # 3 px from (5, 5): missed
    score = score_heatmap(reference, candidate, radius=2.0)
    assert score.value == pytest.approx(0.5)  # 1 matched of 2 and 2
    assert score_heatmap(reference, reference).value == 1.0
    assert score_heatmap(reference, candidate, radius=3.0).value == 1.0


def test_per_tensor_int8_hides_lost_class_scores_from_cosine_but_not_from_f1() -> None:
    """A [N, 4+C, A] head with boxes in 0…320 px and probabilities in 0…1 shares one int8 scale (≈2.5 px a step):
    every probability rounds to 0, the flattened cosine barely moves, and every detection is gone. One scale per
    channel keeps them."""
    reference = yolo_output(np.random.default_rng(0), image=320.0)
    per_tensor = fake_quantize(reference)
    per_channel = fake_quantize(reference, axis=1)
    assert cosine(reference, per_tensor) > 0.99
    lost = score_yolo(reference, per_tensor)
    assert lost.value < 0.8
    assert lost.detail.startswith("F1 0.00 at IoU 0.5: 0 of 32 float boxes scoring >= 0.3 found")
    kept = score_yolo(reference, per_channel)
    assert kept.value >= 0.97 and kept.extra["map50"] >= 0.97


def test_a_score_one_step_across_the_threshold_neither_loses_nor_invents_a_box() -> None:
    """A float box at 0.26 read as 0.24 by int8 (and one at 0.24 read as 0.26) is within the margin."""
    reference = np.zeros((1, 5, 8), np.float32)
    reference[0, :4, :3] = [[10, 50, 90], [10, 50, 90], [8, 8, 8], [8, 8, 8]]
    reference[0, 4, :3] = [0.9, 0.26, 0.24]
    candidate = reference.copy()
    candidate[0, 4, 1:3] = [0.24, 0.26]
    assert score_yolo(reference, candidate, layout="channels-first").value == 1.0
    assert score_yolo(reference, candidate, layout="channels-first", score_margin=0.0).value < 1.0
