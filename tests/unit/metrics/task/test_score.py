"""Precision, recall and F1 of a one-to-one matching, and how they read."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.score import MatchCounts, like_reference


def test_f1_of_one_match_among_three_reference_and_two_candidate_items() -> None:
    counts = MatchCounts(matched=1, reference=3, candidate=2)
    assert counts.precision == pytest.approx(1 / 2)
    assert counts.recall == pytest.approx(1 / 3)
    assert counts.f1 == pytest.approx(2 * (1 / 2 * 1 / 3) / (1 / 2 + 1 / 3)) == pytest.approx(0.4)
    assert counts.describe("boxes", at="at IoU 0.5") == "F1 0.40 at IoU 0.5 (3 float boxes, 2 int8)"


def test_nothing_to_find_and_nothing_found_is_perfect() -> None:
    counts = MatchCounts(0, 0, 0)
    assert counts.f1 == 1.0 and counts.precision == 1.0 and counts.recall == 1.0
    assert "nothing to find, nothing found" in counts.describe("boxes")


def test_finding_something_where_there_is_nothing_scores_zero() -> None:
    assert MatchCounts(0, 0, 3).f1 == 0.0
    assert MatchCounts(0, 0, 3).precision == 0.0
    assert MatchCounts(0, 4, 0).f1 == 0.0


def test_counts_add_over_samples() -> None:
    assert MatchCounts(1, 2, 3) + MatchCounts(4, 5, 6) == MatchCounts(5, 7, 9)


def test_a_candidate_differing_only_by_unit_axes_is_reshaped_and_a_transposed_one_refused() -> None:
    reference = np.zeros((1, 6, 40))
    assert like_reference(reference, np.zeros((6, 40))).shape == (1, 6, 40)
    with pytest.raises(ValueError, match=r"int8 output \[1, 40, 6\] is not laid out like the float output"):
        like_reference(reference, np.zeros((1, 40, 6)))
