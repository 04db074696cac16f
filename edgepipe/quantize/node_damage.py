"""Which ONNX nodes to keep float: the damage each int8 node does when it alone reads int8.

Per weight layer sensitivity misses where real exports lose their accuracy: in the int8
tensors between activation-only ops (a VAD's STFT magnitude ``Pow -> Add -> Sqrt``,
PaddlePaddle's HardSwish pieces, a detector's ``Concat`` of heads), which no layer owns.
Every node of the fully quantized model that reads a DequantizeLinear is scored once with
*only it* reading int8 (its rounded inputs and int8 weights) and every other node float
(:mod:`.qdq_float_nodes`), on a few samples of the decision split; the ranking is the worst
output's cosine (then SQNR), lowest first. Measured alone rather than by the gain of making
one node float in the int8 model: errors that chain through several nodes (a spectrum
quantized at the Slice, again at the Add) hide each other there, and each shows alone.
One try is one graph edit, a session and a few inferences. Their number is set by a cost model of
the model (:func:`try_cost`, its nodes and multiply-accumulates), not by a clock: a ranking, and
so a verdict, must not depend on how busy the machine was (a loaded machine once ranked 32 of
a sentence encoder's nodes where a quiet one ranked all of them, and the build failed).
"""

from __future__ import annotations

import logging
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from edgepipe.data.dataset import Dataset
from edgepipe.graph.onnx_reader import read_onnx
from edgepipe.metrics.compare import ModelOutputs, run_outputs
from edgepipe.metrics.similarity import SQNR_CAP_DB
from edgepipe.quantize.alone_int8 import outputs_alone
from edgepipe.quantize.ladder_context import DECISION_THREADS, LadderContext
from edgepipe.quantize.onnx_qdq import mixed_base, preprocess
from edgepipe.quantize.qdq_float_nodes import quantized_nodes
from edgepipe.quantize.quantized_once import data_key
from edgepipe.quantize.recipe import QuantRecipe

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)

#: Decision-split samples each try is scored on: enough to order the nodes, few enough for hundreds of tries.
RANKING_SAMPLES = 8
#: Above this many int8 nodes the tries would take too long (~0.5 s each); the ranking is then not measured.
MAX_RANKED_NODES = 2000
#: Modelled seconds the ranking may take (:func:`try_cost`): fewer samples per try on a slow model, then only
#: the first nodes in graph order. A 800x608 layout detector's exact-int8 tries take seconds each.
RANKING_BUDGET_S = 240.0
#: The cost model of one try, fitted by benchmarks/node_damage_cost.py on zoo models (2-core x86-64 host):
#: per try, seconds per node of the graph (edit, save, session) and per byte of the float model (weights
#: saved and loaded); per sample, seconds per node (kernel calls) and per multiply-accumulate.
SECONDS_PER_NODE = 1.4e-4
SECONDS_PER_BYTE = 1.6e-8
SECONDS_PER_NODE_SAMPLE = 8.6e-6
SECONDS_PER_MAC = 6.0e-11


def try_cost(nodes: int, size_bytes: int, macs: int, samples: int) -> float:
    """Modelled seconds of one try: a graph of ``nodes`` nodes and ``size_bytes`` edited, saved and loaded,
    then run on ``samples`` samples of ``macs`` multiply-accumulates each."""
    return (SECONDS_PER_NODE * nodes + SECONDS_PER_BYTE * size_bytes
            + samples * (SECONDS_PER_NODE_SAMPLE * nodes + SECONDS_PER_MAC * macs))


def ranking_plan(candidates: int, nodes: int, size_bytes: int, macs: int, samples: int) -> tuple[int, int]:
    """(samples per try, nodes ranked) that fit :data:`RANKING_BUDGET_S`: fewer samples first, then fewer nodes."""
    while samples > 1 and try_cost(nodes, size_bytes, macs, samples) * candidates > RANKING_BUDGET_S:
        samples -= 1
    return samples, max(1, min(candidates, int(RANKING_BUDGET_S / try_cost(nodes, size_bytes, macs, samples))))


