"""Which task checks a build runs: guessed per output, or configured, with readable thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from edgepipe.config import TaskConfig
from edgepipe.errors import ConfigError
from edgepipe.metrics.task_plan import DEFAULT_MIN_SCORE, check_task_config, plan_tasks, run_task, task_failure
from tests.unit.metrics.task.synthetic import fake_quantize, yolo_output


def test_auto_plans_the_guessed_kind_with_its_default_threshold() -> None:
    reference = yolo_output(np.random.default_rng(0))
    plans = plan_tasks(["output0"], [reference], TaskConfig())
    assert [(p.kind, p.outputs, p.min_score) for p in plans] == [
        ("detection-yolo", ("output0",), DEFAULT_MIN_SCORE["detection-yolo"])]
    assert plans[0].chosen.startswith("guessed:")


def test_none_plans_nothing_and_a_configured_kind_is_used_as_given() -> None:
    reference = yolo_output(np.random.default_rng(0))
    assert plan_tasks(["output0"], [reference], TaskConfig(kind="none")) == []
    configured = TaskConfig(kind="detection-yolo", min_score=0.9, params={"score_threshold": 0.4})
    (plan,) = plan_tasks(["output0"], [reference], configured)
    assert (plan.min_score, plan.params, plan.chosen) == (0.9, {"score_threshold": 0.4}, "configured")


def test_a_task_that_loses_every_score_fails_with_a_readable_line() -> None:
    reference = yolo_output(np.random.default_rng(0))
    (plan,) = plan_tasks(["output0"], [reference], TaskConfig())
    info = run_task(plan, {"output0": reference}, {"output0": fake_quantize(reference)})
    line = task_failure(info)
    assert line is not None and line.startswith("output0: detection F1 vs float 0.000 < 0.97")
    per_channel = run_task(plan, {"output0": reference}, {"output0": fake_quantize(reference, axis=1)})
    assert task_failure(per_channel) is None


def test_unknown_task_parameters_are_user_errors_naming_the_allowed_ones() -> None:
    with pytest.raises(ConfigError, match="unknown key 'nms'.*score_threshold"):
        check_task_config(TaskConfig(kind="detection-yolo", params={"nms": 0.5}))
    with pytest.raises(ConfigError, match="need a task kind"):
        check_task_config(TaskConfig(params={"blank": 0}))
    with pytest.raises(ConfigError, match="two outputs"):
        check_task_config(TaskConfig(kind="detection-ssd", outputs=["boxes"]))
    check_task_config(TaskConfig(kind="ctc", params={"blank": 0}))


def test_a_configured_output_the_model_lacks_is_a_user_error() -> None:
    with pytest.raises(ConfigError, match="no output 'scores'"):
        plan_tasks(["output0"], [np.zeros((2, 5))], TaskConfig(kind="classification", outputs=["scores"]))
