"""Quantization-aware training of a PyTorch program with PyTorch's own pt2e flow, exported as QDQ ONNX.

The pt2e flow lives in ``torchao.quantization.pt2e`` since torch 2.10 (``torch.ao.quantization``'s
``quantize_pt2e`` is gone in 2.13): ``prepare_qat_pt2e`` inserts fake quantizers where the
quantizer annotates the graph, the model is fine-tuned, ``convert_pt2e`` folds them into
quantize/dequantize ops, and ``torch.onnx.export`` (dynamo) writes QuantizeLinear/
DequantizeLinear pairs with int8 weights. The quantizer is torchao's XNNPACK quantizer:
symmetric int8 weights (per output channel when the target runs them, else per tensor) and
asymmetric int8 activations, what every edgepipe target profile runs.

Activation ranges are not learned: before fine-tuning, the float model runs over the calibration
split and each activation quantizer takes that split's min/max (the ranges PTQ's minmax computes),
then stays frozen (:func:`calibrate_activations`); weight quantizers follow the weights. torchao's
QAT default, a moving average of each batch's min/max, averages per-image ranges here (the batch-1
program trains one sample at a time), which are narrower than the data's and saturate the largest
activations.

Fine-tuning has two losses: with a labelled training split, cross-entropy on the labels (the
task loss); without one, distillation: the mean squared error to the float program's own
outputs on the calibration inputs. The exported program has batch size 1 (static shapes), so a
mini-batch is accumulated sample by sample before each Adam step.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.export.torch_to_onnx import export_program_to_onnx

log = logging.getLogger(__name__)

QatLoss = Literal["labels", "distillation"]
#: Smallest activation scale (torchao's XNNPACK config uses the same).
ACTIVATION_EPS = 2**-12


@dataclass(frozen=True)
class TorchQatRequest:
    """One QAT run: the float program (``torch.export.ExportedProgram``), its data and how to train.

    ``train``: labelled split for the task loss, or ``None`` to distil from the float model on
    ``calibration``. ``learning_rate``: Adam's; ``batch_size``: samples per optimizer step.
    """

    program: Any
    example_inputs: tuple[Any, ...]
    calibration: Dataset
    train: Dataset | None
    per_channel: bool = True
    epochs: int = 3
    learning_rate: float = 1e-4
    batch_size: int = 32
    seed: int = 0


@dataclass
class TorchQatResult:
    """What QAT produced: the QDQ ONNX file, the loss it trained on and the mean loss per epoch."""

    onnx: Path
    loss: QatLoss
    samples: int
    epoch_losses: list[float] = field(default_factory=list)


def qat_quantizer(per_channel: bool) -> Any:
    """torchao's XNNPACK QAT quantizer; activations take a running min/max (see :func:`calibrate_activations`)."""
    # torchao logs a warning per CUDA kernel library it cannot load on a CPU-only host: not actionable here
    logging.getLogger("torchao").setLevel(logging.ERROR)
    # heavy optional dependency; torchao keeps the XNNPACK quantizer under its testing package
    from torchao.quantization.pt2e import FakeQuantize, MinMaxObserver
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    with warnings.catch_warnings():  # "XNNPACKQuantizer is deprecated!": ExecuTorch's copy is the maintained one
        warnings.simplefilter("ignore")
        quantizer = XNNPACKQuantizer()
    config = get_symmetric_quantization_config(is_per_channel=per_channel, is_qat=True)
    assert config.input_activation is not None
    activation = replace(config.input_activation, observer_or_fake_quant_ctr=FakeQuantize.with_args(
        observer=MinMaxObserver, eps=ACTIVATION_EPS))
    return quantizer.set_global(replace(config, input_activation=activation, output_activation=activation))


def is_activation_quantizer(module: Any) -> bool:
    """An activation fake quantizer (per-tensor affine); weight ones are symmetric."""
    import torch  # heavy optional dependency
    from torchao.quantization.pt2e import FakeQuantizeBase  # heavy optional dependency

    return isinstance(module, FakeQuantizeBase) and getattr(module, "qscheme", None) == torch.per_tensor_affine


