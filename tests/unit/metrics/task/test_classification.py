"""Top-1 / top-5 agreement vs float and accuracy against labels, on scores read by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.classification import score_classification, top_k_agreement

REFERENCE = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
CANDIDATE = np.array([[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]])


def test_top1_agreement_and_top5_with_fewer_classes() -> None:
    score = score_classification(REFERENCE, CANDIDATE)
    assert score.value == 0.5  # the first sample's class 1 became class 2
    assert score.extra["top5_agreement"] == 1.0  # 3 classes: all in the top 5
    assert score.detail == "top-1 agreement 0.500, top-5 1.000 over 2 samples (3 classes)"
    assert score_classification(REFERENCE, REFERENCE).value == 1.0


def test_top5_agreement_among_seven_classes() -> None:
    reference = np.array([[0, 0, 0, 0, 0, 0, 1.0], [1.0, 0, 0, 0, 0, 0, 0]])
    # Sample 1: class 6 is 5th best (in); sample 2: class 0 is 7th (out).
    candidate = np.array([[0.9, 0.8, 0.7, 0.6, 0.0, 0.1, 0.5], [0.1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4]])
    assert top_k_agreement(reference, candidate, 5) == 0.5
    assert top_k_agreement(reference, candidate, 1) == 0.0


def test_ties_go_to_the_lower_class() -> None:
    tied = np.array([[1.25, 1.25, 0.0]])  # int8 rounding made classes 0 and 1 equal
    assert top_k_agreement(np.array([[0.4, 0.5, 0.1]]), tied, 1) == 0.0
    assert top_k_agreement(np.array([[0.5, 0.4, 0.1]]), tied, 1) == 1.0


def test_per_position_scores_and_labels() -> None:
    reference = np.stack([REFERENCE, REFERENCE])  # [2 samples, 2 positions, 3 classes]
    candidate = np.stack([CANDIDATE, REFERENCE])
    score = score_classification(reference, candidate, labels=np.array([[1, 0], [2, 0]]))
    assert score.value == pytest.approx(3 / 4) and score.samples == 2
    assert "over 4 positions" in score.detail
    assert score.extra["float_accuracy"] == pytest.approx(3 / 4)  # predicts 1, 0, 1, 0 for labels 1, 0, 2, 0
    assert score.extra["int8_accuracy"] == pytest.approx(2 / 4)  # predicts 2, 0, 1, 0
    channels_first = score_classification(np.swapaxes(reference, 1, 2), np.swapaxes(candidate, 1, 2), class_axis=1)
    assert channels_first.value == pytest.approx(3 / 4)
