"""QAT of an ONNX model by distillation: fine-tune its weights under fake quantization, write them back.

The route (the brief's "weights back into the user's graph"):

1. onnx2torch turns the graph ORT's PTQ quantizes (the user's float ONNX after pre-processing:
   fused HardSwish, scales folded into Convs, :mod:`.onnx_prepare`) into a ``torch.fx`` module
   (:mod:`.onnx_to_torch`), checked against ONNX Runtime on real samples;
2. fake quantization is inserted where ORT's QDQ PTQ quantizes, as ORT's int8 model under the
   recipe does it (:mod:`.qdq_params`, :mod:`.fake_quant_fx`): activations at the scale and zero
   point of each QuantizeLinear, biases in int32, weights at ORT's raised scales where it raised
   them, untrained constants at their dequantized values. Trained on anything else, the weights
   learn to undo rounding the int8 model does not have (benchmarks/qat_zoo.py's "simulation error"
   column compares the two simulations);
3. the weights are fine-tuned with Adam to match the **original float ONNX model's** outputs
   (run by ONNX Runtime) on the calibration inputs — no labels: the loss is the sum over outputs of
   the squared error divided by the output's energy (``1 / SQNR``, so outputs of every scale count).
   A quarter of the samples is held out: the weights kept are those of the check (every
   :data:`CHECK_EVERY` steps, and before the first step) with the lowest held-out loss, so a few
   dozen samples cannot be over-fitted into an int8 model worse than PTQ's. A check that does not
   improve on the best one restores the best weights and divides the learning rate by
   :data:`BACKOFF`: the configured rate (``quantization.qat_learning_rate``, right for Keras QAT
   with labels) can move every weight of a folded, depthwise graph too far (the held-out losses
   and the step kept are in each trail; benchmarks/qat_zoo.py logs them in benchmarks/results/);
4. the tuned weights are written back into a copy of that graph, which is quantized by the same
   ORT PTQ as every other step (same recipe) at the activation ranges it was trained at.

Why not pt2e here: ``torch.export`` of onnx2torch modules stops at ops that read constant tensors
as Python values (onnx2torch's Resize reads its scales with ``.tolist()``, a data-dependent guard
under export), and the write-back keeps the graph the user gave, which the target checks then see
unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.compare import run_outputs
from edgepipe.quantize.fake_quant_fx import calibrate_ranges, insert_fake_quant, trained_values
from edgepipe.quantize.onnx_to_torch import convert_onnx, require_torch, run_module, write_back
from edgepipe.quantize.qdq_params import QdqModel
from edgepipe.quantize.recipe import QuantRecipe

log = logging.getLogger(__name__)

#: Intra-op threads while training. Batch-1 steps of small edge models are too short for torch's thread
#: pool to pay off, and on a busy host its spinning threads collapse: one step of a 48x320 text recognizer
#: took 0.65 s with one thread and 13.9 s with two on the 2-core build machine while other jobs ran.
TRAIN_THREADS = 1
#: Steps between two held-out checks.
CHECK_EVERY = 16
#: Learning-rate divisor after a check that does not improve the held-out loss.
BACKOFF = 3.0
#: Share of the training samples held out for the checks (none below :data:`MIN_SAMPLES_TO_HOLD_OUT`).
HOLD_OUT = 0.25
MIN_SAMPLES_TO_HOLD_OUT = 4


@dataclass(frozen=True)
class OnnxQatRequest:
    """One distillation run: the float ONNX, its calibration inputs and how to fine-tune.

    ``float_onnx``: the model whose outputs are matched (the user's); ``graph``: the float graph that is
    trained and written back (the one ORT quantizes; default ``float_onnx``) and ``reference`` how ORT's
    int8 model quantizes it (default: min/max on the samples, every activation quantized).
    ``samples``: calibration samples used (the first ones, a quarter of them held out);
    ``steps``: Adam steps of one sample each; ``learning_rate``: Adam's.
    """

    float_onnx: Path
    calibration: Dataset
    recipe: QuantRecipe
    samples: int = 32
    steps: int = 96
    learning_rate: float = 1e-4
    seed: int = 0
    graph: Path | None = None
    reference: QdqModel | None = None


@dataclass
class OnnxQatResult:
    """The tuned float ONNX (weights written back), how many tensors were trained and the loss traces.

    ``kept_step``: the step whose weights were kept (0: none improved the held-out loss);
    ``held_out``: the held-out loss at each check, ``(step, loss)``, step 0 first.
    """

    tuned_onnx: Path
    tensors: int
    samples: int
    steps: int
    first_loss: float
    last_loss: float
    losses: list[float] = field(default_factory=list)
    kept_step: int | None = None
    held_out: list[tuple[int, float]] = field(default_factory=list)
    quantized_tensors: int = 0
    rates: list[tuple[int, float]] = field(default_factory=list)


def subset(data: Dataset, count: int) -> Dataset:
    """The first ``count`` samples of ``data`` (inputs given whole stay whole)."""
    whole = data.whole or (False,) * len(data.inputs)
    inputs = tuple(a if full else a[:count] for a, full in zip(data.inputs, whole))
    return Dataset(data.path, inputs, None, data.sha256, data.whole)


def _loss(predictions: Sequence[object], targets: Sequence[object]) -> object:
    """Sum over outputs of ||p - t||² / ||t||²: the inverse SQNR of each output."""
    import torch  # heavy optional dependency

    total = torch.zeros(())
    for p, t in zip(predictions, targets):
        assert isinstance(p, torch.Tensor) and isinstance(t, torch.Tensor)
        p = p.reshape(t.shape).float()
        total = total + ((p - t) ** 2).sum() / torch.clamp((t ** 2).sum(), min=1e-12)
    return total


@dataclass
class Tuning:
    """What :func:`fine_tune` did: the loss of each step, the held-out checks, the step kept and the
    learning rate of each stretch (``(first step, rate)``)."""

    losses: list[float]
    held_out: list[tuple[int, float]]
    kept_step: int | None
    rates: list[tuple[int, float]] = field(default_factory=list)


def _targets(reference: list[np.ndarray], count: int) -> list[list[object]]:
    import torch  # heavy optional dependency

    return [[torch.from_numpy(np.ascontiguousarray(r[i:i + 1])) for r in reference] for i in range(count)]


def split_held_out(count: int) -> int:
    """How many of ``count`` samples are held out for the checks (the last ones)."""
    return max(1, round(count * HOLD_OUT)) if count >= MIN_SAMPLES_TO_HOLD_OUT else 0


def fine_tune(module: object, request: OnnxQatRequest, data: Dataset, names: list[str]) -> Tuning:
    """Adam on the layers' weights, one training sample per step, keeping the best held-out weights."""
    import torch  # heavy optional dependency

    assert isinstance(module, torch.nn.Module)
    reference = run_outputs(request.float_onnx, data).arrays  # the ORIGINAL float model, run by ORT
    samples = list(data.samples())
    targets = _targets(reference, len(samples))
    held = split_held_out(len(samples))
    train = list(range(len(samples) - held))
    check = list(range(len(samples) - held, len(samples)))
    wanted = set(names)
    parameters = [p for n, p in module.named_parameters() if n.replace(".parametrizations.", ".")
                  .replace(".original", "") in wanted]
    rates = [(1, request.learning_rate)]
    optimizer = torch.optim.Adam(parameters, lr=request.learning_rate)
    generator = torch.Generator().manual_seed(request.seed)

    def held_out_loss() -> float:
        with torch.no_grad():
            return float(np.mean([float(_loss(run_module(module, tuple(samples[i])), targets[i]))  # type: ignore[arg-type]
                                  for i in check]))

    module.train(False)  # BatchNormalization keeps the model's statistics: only weights are tuned
    checks = [(0, held_out_loss())] if check else []
    best = [p.detach().clone() for p in parameters] if check else []
    kept: int | None = 0 if check else None
    order: list[int] = []
    losses = []
    for step in range(1, request.steps + 1):
        if not order:
            order = [train[i] for i in torch.randperm(len(train), generator=generator).tolist()]
        index = order.pop()
        optimizer.zero_grad()
        loss = _loss(run_module(module, tuple(samples[index])), targets[index])
        assert isinstance(loss, torch.Tensor)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if check and (step % CHECK_EVERY == 0 or step == request.steps):
            checks.append((step, held_out_loss()))
            log.info("ONNX QAT step %d/%d: loss %.4g, held-out %.4g (lr %.3g)", step, request.steps,
                     float(np.mean(losses[-CHECK_EVERY:])), checks[-1][1], rates[-1][1])
            if checks[-1][1] < min(c[1] for c in checks[:-1]):
                best, kept = [p.detach().clone() for p in parameters], step
            elif step < request.steps:  # back to the best weights, smaller steps from there
                _restore(parameters, best)
                rates.append((step + 1, rates[-1][1] / BACKOFF))
                optimizer = torch.optim.Adam(parameters, lr=rates[-1][1])
    if check:
        _restore(parameters, best)
    return Tuning(losses, checks, kept, rates)


def _restore(parameters: list[Any], values: list[Any]) -> None:
    import torch  # heavy optional dependency

    with torch.no_grad():
        for parameter, value in zip(parameters, values):
            parameter.copy_(value)


def run_onnx_qat(request: OnnxQatRequest, folder: Path) -> OnnxQatResult:
    """Convert, fake-quantize, distil and write back; the tuned float ONNX is ``folder/model_qat_float.onnx``.

    Raises :class:`~edgepipe.quantize.onnx_to_torch.ConversionFailed` when onnx2torch cannot convert, or
    torch / onnx2torch are not installed.
    """
    require_torch()
    with train_threads():
        return _run(request, folder)


@contextmanager
def train_threads() -> Iterator[None]:
    """torch's intra-op threads at :data:`TRAIN_THREADS` while training, restored after."""
    import torch  # heavy optional dependency

    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _run(request: OnnxQatRequest, folder: Path) -> OnnxQatResult:
    import torch  # heavy optional dependency

    torch.manual_seed(request.seed)
    data = subset(request.calibration, request.samples)
    trainable = convert_onnx(request.graph or request.float_onnx, data)
    names = sorted(trainable.sources)
    quantizers = insert_fake_quant(trainable.module, request.recipe.per_channel, request.reference, trainable.tensors,
                                   trainable.sources, request.recipe.symmetric_activations)
    if request.reference is None:
        calibrate_ranges(trainable.module, quantizers, list(data.samples()))
    tuning = fine_tune(trainable.module, request, data, names)
    losses = tuning.losses
    window = max(1, min(len(losses) // 4, len(data)))
    first, last = float(np.mean(losses[:window])), float(np.mean(losses[-window:]))
    log.info("ONNX QAT: %d steps, loss %.4g -> %.4g; weights of step %s kept", request.steps, first, last,
             tuning.kept_step)
    tuned = write_back(trainable, trained_values(trainable.module, names), folder / "model_qat_float.onnx")
    return OnnxQatResult(tuned_onnx=tuned, tensors=len(names), samples=len(data), steps=request.steps,
                         first_loss=round(first, 6), last_loss=round(last, 6), losses=losses,
                         kept_step=tuning.kept_step, held_out=[(s, round(v, 6)) for s, v in tuning.held_out],
                         quantized_tensors=len(quantizers), rates=tuning.rates)