def calibrate_activations(prepared: Any, calibration: Dataset) -> int:
    """Set every activation range to the min/max of the float model over ``calibration``, then freeze it.

    The same ranges as PTQ's minmax calibration (ONNX Runtime runs the float model on the same split):
    fake quantization is off during the pass and each observer only records min/max; the scale and
    zero point are computed once at the end. Returns how many activation quantizers were set.
    """
    import torch  # heavy optional dependency
    from torchao.quantization.pt2e import move_exported_model_to_eval  # heavy optional dependency

    activations = [m for m in prepared.modules() if is_activation_quantizer(m)]
    for module in activations:
        module.disable_fake_quant()
        module.disable_observer()
    hooks = [m.register_forward_pre_hook(lambda m, args: m.activation_post_process(args[0].detach()))
             for m in activations]
    move_exported_model_to_eval(prepared)  # batch norms keep their running statistics
    with torch.no_grad():
        for sample in calibration.samples():
            prepared(*[torch.from_numpy(np.ascontiguousarray(a)) for a in sample])
    for hook in hooks:
        hook.remove()
    for module in activations:
        scale, zero_point = module.calculate_qparams()
        module.scale.resize_(scale.shape).copy_(scale)
        module.zero_point.resize_(zero_point.shape).copy_(zero_point)
        module.enable_fake_quant()
    return len(activations)


def _targets(request: TorchQatRequest) -> tuple[Dataset, QatLoss, list[Any]]:
    """The data QAT trains on, which loss, and per sample its target (a label, or the float outputs)."""
    import torch  # heavy optional dependency

    if request.train is not None and request.train.labels is not None:
        labels = [torch.tensor([int(y)]) for y in request.train.labels]
        return request.train, "labels", labels
    float_module = request.program.module()
    with torch.no_grad():
        outputs = [float_module(*[torch.from_numpy(np.ascontiguousarray(a)) for a in sample])
                   for sample in request.calibration.samples()]
    return request.calibration, "distillation", outputs


def _loss(prediction: Any, target: Any, kind: QatLoss) -> Any:
    import torch  # heavy optional dependency

    if kind == "labels":
        return torch.nn.functional.cross_entropy(prediction.reshape(1, -1), target)
    predictions = prediction if isinstance(prediction, (tuple, list)) else (prediction,)
    targets = target if isinstance(target, (tuple, list)) else (target,)
    return sum(torch.nn.functional.mse_loss(p, t) for p, t in zip(predictions, targets))


def _fine_tune(prepared: Any, request: TorchQatRequest, data: Dataset, kind: QatLoss,
               targets: list[Any]) -> list[float]:
    """Adam over ``data`` for ``request.epochs``, one optimizer step per ``batch_size`` samples; mean loss per epoch."""
    import torch  # heavy optional dependency
    from torchao.quantization.pt2e import move_exported_model_to_train  # heavy optional dependency

    move_exported_model_to_train(prepared)
    optimizer = torch.optim.Adam(prepared.parameters(), lr=request.learning_rate)
    generator = torch.Generator().manual_seed(request.seed)
    samples = list(data.samples())
    history = []
    for _ in range(request.epochs):
        total = 0.0
        order = torch.randperm(len(samples), generator=generator).tolist()
        for start in range(0, len(order), request.batch_size):
            batch = order[start:start + request.batch_size]
            optimizer.zero_grad()
            for index in batch:
                inputs = [torch.from_numpy(np.ascontiguousarray(a)) for a in samples[index]]
                loss = _loss(prepared(*inputs), targets[index], kind) / len(batch)
                loss.backward()
                total += loss.item() * len(batch)
            optimizer.step()
        history.append(round(total / len(samples), 6))
    return history


def run_torch_qat(request: TorchQatRequest, out: Path) -> TorchQatResult:
    """Prepare (fake quant), fine-tune, convert and export ``request.program`` to the QDQ ONNX file ``out``."""
    logging.getLogger("torchao").setLevel(logging.ERROR)  # see qat_quantizer
    import torch  # heavy optional dependency
    from torchao.quantization.pt2e import move_exported_model_to_eval  # heavy optional dependency
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_qat_pt2e  # heavy optional dependency

    torch.manual_seed(request.seed)
    data, kind, targets = _targets(request)
    quantizer = qat_quantizer(request.per_channel)
    prepared = prepare_qat_pt2e(request.program.module(), quantizer)
    calibrated = calibrate_activations(prepared, request.calibration)
    history = _fine_tune(prepared, request, data, kind, targets)
    log.info("QAT (%s): %d activation ranges from %d calibration samples, %d epochs on %d samples, loss %s",
             kind, calibrated, len(request.calibration), request.epochs, len(data), history)
    move_exported_model_to_eval(prepared)
    converted = convert_pt2e(prepared)
    program = torch.export.export(converted, request.example_inputs)
    export_program_to_onnx(program, out)
    return TorchQatResult(onnx=out, loss=kind, samples=len(data), epoch_losses=history)
