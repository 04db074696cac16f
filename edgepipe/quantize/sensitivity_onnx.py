"""Per-layer sensitivity of a QDQ ONNX model, with ``onnxruntime.quantization.qdq_loss_debug``.

Accumulated: every quantized activation of the full QDQ model against the same
tensor of the float model (``modify_model_output_intermediate_tensors``,
``collect_activations``, ``create_activation_matching``). Isolated: the model's
output when only one layer is quantized (``quantize_static`` with
``nodes_to_quantize``), against the float output.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.accuracy import predict_logits
from edgepipe.metrics.similarity import cosine, sqnr_db
from edgepipe.quantize.onnx_qdq import calibration_reader, graph_inputs, preprocess, quantize_onnx
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import LayerSensitivity

log = logging.getLogger(__name__)

#: Elementwise ops a layer's output passes through before it is quantized (fused by the quantizer).
_FOLLOWERS = ("Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "Add")
_WEIGHT_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
#: Above this many weight layers only the accumulated figures are measured: the isolated ones cost one
#: quantizer run per layer (minutes each on a real detector).
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


def onnx_sensitivity(float_path: Path, int8_path: Path, calibration: Dataset, dataset: Dataset,
                     recipe: QuantRecipe, scratch: Path, limit: int = 64, *,
                     memo: QuantizationMemo | None = None) -> list[LayerSensitivity]:
    """Accumulated and isolated SQNR / cosine of every weight layer of ``int8_path`` (on ``limit`` samples)."""
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
    isolated = len(layers) <= ISOLATED_MAX_LAYERS
    subset = Dataset(dataset.path, tuple(a[:limit] for a in dataset.inputs), None, dataset.sha256, dataset.whole)
    float_out = predict_logits(prepared, subset) if isolated else None
    rows = []
    for node, op, tensors in layers:
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
        if not isolated:
            rows.append(row)
            continue
        single = quantize_onnx(float_path, folder / "single.onnx", calibration, recipe, scratch, only_nodes=(node,),
                               memo=memo)
        out = predict_logits(single, subset)
        assert float_out is not None
        row.isolated_sqnr_db, row.isolated_cosine = round(sqnr_db(float_out, out), 3), round(cosine(float_out, out), 6)
        rows.append(row)
    log.info("ONNX sensitivity of %d layers (%s)", len(rows), recipe.label)
    return rows
