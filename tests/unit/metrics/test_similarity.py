"""One set of edge cases for cosine and SQNR, wherever edgepipe compares tensors."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.metrics.similarity import SQNR_CAP_DB, cosine, sqnr_db


def test_cosine_of_zero_vectors() -> None:
    zeros, ones = np.zeros(4), np.ones(4)
    assert cosine(zeros, zeros) == 1.0  # nothing to disagree on
    assert cosine(ones, zeros) == 0.0  # a candidate that lost the whole signal is not "identical"
    assert cosine(zeros, ones) == 0.0


def test_sqnr_edge_cases() -> None:
    ref = np.array([1.0, -2.0, 3.0])
    assert sqnr_db(ref, ref) == SQNR_CAP_DB
    assert sqnr_db(np.zeros(3), ref) == -SQNR_CAP_DB
    assert sqnr_db(ref, ref + 1e-12) == SQNR_CAP_DB  # capped, never above


def test_hand_computed_values() -> None:
    ref, cand = np.array([3.0, 4.0]), np.array([4.0, 3.0])
    assert cosine(ref, cand) == pytest.approx(24 / 25)
    assert sqnr_db(ref, cand) == pytest.approx(10 * np.log10(25 / 2))


def test_sequences_are_one_vector() -> None:
    parts = [np.array([1.0, 2.0]), np.array([[3.0]])]
    assert cosine(parts, np.array([1.0, 2.0, 3.0])) == pytest.approx(1.0)
    assert sqnr_db(parts, [np.array([1.0, 2.0, 3.0])]) == SQNR_CAP_DB
