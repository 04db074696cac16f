"""Connected regions of a binarized map and text-box F1, on maps small enough to label by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.text_detection import Connectivity, label_regions, score_text_boxes, text_boxes

DIAGONAL = np.array([[1, 0, 0],
                     [0, 1, 0],
                     [0, 0, 1]], dtype=bool)


def test_diagonal_pixels_touch_through_corners_only_with_8_connectivity() -> None:
    assert label_regions(DIAGONAL, 8).tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert label_regions(DIAGONAL, 4).tolist() == [[1, 0, 0], [0, 2, 0], [0, 0, 3]]
    anti = DIAGONAL[:, ::-1]
    assert label_regions(anti, 8).tolist() == [[0, 0, 1], [0, 1, 0], [1, 0, 0]]


def test_a_winding_region_is_one_region() -> None:
    spiral = np.array([[1, 1, 1, 1, 1],
                       [0, 0, 0, 0, 1],
                       [1, 1, 1, 0, 1],
                       [1, 0, 0, 0, 1],
                       [1, 1, 1, 1, 1]], dtype=bool)
    labels = label_regions(spiral, 4)
    assert set(np.unique(labels)) == {0, 1}
    assert label_regions(np.zeros((4, 4), bool)).max() == 0


def test_labels_agree_with_scipy_on_random_masks() -> None:
    ndimage = pytest.importorskip("scipy.ndimage")
    rng = np.random.default_rng(3)
    for density in (0.3, 0.5, 0.6):
        mask = rng.random((40, 50)) < density
        cases: tuple[tuple[Connectivity, np.ndarray | None], ...] = ((4, None), (8, np.ones((3, 3))))
        for connectivity, structure in cases:
            expected, count = ndimage.label(mask, structure=structure)
            # Both number regions by their first pixel in row-major order.
            assert np.array_equal(label_regions(mask, connectivity), expected) and count > 1


def _two_lines() -> np.ndarray:
    probability = np.zeros((12, 14))
    probability[1:5, 0:10] = 0.8  # a 10×4 line: box [0, 1, 10, 5]
    probability[1:3, 1] = 0.6
    probability[8:11, 2:12] = 0.9  # a 10×3 line: box [2, 8, 12, 11]
    probability[10, 13] = 0.95  # one pixel: filtered by min_area
    return probability


def test_text_boxes_are_region_bounds_scored_by_mean_probability() -> None:
    found = text_boxes(_two_lines(), threshold=0.3, min_area=16)
    assert found.boxes.tolist() == [[0, 1, 10, 5], [2, 8, 12, 11]]
    assert found.scores.tolist() == pytest.approx([(38 * 0.8 + 2 * 0.6) / 40, 0.9])
    assert len(text_boxes(_two_lines(), min_area=1)) == 3


def test_a_text_line_split_in_two_costs_precision() -> None:
    reference = _two_lines()[None, None]
    candidate = reference.copy()
    candidate[0, 0, 1:5, 4] = 0.1  # split: [0,1,4,5] (IoU 16/40 = 0.4) and [5,1,10,5] (IoU 20/40 = 0.5)
    score = score_text_boxes(reference, candidate)
    assert score.value == pytest.approx(2 * 2 / (2 + 3))
    assert score.detail == "F1 0.80 at IoU 0.5 (2 float text boxes, 3 int8)"
    assert score_text_boxes(reference, reference).value == 1.0
    assert score_text_boxes(np.moveaxis(reference, 1, -1), np.moveaxis(reference, 1, -1)).value == 1.0


def test_blank_maps_on_both_sides_are_perfect() -> None:
    blank = np.zeros((2, 1, 8, 8))
    score = score_text_boxes(blank, blank)
    assert score.value == 1.0 and "nothing to find" in score.detail and score.samples == 2
