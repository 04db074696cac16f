"""Box geometry, per-class NMS and greedy matching, on boxes whose overlaps are computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.boxes import Detections, iou_matrix, match_flags, non_maximum_suppression, to_corners


def test_centre_boxes_become_corners() -> None:
    assert to_corners(np.array([[10.0, 20.0, 4.0, 6.0]]), "xywh").tolist() == [[8.0, 17.0, 12.0, 23.0]]
    assert to_corners(np.array([[1.0, 2.0, 3.0, 4.0]]), "xyxy").tolist() == [[1.0, 2.0, 3.0, 4.0]]


def test_iou_of_boxes_overlapping_by_known_areas() -> None:
    first = np.array([[0.0, 0.0, 2.0, 2.0]])
    second = np.array([[1.0, 1.0, 3.0, 3.0],  # 1 px² shared of 4 + 4 − 1 = 7
                       [0.0, 0.0, 2.0, 1.0],  # 2 of 4
                       [5.0, 5.0, 6.0, 6.0],  # apart
                       [0.0, 0.0, 2.0, 2.0]])
    assert iou_matrix(first, second)[0] == pytest.approx([1 / 7, 0.5, 0.0, 1.0])
    assert iou_matrix(np.zeros((1, 4)), np.zeros((1, 4)))[0, 0] == 0.0


def test_nms_keeps_the_best_box_of_each_overlapping_group_per_class() -> None:
    found = Detections.of([[0, 0, 10, 10], [1, 0, 11, 10], [20, 20, 30, 30], [0, 0, 10, 10]],
                          classes=[0, 0, 0, 1], scores=[0.8, 0.9, 0.7, 0.6])
    # [0,0,10,10] and [1,0,11,10] share 90 of 110 px² (IoU 0.82 > 0.45): the 0.9 one stays; class 1 is apart.
    kept = non_maximum_suppression(found, iou=0.45, max_detections=10)
    assert kept.scores.tolist() == [0.9, 0.7, 0.6]
    assert kept.boxes.tolist() == [[1, 0, 11, 10], [20, 20, 30, 30], [0, 0, 10, 10]]
    assert kept.classes.tolist() == [0, 0, 1]
    assert len(non_maximum_suppression(found, iou=0.45, max_detections=2)) == 2
    assert len(non_maximum_suppression(found, iou=0.9, max_detections=10)) == 4


def test_matching_is_greedy_by_score_within_a_class() -> None:
    reference = Detections.of([[0, 0, 10, 10]], classes=[0])
    candidate = Detections.of([[0, 0, 10, 10], [0, 0, 10, 9], [0, 0, 10, 10]], classes=[0, 0, 1],
                              scores=[0.5, 0.9, 0.8])
    # The 0.9 box (IoU 0.9) takes the only reference box; the exact 0.5 box comes too late; class 1 never matches.
    assert match_flags(reference, candidate, iou=0.5).tolist() == [False, True, False]
    assert match_flags(reference, Detections.of([[0, 0, 10, 5]]), iou=0.5).tolist() == [True]  # IoU exactly 0.5
    assert match_flags(reference, Detections.of([[0, 0, 10, 4]]), iou=0.5).tolist() == [False]  # IoU 0.4
