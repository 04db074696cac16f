"""Greedy CTC decoding, edit distance and character agreement, on sequences counted by hand."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.task.ctc import character_agreement, edit_distance, greedy_decode, score_ctc


def one_hot(sequences: list[list[int]], classes: int) -> np.ndarray:
    """``[N, T, C]`` scores whose argmax at each step is the given class."""
    return np.eye(classes)[np.asarray(sequences)]


@pytest.mark.parametrize(("first", "second", "distance"), [
    ("kitten", "sitting", 3), ("flaw", "lawn", 2), ("", "abc", 3), ("abc", "", 3), ("same", "same", 0),
    ("abcdef", "azced", 3), ((1, 2, 3), (1, 3), 1)])
def test_edit_distance(first: str, second: str, distance: int) -> None:
    assert edit_distance(first, second) == distance
    assert edit_distance(second, first) == distance


def test_character_agreement_is_one_minus_edits_per_reference_character() -> None:
    assert character_agreement("kitten", "sitting") == pytest.approx(1 - 3 / 6)
    assert character_agreement("ab", "abcdefg") == 0.0  # 5 edits for 2 characters: floored
    assert character_agreement("", "") == 1.0


def test_greedy_decode_collapses_repeats_then_drops_blanks() -> None:
    scores = one_hot([[0, 1, 1, 0, 1, 2, 2, 0]], 3)
    assert greedy_decode(scores) == [(1, 1, 2)]
    assert greedy_decode(np.swapaxes(scores, 1, 2), class_axis=1) == [(1, 1, 2)]
    assert greedy_decode(scores, blank=2) == [(0, 1, 0, 1, 0)]


def test_score_averages_agreement_over_samples() -> None:
    reference = one_hot([[1, 0, 2, 0, 3, 0, 4, 0], [1, 1, 0, 2, 2, 0, 0, 0]], 5)
    candidate = one_hot([[1, 0, 2, 0, 1, 0, 4, 0], [1, 1, 0, 2, 2, 0, 0, 0]], 5)
    score = score_ctc(reference, candidate)
    # "1234" vs "1214": one substitution in 4 (0.75); "12" vs "12": 1.0.
    assert score.value == pytest.approx((0.75 + 1.0) / 2)
    assert score.extra["exact_match"] == 0.5
    assert score.detail == "character agreement 0.875, 50% of 2 texts identical (greedy CTC, blank 0)"
    assert score_ctc(reference, reference).value == 1.0


def test_labels_give_each_models_agreement_with_them() -> None:
    reference = one_hot([[1, 0, 2, 0, 3, 0, 4, 0]], 5)
    candidate = one_hot([[1, 0, 2, 0, 0, 0, 4, 0]], 5)
    score = score_ctc(reference, candidate, labels=[[1, 2, 3, 4]])
    assert score.extra["float_agreement_vs_labels"] == 1.0
    assert score.extra["int8_agreement_vs_labels"] == pytest.approx(0.75)
    with pytest.raises(ValueError, match="2 label sequences for 1 samples"):
        score_ctc(reference, candidate, labels=[[1], [2]])
