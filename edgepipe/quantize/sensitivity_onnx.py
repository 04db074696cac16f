"""Per-layer sensitivity of a QDQ ONNX model, with ``onnxruntime.quantization.qdq_loss_debug``.

Accumulated: every quantized activation of the full QDQ model against the same
tensor of the float model (``modify_model_output_intermediate_tensors``,
``collect_activations``, ``create_activation_matching``). Isolated: the model's
output when only one layer reads int8 (its rounded inputs and int8 weights) and every other node computes in
float, against the float output (:func:`~edgepipe.quantize.alone_int8.outputs_alone`, the same measurement as
the node-damage ranking): one graph edit of one fully quantized model per layer, no quantizer run per layer.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.compare import run_outputs
from edgepipe.metrics.similarity import cosine, sqnr_db
from edgepipe.quantize.alone_int8 import outputs_alone
from edgepipe.quantize.ladder_context import DECISION_THREADS
from edgepipe.quantize.onnx_qdq import calibration_reader, graph_inputs, mixed_base, preprocess
from edgepipe.quantize.qdq_float_nodes import quantized_nodes
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import LayerSensitivity

log = logging.getLogger(__name__)

#: Elementwise ops a layer's output passes through before it is quantized (fused by the quantizer).
_FOLLOWERS = ("Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "Add")
_WEIGHT_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
#: Above this many weight layers only the accumulated figures are measured (the mixed-precision ranking then
#: orders layers by the noise each adds).
ISOLATED_MAX_LAYERS = 24
#: Bytes of intermediate activations the accumulated comparison may hold in memory (both models, all samples).
ACTIVATION_BUDGET_BYTES = 1 << 30


def activation_samples(augmented: Path, dataset: Dataset, limit: int) -> int:
    """Samples the accumulated comparison can afford: every tensor of both models is kept for each one.

    Measured: one sample through ``augmented`` (the int8 model with every tensor an output). Input bytes
    times node count misjudged token models, whose inputs are small and activations not (a sentence encoder: out
    of memory at 64 samples).
    """
    import onnxruntime as ort

    session = ort.InferenceSession(str(augmented), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    sample = next(dataset.samples(1))
    per_sample = sum(np.asarray(out).nbytes for out in session.run(None, dict(zip(names, sample)))) * 2 + 1
    return max(2, min(limit, ACTIVATION_BUDGET_BYTES // per_sample))


def _augmented(model_path: Path, out: Path) -> Path:
    from onnxruntime.quantization.qdq_loss_debug import modify_model_output_intermediate_tensors

    modify_model_output_intermediate_tensors(model_path, out)
    return out


def _activations(model_path: Path, augmented: Path, dataset: Dataset, limit: int) -> dict[str, list[np.ndarray]]:
    import onnx
    from onnxruntime.quantization.qdq_loss_debug import collect_activations

    names = graph_inputs(onnx.load(str(model_path)))
    return collect_activations(str(augmented), calibration_reader(dataset, names, limit))


def _layer_tensors(prepared: Path) -> list[tuple[str, str, list[str]]]:
    """(node, op type, tensors: its input, its own output, then through a fused activation) per weight layer."""
    import onnx

    graph = onnx.load(str(prepared)).graph
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    layers = []
    for node in graph.node:
        if node.op_type not in _WEIGHT_OPS:
            continue
        tensors = [node.input[0], *node.output]
        following = consumers.get(node.output[0], [])
        if len(following) == 1 and following[0].op_type in _FOLLOWERS:
            tensors.append(following[0].output[0])
        layers.append((node.name, node.op_type, tensors))
    return layers


def added_noise_db(input_sqnr_db: float, output_sqnr_db: float) -> float:
    """Relative noise (noise / signal power) a layer adds between its input and output, in dB (floor -200).

    Differences of SQNR in dB would rank a layer behind an exact input first whatever it adds;
    the noise powers relative to the signal add up instead, so their difference is this layer's share.
    """
    added = 10 ** (-output_sqnr_db / 10) - 10 ** (-input_sqnr_db / 10)
    return round(float(10 * np.log10(max(added, 1e-20))), 3)


def _accumulated(node: str, op: str, tensors: list[str], matched: dict[str, Any]) -> LayerSensitivity:
    """The layer's row with its accumulated figures: its output (after a fused activation) in the int8 model
    against the float model's, and the noise it adds to its input's."""
    row = LayerSensitivity(format="onnx", layer=node, op=op)
    for tensor in reversed(tensors[1:]):
        match = matched.get(tensor)
        if match and match.get("float") and match.get("post_qdq"):
            row.accumulated_sqnr_db = round(sqnr_db(match["float"], match["post_qdq"]), 3)
            row.accumulated_cosine = round(cosine(match["float"], match["post_qdq"]), 6)
            break
    source = matched.get(tensors[0])
    if row.accumulated_sqnr_db is not None and source and source.get("float") and source.get("post_qdq"):
        source_sqnr = round(sqnr_db(source["float"], source["post_qdq"]), 3)
        row.added_noise_db = added_noise_db(source_sqnr, row.accumulated_sqnr_db)
    return row


def _isolated(rows: list[LayerSensitivity], float_path: Path, calibration: Dataset, subset: Dataset,
              recipe: QuantRecipe, scratch: Path, memo: QuantizationMemo | None) -> None:
    """Each row's isolated figures: the model's first output with only that layer reading int8
    (:func:`~edgepipe.quantize.alone_int8.outputs_alone`, a graph edit of the one fully quantized model, no quantizer
    run per layer) against the float model's."""
    import onnx
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidGraph, NotImplemented

    prepared_path = preprocess(float_path, scratch / f"{float_path.stem}_prep.onnx")
    base = onnx.load(str(mixed_base(float_path, calibration, recipe, scratch, memo=memo)))
    prepared = onnx.load(str(prepared_path))
    candidates = quantized_nodes(base)
    reference = run_outputs(prepared_path, subset, threads=DECISION_THREADS).arrays[0]
    for row in rows:
        if row.layer not in candidates:  # not quantized in this recipe: nothing to isolate
            continue
        try:
            out = outputs_alone(row.layer, base, prepared, candidates, scratch / "sensitivity_onnx" / "single.onnx",
                                subset).arrays[0]
        except (Fail, InvalidArgument, InvalidGraph, NotImplemented) as exc:  # ORT's optimiser, not the graph
            log.info("isolated sensitivity of %s not measured: ONNX Runtime cannot run the try (%s)", row.layer,
                     str(exc).strip().splitlines()[0][-160:] if str(exc).strip() else type(exc).__name__)
            continue
        row.isolated_sqnr_db, row.isolated_cosine = round(sqnr_db(reference, out), 3), round(cosine(reference, out), 6)


