"""PCK and NME vs float on keypoints whose distances are known."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.keypoints import as_points, object_sizes, score_keypoints

# A 3×4 box of points: diagonal 5 px.
REFERENCE = np.array([[[0.0, 0.0], [3.0, 0.0], [3.0, 4.0], [0.0, 4.0]]])
# Off by 0, 0.2, 0.3 and 1 px: errors 0, 0.04, 0.06 and 0.2 of the diagonal.
CANDIDATE = REFERENCE + np.array([[[0.0, 0.0], [0.2, 0.0], [0.0, 0.3], [0.6, 0.8]]])


def test_pck_and_nme_over_the_reference_box_diagonal() -> None:
    assert object_sizes(REFERENCE).tolist() == [5.0]
    score = score_keypoints(REFERENCE, CANDIDATE)
    assert score.value == pytest.approx(2 / 4)
    assert score.extra["nme"] == pytest.approx((0 + 0.04 + 0.06 + 0.2) / 4)
    assert score.extra["max_error"] == pytest.approx(0.2)
    assert score.detail == "PCK@0.05 0.500, NME 0.0750 of the box diagonal (4 points in 1 samples)"
    assert score_keypoints(REFERENCE, REFERENCE).value == 1.0


def test_a_given_normaliser_replaces_the_diagonal() -> None:
    score = score_keypoints(REFERENCE, CANDIDATE, normaliser=10.0)
    assert score.value == pytest.approx(3 / 4)  # errors 0, 0.02, 0.03, 0.1
    assert score.extra["nme"] == pytest.approx(0.15 / 4)


def test_flattened_and_three_value_points_read_the_same() -> None:
    flat = score_keypoints(REFERENCE.reshape(1, 8), CANDIDATE.reshape(1, 8))
    assert flat.value == pytest.approx(0.5)
    visible = np.concatenate([REFERENCE, np.ones((1, 4, 1))], axis=2)
    moved = np.concatenate([CANDIDATE, np.zeros((1, 4, 1))], axis=2)  # the third value is not a coordinate
    assert score_keypoints(visible, moved).value == pytest.approx(0.5)
    assert score_keypoints(visible.reshape(1, 12), moved.reshape(1, 12), dims=3).value == pytest.approx(0.5)


def test_unclear_layouts_and_degenerate_objects_are_refused() -> None:
    with pytest.raises(ValueError, match="set dims"):
        as_points(np.zeros((1, 12)))
    with pytest.raises(ValueError, match="give a normaliser"):
        score_keypoints(np.ones((1, 3, 2)), np.ones((1, 3, 2)))
