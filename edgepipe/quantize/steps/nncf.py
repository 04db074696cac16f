"""(d) NNCF: bias correction, and SmoothQuant for transformers, before any layer leaves int8.

The last all-int8 try: NNCF rewrites the float ONNX for quantization (:mod:`edgepipe.quantize.nncf_ptq`; the
equalized one when step (c) kept it): biases corrected for the error int8 weights leave, and SmoothQuant scales
when the graph has attention. The rewrite is quantized with the setting the ladder has chosen so far and kept only
when it ranks above that setting on the selection split (:func:`~edgepipe.quantize.ladder_context.selection_rank`);
both figures go into the trail. Kept, it is what the later steps quantize too, while every fidelity stays measured
against the original float model. ONNX only: the TFLite artifact here is the one step (b) chose.
"""

from __future__ import annotations

from edgepipe.containment import NNCF, contained
from edgepipe.errors import ToolFailed
from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.nncf_ptq import INSTALL, NncfRewrite, is_transformer, nncf_missing, nncf_rewrite
from edgepipe.quantize.onnx_qdq import preprocess
from edgepipe.quantize.quantized_once import data_key
from edgepipe.quantize.report import StepOutcome
from edgepipe.quantize.steps.common import try_float_rewrite

TITLE = "bias correction and SmoothQuant (NNCF)"


def _why_not_run(context: LadderContext) -> str | None:
    if "onnx" not in context.formats:
        return "NNCF rewrites the float ONNX; this build has none"
    if nncf_missing():
        return f"NNCF is not installed: {INSTALL} adds bias correction and SmoothQuant"
    return None


def _rewrite(context: LadderContext, outcome: StepOutcome) -> NncfRewrite | None:
    """NNCF's rewrite of the prepared float ONNX, or None with the reason in ``outcome.note``."""
    import onnx

    source = context.floats["onnx"]
    prepared = preprocess(source, context.work / f"{source.stem}_prep.onnx")
    out = context.folder("nncf") / "model_corrected.onnx"
    try:
        with contained(NNCF):
            transformer = is_transformer(onnx.load(str(prepared), load_external_data=False))
            key = ("NNCF rewrite", context.memo.digest(prepared), transformer, data_key(context.calibration))
            made = context.memo.recall(key, lambda: nncf_rewrite(prepared, out, context.calibration, transformer))
    except ToolFailed as failure:
        outcome.note = f"{failure.tool} failed: {failure.message} ({failure.next_step})"
        return None
    if not made.changed:
        outcome.note = f"{made.label}: NNCF changed no weight of this model"
        return None
    return made


def nncf_step(context: LadderContext) -> StepResult:
    """(d) NNCF's corrections of the float ONNX, quantized with the setting chosen so far; kept only when that ranks
    above the same setting on the float model."""
    outcome = StepOutcome(step="nncf", title=TITLE, status="skipped")
    outcome.note = _why_not_run(context) or ""
    made = None if outcome.note else _rewrite(context, outcome)
    if made is None:
        return StepResult(outcome)
    return try_float_rewrite(context, outcome, made.path, "NNCF-corrected", f"{made.label} ({made.seconds:.1f} s)")
