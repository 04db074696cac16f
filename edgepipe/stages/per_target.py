"""Stages that run once per target (support check, delegate estimate, …), each adding one report section.

A per-target stage is a function ``(context) -> (field_name, section)``; the
section becomes the typed field ``field_name`` of :class:`~edgepipe.report.BuildReport`.
Adding one is one function in its own module plus one line in :data:`TARGET_STAGES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile


@dataclass(frozen=True)
class TargetContext:
    """What a per-target stage may read: the validated inputs, the target, the artifacts and its output folder."""

    inputs: BuildInputs
    target: TargetProfile
    artifacts: tuple[Artifact, ...]
    folder: Path
    stages: StageLog


TargetStage = Callable[[TargetContext], tuple[str, Any]]


def _support(context: TargetContext) -> tuple[str, Any]:
    from edgepipe.support.stage import support_stage  # lazy: keeps CLI start-up fast

    return support_stage(context)


def _performance(context: TargetContext) -> tuple[str, Any]:
    from edgepipe.perf.stage import performance_stage  # lazy: keeps CLI start-up fast

    return performance_stage(context)


def _custom_ops(context: TargetContext) -> tuple[str, Any]:
    from edgepipe.stages.custom_ops import custom_ops_stage  # lazy: keeps CLI start-up fast

    return custom_ops_stage(context)


def _pytorch(context: TargetContext) -> tuple[str, Any]:
    from edgepipe.stages.torch_compare import torch_compare_stage  # lazy: keeps CLI start-up fast

    return torch_compare_stage(context)


#: The per-target stages, in order. Each entry: (stage name, function).
TARGET_STAGES: list[tuple[str, TargetStage]] = [("support", _support), ("performance", _performance),
                                                ("custom-ops", _custom_ops), ("pytorch", _pytorch)]


def run_target_stages(context: TargetContext) -> dict[str, Any]:
    """Run every registered per-target stage; returns report sections by field name."""
    sections: dict[str, Any] = {}
    for name, stage in TARGET_STAGES:
        with context.stages.stage(f"{name}:{context.target.name}"):
            field, section = stage(context)
            sections[field] = section
    return sections
