"""(c) Cross-layer equalization: the float ONNX equalized by AIMET-ONNX, then quantized with the best calibration.

The last try that keeps every layer int8: the float weights are rescaled (:mod:`edgepipe.quantize.equalization`),
then quantized with the setting step (b) chose, and the result is kept only when it ranks above that setting on the
selection split (:func:`~edgepipe.quantize.ladder_context.selection_rank`). Kept, the equalized model is what the
later steps quantize too (mixed precision, QAT). ONNX only: TFLite is quantized from the framework's own graph, so
its artifact here is the one step (b) chose.
"""

from __future__ import annotations

from edgepipe.containment import AIMET_ONNX, contained
from edgepipe.errors import ToolFailed
from edgepipe.quantize.equalization import INSTALL, Equalization, aimet_missing, equalize_onnx
from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.onnx_qdq import preprocess
from edgepipe.quantize.report import StepOutcome
from edgepipe.quantize.steps.common import try_float_rewrite


def _equalize(context: LadderContext, outcome: StepOutcome) -> Equalization | None:
    """The prepared float ONNX equalized, or None with the reason in ``outcome.note``."""
    if aimet_missing():
        outcome.note = f"AIMET-ONNX is not installed: {INSTALL} adds cross-layer equalization"
        return None
    folder = context.folder("equalize")
    source = context.floats["onnx"]
    prepared = preprocess(source, context.work / f"{source.stem}_prep.onnx")
    try:
        with contained(AIMET_ONNX):
            equalized = equalize_onnx(prepared, folder / "model_equalized.onnx")
    except ToolFailed as failure:
        outcome.note = f"{failure.tool} failed: {failure.message} ({failure.next_step})"
        return None
    if not equalized.rescaled:
        outcome.note = (f"{equalized.summary}: no pair of weight layers it can equalize (it scales across ReLU "
                        "between convolutions and fully connected layers)")
        return None
    return equalized


def equalize_step(context: LadderContext) -> StepResult:
    """(c) CLE of the float ONNX, quantized with step (b)'s setting; kept only when it ranks above that setting."""
    outcome = StepOutcome(step="equalize", title="cross-layer equalization (AIMET-ONNX)", status="skipped")
    if "onnx" not in context.formats:
        outcome.note = "equalization rewrites the float ONNX; this build has none"
        return StepResult(outcome)
    equalized = _equalize(context, outcome)
    if equalized is None:
        return StepResult(outcome)
    return try_float_rewrite(context, outcome, equalized.path, "equalized", equalized.summary)
