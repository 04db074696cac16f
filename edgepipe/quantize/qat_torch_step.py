"""Ladder step (d) for non-Keras inputs: PyTorch's pt2e QAT (:mod:`edgepipe.quantize.qat_torch`).

- PyTorch input (``.pt2`` or a factory): fine-tune the program itself, with the labelled
  training split (task loss) or, without one, by distillation from the float program on the
  calibration inputs. The artifact is QDQ ONNX; it is gated like every other step.
- ONNX and TFLite inputs: fine-tuning needs a trainable form of the graph. The maintained
  ONNX-to-PyTorch converters on PyPI (onnx2torch 1.5.15, onnx2pytorch 0.6.0) import
  torchvision at import time, and PyPI's torchvision wheels do not import next to the CPU
  torch wheel ("operator torchvision::nms does not exist"); onnx2tf's Keras output holds the
  weights as constants. The step says so in the trail instead of training.
"""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.quantize.ladder_context import LadderContext, StepResult
from edgepipe.quantize.report import StepOutcome

NO_CONVERTER = ("QAT of an {fmt} model needs a trainable PyTorch form: onnx2torch 1.5.15 and onnx2pytorch 0.6.0 "
                "import torchvision, whose PyPI wheels do not load next to the CPU torch wheel, and onnx2tf's Keras "
                "output stores weights as constants. Next: export the model from its training code as a .pt2 (or "
                "python: factory) and build that")


def torch_qat_step(context: LadderContext) -> StepResult:
    """(d) QAT with PyTorch's pt2e flow: labels when there is a training split, else distillation."""
    from edgepipe.quantize.qat_torch import TorchQatRequest, run_torch_qat

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
