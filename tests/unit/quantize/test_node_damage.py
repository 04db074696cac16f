"""The node-damage ranking is sized by a cost model of the model, never by a clock (verdicts must not follow load)."""

from __future__ import annotations

from edgepipe.quantize import node_damage
from edgepipe.quantize.node_damage import RANKING_BUDGET_S, ranking_plan, try_cost

MB = 1_000_000


def test_a_small_model_ranks_every_node_on_every_sample() -> None:
    # PP-OCRv2's classifier: 483 QDQ nodes, 124 int8, 0.6 MB, 16 MMAC
    assert ranking_plan(candidates=124, nodes=483, size_bytes=600_000, macs=16_000_000, samples=8) == (8, 124)


def test_a_slow_model_uses_fewer_samples_before_fewer_nodes() -> None:
    # PicoDet's layout detector at 800x608: 3.3 GMAC a sample
    samples, ranked = ranking_plan(candidates=239, nodes=931, size_bytes=7 * MB, macs=3_305_000_000, samples=8)
    assert 1 <= samples < 8 and ranked == 239
    cost = (931, 7 * MB, 3_305_000_000)
    assert try_cost(*cost, samples) * 239 <= RANKING_BUDGET_S < try_cost(*cost, samples + 1) * 239


def test_a_model_too_slow_for_one_sample_per_node_ranks_its_first_nodes_only() -> None:
    cost = (4000, 100 * MB, 40_000_000_000)
    samples, ranked = ranking_plan(1500, *cost, samples=8)
    assert samples == 1 and 1 <= ranked < 1500
    assert ranked * try_cost(*cost, 1) <= RANKING_BUDGET_S


def test_the_cost_model_grows_with_every_term() -> None:
    base = try_cost(900, 5 * MB, 500_000_000, 1)
    assert try_cost(1800, 5 * MB, 500_000_000, 1) > base and try_cost(900, 50 * MB, 500_000_000, 1) > base
    assert try_cost(900, 5 * MB, 5_000_000_000, 1) > base and try_cost(900, 5 * MB, 500_000_000, 8) > base
    assert node_damage.SECONDS_PER_MAC > 0
