"""QAT of an ONNX model by distillation: fine-tune its weights under fake quantization, write them back.

The route (the brief's "weights back into the user's graph"):

1. onnx2torch turns the float ONNX into a ``torch.fx`` module (:mod:`.onnx_to_torch`), checked
   against ONNX Runtime on real samples;
2. fake quantization is inserted the way ORT's QDQ PTQ will quantize (:mod:`.fake_quant_fx`) and
   activation ranges are calibrated on the calibration inputs;
3. the weights are fine-tuned with Adam to match the **original float ONNX model's** outputs
   (run by ONNX Runtime) on the calibration inputs — no labels: the loss is the sum over outputs of
   the squared error divided by the output's energy (``1 / SQNR``, so outputs of every scale count);
4. the tuned weights are written back into a copy of the user's ONNX graph and that copy is
   quantized by the same ORT PTQ as every other step (same recipe, same calibration).

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

import numpy as np

from edgepipe.data import Dataset
from edgepipe.metrics.compare import run_outputs
from edgepipe.quantize.fake_quant_fx import calibrate_ranges, insert_fake_quant, trained_values
from edgepipe.quantize.onnx_to_torch import convert_onnx, require_torch, run_module, write_back
from edgepipe.quantize.recipe import QuantRecipe

log = logging.getLogger(__name__)

#: Intra-op threads while training. Batch-1 steps of small edge models are too short for torch's thread
#: pool to pay off, and on a busy host its spinning threads collapse: one step of a 48x320 text recognizer
#: took 0.65 s with one thread and 13.9 s with two on the 2-core build machine while other jobs ran.
TRAIN_THREADS = 1


@dataclass(frozen=True)
class OnnxQatRequest:
    """One distillation run: the float ONNX, its calibration inputs and how to fine-tune.

    ``samples``: calibration samples trained on (the first ones); ``steps``: Adam steps of one sample
    each; ``learning_rate``: Adam's.
    """

    float_onnx: Path
    calibration: Dataset
    recipe: QuantRecipe
    samples: int = 32
    steps: int = 96
    learning_rate: float = 1e-4
    seed: int = 0


@dataclass
class OnnxQatResult:
    """The tuned float ONNX (weights written back), how many tensors were trained and the loss trace."""

    tuned_onnx: Path
    tensors: int
    samples: int
    steps: int
    first_loss: float
    last_loss: float
    losses: list[float] = field(default_factory=list)


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


def fine_tune(module: object, request: OnnxQatRequest, data: Dataset, names: list[str]) -> list[float]:
    """Adam on the layers' weights, one calibration sample per step; the loss of each step."""
    import torch  # heavy optional dependency

    assert isinstance(module, torch.nn.Module)
    reference = run_outputs(request.float_onnx, data).arrays  # the ORIGINAL float model, run by ORT
    samples = list(data.samples())
    targets = [[torch.from_numpy(np.ascontiguousarray(r[i:i + 1])) for r in reference] for i in range(len(samples))]
    wanted = set(names)
    parameters = [p for n, p in module.named_parameters() if n.replace(".parametrizations.", ".")
                  .replace(".original", "") in wanted]
    optimizer = torch.optim.Adam(parameters, lr=request.learning_rate)
    generator = torch.Generator().manual_seed(request.seed)
    order: list[int] = []
    losses = []
    module.train(False)  # BatchNormalization keeps the model's statistics: only weights are tuned
    for _ in range(request.steps):
        if not order:
            order = torch.randperm(len(samples), generator=generator).tolist()
        index = order.pop()
        optimizer.zero_grad()
        loss = _loss(run_module(module, tuple(samples[index])), targets[index])
        assert isinstance(loss, torch.Tensor)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
        if len(losses) % 16 == 0:
            log.info("ONNX QAT step %d/%d: loss %.4g", len(losses), request.steps, float(np.mean(losses[-16:])))
    return losses


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
    trainable = convert_onnx(request.float_onnx, data)
    names = sorted(trainable.sources)
    quantizers = insert_fake_quant(trainable.module, request.recipe.per_channel)
    calibrate_ranges(trainable.module, quantizers, list(data.samples()))
    losses = fine_tune(trainable.module, request, data, names)
    window = max(1, min(len(losses) // 4, len(data)))
    first, last = float(np.mean(losses[:window])), float(np.mean(losses[-window:]))
    log.info("ONNX QAT: %d steps, loss %.4g -> %.4g", request.steps, first, last)
    tuned = write_back(trainable, trained_values(trainable.module, names), folder / "model_qat_float.onnx")
    return OnnxQatResult(tuned_onnx=tuned, tensors=len(names), samples=len(data), steps=request.steps,
                         first_loss=round(first, 6), last_loss=round(last, 6), losses=losses)
