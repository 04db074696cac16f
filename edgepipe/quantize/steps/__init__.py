"""The rungs of the fallback ladder, in order: one module per step, one line per step in :data:`LADDER_STEPS`.

Each step takes the :class:`~edgepipe.quantize.ladder_context.LadderContext` and
returns a :class:`~edgepipe.quantize.ladder_context.StepResult`; the driver
(:mod:`edgepipe.quantize.ladder`) scores it on the selection split and stops at
the first that holds. Choices inside a step (which calibration, which layers to
keep higher) are made on the selection split too, never on the evaluation split.
Adding a step (e.g. QAT for another framework): a module here with its function,
and one line below.
"""

from __future__ import annotations

from collections.abc import Callable

from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.steps.calibration import calibration_step
from edgepipe.quantize.steps.equalize import equalize_step
from edgepipe.quantize.steps.mixed import mixed_step
from edgepipe.quantize.steps.nncf import nncf_step
from edgepipe.quantize.steps.ptq import ptq_step
from edgepipe.quantize.steps.qat import qat_step

Step = Callable[[LadderContext], StepResult]

#: The ladder, in order: (step name, function).
LADDER_STEPS: list[tuple[str, Step]] = [
    ("ptq", ptq_step),
    ("calibration", calibration_step),
    ("equalize", equalize_step),
    ("nncf", nncf_step),
    ("mixed", mixed_step),
    ("qat", qat_step),
]

__all__ = ["LADDER_STEPS", "Step", "calibration_step", "equalize_step", "mixed_step", "nncf_step", "ptq_step",
           "qat_step"]
