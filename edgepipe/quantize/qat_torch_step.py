"""Ladder step (f) for non-Keras inputs: QAT through PyTorch.

- PyTorch input (``.pt2`` or a factory): PyTorch's pt2e QAT of the program itself
  (:mod:`edgepipe.quantize.qat_torch`), with the labelled training split (task loss) or, without
  one, by distillation from the float program on the calibration inputs. The artifact is QDQ ONNX.
- ONNX input, and a TFLite input converted to ONNX (:mod:`edgepipe.export.tflite_to_onnx`):
  onnx2torch's trainable form of the graph ORT's PTQ quantizes, fine-tuned under fake quantization
  at ORT's activation scales by distillation from the original float ONNX on the calibration
  inputs, the weights written back into that graph and quantized by the same ORT PTQ
  (:mod:`edgepipe.quantize.qat_onnx`). When
  onnx2torch cannot convert the graph the step is ``skipped`` and the trail says why.
- A TFLite input without a float ONNX form (tf2onnx could not translate it): the step says why
  it cannot train.
"""

from __future__ import annotations

from dataclasses import replace

from edgepipe.artifacts import Artifact
from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.onnx_qdq import orts_quantization, quantize_onnx
from edgepipe.quantize.onnx_to_torch import ConversionFailed
from edgepipe.quantize.qat_cost import qat_plan
from edgepipe.quantize.qat_onnx import OnnxQatRequest, OnnxQatResult, run_onnx_qat, split_held_out
from edgepipe.quantize.quantized_once import data_key
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import StepOutcome

#: Calibration samples ONNX QAT trains on (the first ones): a few hundred steps on these stay minutes on a CPU.
ONNX_QAT_SAMPLES = 32

NO_CONVERTER = ("QAT of a {fmt} model needs a trainable form, and this build has no float ONNX of it to train "
                "(tf2onnx could not translate the model, or no target deploys ONNX; onnx2tf's Keras output stores "
                "weights as constants). Next: give the model as ONNX (QAT by distillation through onnx2torch), or "
                "export it from its training code as a .pt2 (or python: factory) and build that")


def torch_qat_step(context: LadderContext) -> StepResult:
    """(f) QAT with PyTorch's pt2e flow: labels when there is a training split, else distillation."""
    from edgepipe.quantize.qat_torch import TorchQatRequest, run_torch_qat

    if context.model.format in ("onnx", "tflite") and "onnx" in context.floats:
        return onnx_qat_step(context)
    outcome = StepOutcome(step="qat", title="quantization-aware training (PyTorch pt2e)", status="skipped")
    if context.model.format != "pytorch":
        outcome.note = NO_CONVERTER.format(fmt=context.model.format.upper())
        return StepResult(outcome)
    settings = context.settings
    train = context.train if context.train is not None and context.train.labels is not None else None
    request = TorchQatRequest(program=context.model.handle.program, example_inputs=context.model.handle.example_inputs,
                              calibration=context.calibration, train=train,
                              per_channel="per-channel" in settings.granularities, epochs=settings.qat_epochs,
                              learning_rate=settings.qat_learning_rate)
    result = run_torch_qat(request, context.folder("qat") / "model_int8.onnx")
    granularity = "per-channel" if request.per_channel else "per-tensor"
    outcome.status, outcome.recipe = "missed", {"onnx": f"qat-pt2e/{granularity}/int8"}
    source = ("labelled training split (cross-entropy)" if result.loss == "labels"
              else "calibration inputs, distilled from the float model's outputs (MSE)")
    outcome.note = (f"{settings.qat_epochs} epochs on {result.samples} samples of the {source}, Adam lr "
                    f"{settings.qat_learning_rate:g}; loss per epoch {result.epoch_losses}")
    return StepResult(outcome, {"onnx": Artifact(result.onnx, "onnx", "int8")})


def _qat_recipe(context: LadderContext) -> QuantRecipe:
    """The best all-int8 recipe the earlier steps found (their layers kept higher dropped: QAT is for int8)."""
    best = context.best_recipe.get("onnx", context.settings.start)
    return replace(best, keep_float=(), keep_a16w8=(), activation_bits=8)


