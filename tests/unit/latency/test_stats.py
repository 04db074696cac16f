"""Latency statistics on inputs whose answers are known."""

from __future__ import annotations

import random

import pytest

from edgepipe.latency.stats import median_ci_ranks, summarize


def test_percentiles_mean_std_of_1_to_100():
    data = list(range(1, 101))
    random.Random(0).shuffle(data)
    stats = summarize(data)
    assert (stats.samples, stats.min_ms, stats.max_ms) == (100, 1, 100)
    assert stats.mean_ms == 50.5 and stats.std_ms == pytest.approx(29.011491975882016)
    assert stats.p50_ms == 50.5 and stats.p90_ms == pytest.approx(90.1) and stats.p99_ms == pytest.approx(99.01)


def test_median_ci_is_the_40th_and_61st_of_100():
    """The textbook 95 % interval of the median for n = 100: order statistics 40 and 61."""
    stats = summarize([float(i) for i in range(1, 101)])
    assert (stats.median_ci_low_ms, stats.median_ci_high_ms) == (40.0, 61.0)
    assert stats.median_ci_coverage == pytest.approx(0.9648, abs=1e-4)


@pytest.mark.parametrize(("n", "ranks"), [(6, (1, 6)), (10, (2, 9)), (20, (6, 15)), (1000, (469, 532))])
def test_ci_ranks_match_binomial_tables(n, ranks):
    lo, hi, coverage = median_ci_ranks(n)
    assert (lo, hi) == ranks and coverage >= 0.95


def test_too_few_samples_have_no_interval():
    assert median_ci_ranks(5) is None
    stats = summarize([1.0, 2.0, 3.0])
    assert stats.median_ci_low_ms is None and stats.p50_ms == 2.0


def test_one_sample_has_zero_spread():
    stats = summarize([4.0])
    assert stats.std_ms == 0.0 and stats.p90_ms == 4.0


def test_no_samples_is_an_error():
    with pytest.raises(ValueError):
        summarize([])
