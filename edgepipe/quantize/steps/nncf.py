"""(d) NNCF: bias correction, and SmoothQuant for transformers, before any layer leaves int8.

The last all-int8 try: NNCF quantizes the float ONNX (:mod:`edgepipe.quantize.nncf_ptq`; the equalized one when
step (c) kept it) with bias correction, and SmoothQuant when the graph has attention. Its model is kept only when it
ranks above the best ONNX Runtime recipe so far on the selection split
(:func:`~edgepipe.quantize.ladder_context.selection_rank`); both figures go into the trail. Later steps (mixed
precision, QAT) still quantize with ONNX Runtime's recipes: NNCF's model is this step's candidate, not their
starting point. ONNX only: the TFLite artifact here is the one step (b) chose.
"""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.containment import NNCF, ORT_QUANTIZER, contained
from edgepipe.errors import ToolFailed
from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.nncf_ptq import INSTALL, is_transformer, nncf_missing, quantize_with_nncf
from edgepipe.quantize.onnx_qdq import preprocess
from edgepipe.quantize.report import StepOutcome
from edgepipe.quantize.steps.common import fidelity_change, kept_onnx, onnx_candidate

TITLE = "bias correction and SmoothQuant (NNCF)"


def _why_not_run(context: LadderContext) -> str | None:
    if "onnx" not in context.formats:
        return "NNCF quantizes the float ONNX; this build has none"
    if "int8" not in context.settings.precisions:
        return "NNCF's model is int8, which no target of this group runs"
    if nncf_missing():
        return f"NNCF is not installed: {INSTALL} adds bias correction and SmoothQuant"
    return None


def nncf_step(context: LadderContext) -> StepResult:
    """(d) NNCF's PTQ of the float ONNX; kept only when it ranks above the best ONNX Runtime recipe so far."""
    outcome = StepOutcome(step="nncf", title=TITLE, status="skipped")
    reason = _why_not_run(context)
    if reason is not None:
        outcome.note = reason
        return StepResult(outcome)
    folder = context.folder("nncf")
    source = context.floats["onnx"]
    prepared = preprocess(source, context.work / f"{source.stem}_prep.onnx")
    recipe = context.best_recipe.get("onnx", context.settings.start)
    try:
        with contained(ORT_QUANTIZER):
            before = context.candidate_fidelity("onnx", context.quantize("onnx", recipe, folder / "before.onnx"))
        with contained(NNCF):
            import onnx

            made = quantize_with_nncf(prepared, folder / "model_int8.onnx", context.calibration,
                                      transformer=is_transformer(onnx.load(str(prepared), load_external_data=False)))
    except ToolFailed as failure:
        outcome.note = f"{failure.tool} failed: {failure.message} ({failure.next_step})"
        return StepResult(outcome)
    after = context.candidate_fidelity("onnx", made.path)
    outcome.candidates = [onnx_candidate(recipe.label, before), onnx_candidate(made.label, after)]
    outcome.recipe = {"onnx": made.label}
    if not context.better("onnx", after, before):
        outcome.status = "missed"
        outcome.note = (f"{made.label} ({made.seconds:.1f} s); not kept: it does not rank above {recipe.label} on "
                        f"the {context.describe_decisions()} ({fidelity_change(before, after)})")
        return StepResult(outcome)
    return kept_onnx(context, "nncf", outcome, Artifact(made.path, "onnx", "int8"),
                     f"{made.label} ({made.seconds:.1f} s); kept on the {context.describe_decisions()} "
                     f"({fidelity_change(before, after)})")
