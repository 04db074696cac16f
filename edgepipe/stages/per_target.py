"""Stages that run once per target (support check, delegate estimate, …), each adding one report section.

A per-target stage is a function ``(context) -> (field_name, section)``; the
section becomes the typed field ``field_name`` of :class:`~edgepipe.report.BuildReport`.
Adding one is one function in its own module plus one line in :data:`TARGET_STAGES`.
The registry imports its stages; the stages import only :mod:`edgepipe.stages.context`.
"""

from __future__ import annotations

from typing import Any

from edgepipe.containment import LITERT, ONNXRUNTIME, contained
from edgepipe.errors import ToolFailed
from edgepipe.stages.context import TargetContext, TargetStage
from edgepipe.stages.custom_ops import custom_ops_stage
from edgepipe.stages.performance import performance_stage
from edgepipe.stages.support import support_stage
from edgepipe.stages.torch_compare import torch_compare_stage

__all__ = ["TARGET_STAGES", "TargetContext", "TargetStage", "run_target_stages"]

#: The per-target stages, in order. Each entry: (stage name, function).
TARGET_STAGES: list[tuple[str, TargetStage]] = [("support", support_stage), ("performance", performance_stage),
                                                ("custom-ops", custom_ops_stage), ("pytorch", torch_compare_stage)]


def run_target_stages(context: TargetContext) -> dict[str, Any]:
    """Run every registered per-target stage; returns report sections by field name."""
    sections: dict[str, Any] = {}
    for name, stage in TARGET_STAGES:
        try:  # a runtime or quantizer failing inside a stage loses that section, not the target
            with context.stages.stage(f"{name}:{context.target.name}"), contained(ONNXRUNTIME), contained(LITERT):
                field, section = stage(context)
                sections[field] = section
        except ToolFailed as failure:
            context.stages.fail(f"{name}:{context.target.name}", failure)
    return sections