def onnx_sensitivity(float_path: Path, int8_path: Path, calibration: Dataset, dataset: Dataset,
                     recipe: QuantRecipe, scratch: Path, limit: int = 64, *,
                     memo: QuantizationMemo | None = None) -> list[LayerSensitivity]:
    """Accumulated and isolated SQNR / cosine of every weight layer of ``int8_path`` (on ``limit`` samples); the
    isolated figures only up to :data:`ISOLATED_MAX_LAYERS` weight layers."""
    from onnxruntime.quantization.qdq_loss_debug import create_activation_matching

    prepared = preprocess(float_path, scratch / f"{float_path.stem}_prep.onnx")
    folder = scratch / "sensitivity_onnx"
    folder.mkdir(exist_ok=True)
    quantized_aug = _augmented(int8_path, folder / "q_aug.onnx")
    samples = activation_samples(quantized_aug, dataset, limit)
    matched = create_activation_matching(_activations(int8_path, quantized_aug, dataset, samples),
                                         _activations(prepared, _augmented(prepared, folder / "f_aug.onnx"),
                                                      dataset, samples))
    layers = _layer_tensors(prepared)
    rows = [_accumulated(node, op, tensors, matched) for node, op, tensors in layers]
    if len(layers) <= ISOLATED_MAX_LAYERS:
        subset = Dataset(dataset.path, tuple(a[:limit] for a in dataset.inputs), None, dataset.sha256, dataset.whole)
        _isolated(rows, float_path, calibration, subset, recipe, scratch, memo)
    log.info("ONNX sensitivity of %d layers (%s)", len(rows), recipe.label)
    return rows