def onnx_qat_step(context: LadderContext) -> StepResult:
    """(f) for an ONNX input: distillation QAT through onnx2torch, weights written back, then ORT PTQ."""
    outcome = StepOutcome(step="qat", title="quantization-aware training (onnx2torch, distillation)",
                          status="skipped")
    if not context.calibration:
        outcome.note = ("QAT of an ONNX model distils from the float model on calibration data, and this build has "
                        "none: give it calibration data (data.calibration or --calib)")
        return StepResult(outcome)
    settings, folder = context.settings, context.folder("qat")
    recipe = _qat_recipe(context)
    samples = min(ONNX_QAT_SAMPLES, len(context.calibration))
    graph = read_onnx(context.floats["onnx"]).nodes
    plan = qat_plan(settings.qat_epochs * samples, samples, len(graph), sum(n.macs for n in graph),
                    settings.qat_budget_s)
    if plan.skipped:
        outcome.note = f"not trained: {plan.explain()}"
        return StepResult(outcome)
    graph_path, reference = orts_quantization(context.floats["onnx"], context.calibration, recipe, context.work,
                                              memo=context.memo)
    request = OnnxQatRequest(float_onnx=context.floats["onnx"], calibration=context.calibration, recipe=recipe,
                             samples=samples, steps=plan.steps, learning_rate=settings.qat_learning_rate,
                             graph=graph_path, reference=reference)
    memo = context.memo
    key = ("ONNX QAT", memo.digest(request.float_onnx), memo.digest(graph_path), recipe, data_key(context.calibration),
           samples, plan.steps, settings.qat_learning_rate, request.seed)
    try:  # one training per build: another group that reaches QAT with the same graph and recipe reuses it
        result = memo.recall(key, lambda: run_onnx_qat(request, folder))
    except ConversionFailed as failure:
        outcome.note = (f"no trainable form of the ONNX graph: {failure}. Next: install the torch extra if it is "
                        "missing, else export the model from its training code as a .pt2 (or python: factory) and "
                        "build that")
        return StepResult(outcome)
    path = quantize_onnx(result.tuned_onnx, folder / "model_int8.onnx", context.calibration, recipe, context.work,
                         ranges_of=context.floats["onnx"], memo=context.memo)  # the ranges it was trained at
    outcome.status, outcome.recipe = "missed", {"onnx": f"qat-distilled/{recipe.label}"}
    outcome.note = (f"onnx2torch form of the graph ORT quantizes, {result.tensors} weight tensors fine-tuned under "
                    f"fake quantization ({result.quantized_tensors} activations at the scales of ORT's {recipe.method} "
                    "int8 model) "
                    f"for {result.steps} Adam steps (lr {settings.qat_learning_rate:g}), distilled from the original "
                    f"float ONNX's outputs (1/SQNR loss {result.first_loss:.4g} -> {result.last_loss:.4g}); "
                    f"{_kept(result)}; weights written back, then ORT PTQ {recipe.label}"
                    + (f" ({plan.explain()})" if plan.shortened else "")
                    + ("" if context.selection is not None else "; judged on calibration samples it trained on (give "
                       "data.selection for a choice made on unseen samples; the gate reads the evaluation split)"))
    return StepResult(outcome, {"onnx": Artifact(path, "onnx", "int8")})


def _kept(result: OnnxQatResult) -> str:
    """Which weights were kept and on what evidence, for the trail."""
    if result.kept_step is None:
        return f"trained on all {result.samples} calibration samples (too few to hold any out)"
    held = split_held_out(result.samples)
    start = result.held_out[0][1]
    best = min(loss for _, loss in result.held_out)
    if result.kept_step == 0:
        return (f"no step lowered the loss on the {held} held-out calibration samples ({start:.4g}): the "
                "float weights are kept, so this is PTQ of the prepared graph")
    return (f"kept the weights of step {result.kept_step}, lowest loss on the {held} held-out calibration samples "
            f"({start:.4g} -> {best:.4g}; trained on the other {result.samples - held})")
