"""The confidence interval of the median host latency, which the gate's latency tolerance comes from."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.latency.interleaved import median_ci


def test_ranks_match_the_binomial_table() -> None:
    # n = 50: the 95 % interval of the median is the 18th to the 33rd ordered value (1-based).
    assert median_ci([float(i) for i in range(50)]) == (17.0, 32.0)
    assert median_ci([float(i) for i in range(100)]) == (39.0, 60.0)
    assert median_ci([float(i) for i in range(10)]) == (1.0, 8.0)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_too_few_runs_give_the_full_range(n: int) -> None:
    values = [float(i) for i in range(n)]
    assert median_ci(values) == (min(values), max(values))


def test_interval_covers_the_true_median_at_least_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(0)
    true_median = np.log(2)  # of Exp(1): latencies are skewed like this
    hits = 0
    trials = 2000
    for _ in range(trials):
        low, high = median_ci(list(rng.exponential(1.0, 50)))
        hits += low <= true_median <= high
    assert hits / trials >= 0.94


def test_empty_is_an_error() -> None:
    with pytest.raises(ValueError):
        median_ci([])