@dataclass(frozen=True)
class NodeDamage:
    """The model's worst output (cosine, SQNR in dB) when only ``node`` reads int8 and every other node float."""

    node: str
    op: str
    cosine: float
    sqnr_db: float

    @property
    def hurts(self) -> bool:
        return self.cosine < 1 - 1e-6 or self.sqnr_db < SQNR_CAP_DB


def _first(dataset: Dataset, count: int) -> Dataset:
    if len(dataset) <= count:
        return dataset
    labels = None if dataset.labels is None else dataset.labels[:count]
    return Dataset(dataset.path, tuple(a[:count] for a in dataset.inputs), labels, dataset.sha256, dataset.whole)


def measure_node_damage(context: LadderContext, recipe: QuantRecipe) -> list[NodeDamage]:
    """Every int8 node of ``recipe``'s fully quantized ONNX model, most damaging first (empty when too many);
    measured once per build for one quantized model, float model and decision split."""
    float_path = context.floats["onnx"]
    base_path = mixed_base(float_path, context.calibration, recipe, context.work, memo=context.memo)
    key = ("node damage", context.memo.digest(base_path), context.memo.digest(float_path),
           data_key(context.decision_split))
    return context.memo.recall(key, lambda: _measured(context, float_path, base_path))


def _measured(context: LadderContext, float_path: Path, base_path: Path) -> list[NodeDamage]:
    import onnx
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, NotImplemented

    base = onnx.load(str(base_path))
    prepared = onnx.load(str(preprocess(float_path, context.work / f"{float_path.stem}_prep.onnx")))
    candidates = quantized_nodes(base)
    if not candidates:
        return []
    if len(candidates) > MAX_RANKED_NODES:
        log.info("node damage not measured: %d int8 nodes (at most %d)", len(candidates), MAX_RANKED_NODES)
        return []
    ops = {node.name: node.op_type for node in base.graph.node}
    subset = _first(context.decision_split, RANKING_SAMPLES)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="edgepipe-damage-", dir=context.work) as scratch:
        path = Path(scratch) / "alone.onnx"

        def alone(node: str, data: Dataset, reference: ModelOutputs) -> NodeDamage:
            try:
                score = context.label_free(reference, outputs_alone(node, base, prepared, candidates, path, data))
            except (Fail, InvalidArgument, InvalidGraph, NotImplemented) as exc:  # ORT's optimiser, not the graph
                log.info("node damage of %s not measured: ONNX Runtime cannot run the try (%s)", node,
                         str(exc).strip().splitlines()[0][-160:] if str(exc).strip() else type(exc).__name__)
                return NodeDamage(node, ops.get(node, "?"), 1.0, SQNR_CAP_DB)  # unmeasured: ranks last
            return NodeDamage(node, ops.get(node, "?"), round(score.cosine, 6), round(score.sqnr_db, 3))

        cost = (len(base.graph.node), float_path.stat().st_size, sum(n.macs for n in read_onnx(float_path).nodes))
        count, ranked = ranking_plan(len(candidates), *cost, len(subset))
        subset = _first(subset, count)
        if ranked < len(candidates):
            log.info("node damage: the first %d of %d nodes are ranked (modelled %.1f s a try, budget %.0f s)",
                     ranked, len(candidates), try_cost(*cost, count), RANKING_BUDGET_S)
        reference = run_outputs(float_path, subset, threads=DECISION_THREADS)
        damage = [alone(node, subset, reference) for node in candidates[:ranked]]
    log.info("int8 damage of %d nodes alone measured in %.1f s on %d samples", len(damage), time.monotonic() - start,
             len(subset))
    return sorted(damage, key=lambda d: (d.cosine, d.sqnr_db))
