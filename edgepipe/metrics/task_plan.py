"""Which task-level checks a build runs: the configured task, or each output's guessed kind, with its threshold.

The plan is made once per build from the float model's outputs and applied to every quantized artifact, so every
artifact is judged by the same decoder and the same threshold. ``[accuracy.task]`` overrides the guess.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from edgepipe.config import TaskConfig, TaskParam
from edgepipe.errors import ConfigError
from edgepipe.metrics.records import TaskInfo
from edgepipe.metrics.task import TASK_METRICS, guess_kind

#: The smallest task score vs float that passes, per kind (``accuracy.task.min_score`` overrides it).
DEFAULT_MIN_SCORE: dict[str, float] = {
    "classification": 0.98,  # top-1 agreement
    "detection-yolo": 0.97,  # F1 of int8 detections against float detections at IoU 0.5
    "detection-ssd": 0.97,
    "detection-heatmap": 0.97,
    "text-detection": 0.95,  # F1 of text boxes at IoU 0.5
    "ctc": 0.98,  # character agreement of the greedy decodes
    "segmentation": 0.95,  # mIoU against the float class map
    "keypoints": 0.95,  # PCK: share of keypoints within 5 % of the object's size
}
#: Parameters the runner passes itself, never read from the config.
_INTERNAL = ("labels",)


@dataclass(frozen=True)
class TaskPlan:
    """One task-level check: its ``kind``, the outputs it reads, its decoding ``params`` and threshold, and why
    it was chosen (``configured``, or the guess's reason)."""

    kind: str
    outputs: tuple[str, ...]
    min_score: float
    chosen: str
    params: dict[str, TaskParam] = field(default_factory=dict)


def allowed_params(kind: str) -> list[str]:
    """The decoding parameters of ``kind``'s scoring function (its keyword-only arguments)."""
    signature = inspect.signature(TASK_METRICS[kind])
    return [name for name, p in signature.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in _INTERNAL]


def check_task_config(task: TaskConfig) -> None:
    """A configured task's parameters must be ones its metric reads: a user error naming the key and the allowed
    ones otherwise (a typo never falls back to a default)."""
    if task.kind in ("auto", "none"):
        if task.params or task.outputs:
            raise ConfigError(f"accuracy.task.params/outputs need a task kind, not '{task.kind}'",
                              fix="Set accuracy.task.kind (e.g. 'detection-yolo') or remove them")
        return
    allowed = allowed_params(task.kind)
    unknown = sorted(set(task.params) - set(allowed))
    if unknown:
        raise ConfigError(f"accuracy.task.params: unknown key '{unknown[0]}' for {task.kind}",
                          fix=f"Use one of: {', '.join(allowed)}")
    if task.kind == "detection-ssd" and len(task.outputs) != 2:
        raise ConfigError("accuracy.task.outputs: detection-ssd reads two outputs", fix="Give [boxes, scores]")


def plan_tasks(names: Sequence[str], arrays: Sequence[np.ndarray], task: TaskConfig) -> list[TaskPlan]:
    """The checks for a model whose float outputs are ``names``/``arrays`` (sample-major)."""
    if task.kind == "none":
        return []
    if task.kind != "auto":
        outputs = tuple(task.outputs) or tuple(names[:1])
        missing = [o for o in outputs if o not in names]
        if missing:
            raise ConfigError(f"accuracy.task.outputs: the model has no output '{missing[0]}'",
                              fix=f"Use one of: {', '.join(names)}")
        return [TaskPlan(task.kind, outputs, _min_score(task, task.kind), "configured", dict(task.params))]
    plans = []
    for name, array in zip(names, arrays):
        guess = guess_kind(array, name)
        if guess.kind != "unknown":
            plans.append(TaskPlan(guess.kind, (name,), _min_score(task, guess.kind), f"guessed: {guess.reason}",
                                  dict(guess.params)))
    return plans


def _min_score(task: TaskConfig, kind: str) -> float:
    return task.min_score if task.min_score is not None else DEFAULT_MIN_SCORE[kind]


def run_task(plan: TaskPlan, reference: dict[str, np.ndarray], candidate: dict[str, np.ndarray]) -> TaskInfo:
    """``plan``'s score of the candidate outputs against the reference outputs (both by reference output name;
    candidate arrays already paired and of the reference's size)."""
    ref = [reference[name] for name in plan.outputs]
    cand = [candidate[name].reshape(reference[name].shape) for name in plan.outputs]
    metric = TASK_METRICS[plan.kind]
    if len(plan.outputs) == 1:
        score = metric(ref[0], cand[0], **plan.params)
    else:
        score = metric(tuple(ref), tuple(cand), **plan.params)
    return TaskInfo(kind=plan.kind, outputs=list(plan.outputs), metric=score.metric, value=round(score.value, 4),
                    min_score=plan.min_score, detail=score.detail, chosen=plan.chosen,
                    extra={k: round(float(v), 4) for k, v in score.extra.items()})


def task_failure(info: TaskInfo) -> str | None:
    """The failure line of a task check below its threshold (None when it passes)."""
    if info.value >= info.min_score:
        return None
    return f"{'/'.join(info.outputs)}: {info.metric} {info.value:.3f} < {info.min_score:g} ({info.detail})"
