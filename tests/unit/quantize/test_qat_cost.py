"""ONNX QAT's steps come from a cost model of one step (edgepipe.quantize.qat_cost), never from a clock."""

from __future__ import annotations

from edgepipe.quantize.qat_cost import qat_plan, step_cost


def test_a_small_model_trains_every_step_asked_for() -> None:
    plan = qat_plan(wanted=96, samples=32, nodes=200, macs=50_000_000, budget_s=900.0)
    assert (plan.steps, plan.skipped, plan.shortened, plan.explain()) == (96, False, False, "")


def test_a_large_model_trains_fewer_steps_and_says_why() -> None:
    cost = step_cost(800, 8_000_000_000)
    plan = qat_plan(wanted=96, samples=32, nodes=800, macs=8_000_000_000, budget_s=60 * cost)
    assert plan.steps == 60 and plan.shortened
    assert "60 of 96 steps" in plan.explain() and "quantization.qat_budget_s" in plan.explain()


def test_qat_is_skipped_when_one_pass_over_the_samples_does_not_fit() -> None:
    cost = step_cost(800, 8_000_000_000)
    plan = qat_plan(wanted=96, samples=32, nodes=800, macs=8_000_000_000, budget_s=31 * cost)
    assert plan.steps == 0 and plan.skipped
    assert "one pass over 32 calibration samples" in plan.explain()
    assert "raise quantization.qat_budget_s" in plan.explain()


def test_the_plan_does_not_depend_on_anything_but_the_model_and_the_budget() -> None:
    first = qat_plan(96, 32, 500, 2_000_000_000, 900.0)
    assert all(qat_plan(96, 32, 500, 2_000_000_000, 900.0) == first for _ in range(3))
