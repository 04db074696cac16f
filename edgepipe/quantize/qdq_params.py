"""What a QDQ ONNX model does to each float tensor, read from its QuantizeLinear/DequantizeLinear nodes.

ONNX Runtime's quantizer does not give a tensor the scale its calibrated range implies: it shares
one scale across data-movement ops (a Slice, Squeeze or Transpose output takes its input's),
fixes Softmax and Sigmoid outputs to [0, 1], renames a quantized graph output to
``<name>_QuantizeLinear_Input``, rounds every bias to int32 at input scale × weight scale, raises
the weight scale of channels whose bias would overflow that, and quantizes the constants of Mul,
Add and LayerNorm-like arithmetic too. QAT that simulates anything else learns a rounding the int8
model does not have; the nodes of the quantized model are what it really does, so
:mod:`.qat_onnx` trains at those.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from edgepipe.graph.onnx_edit import constant_values

#: Suffix ORT gives a graph output it quantizes (the DequantizeLinear after it restores the name).
RENAMED_OUTPUT = "_QuantizeLinear_Input"
#: Suffix of the dequantized copy of a quantized weight.
DEQUANTIZED = "_DequantizeLinear_Output"


@dataclass(frozen=True)
class QParams:
    """One tensor's affine quantization: ``q = clamp(round(x / scale) + zero_point, low, high)``."""

    scale: float
    zero_point: int
    low: int
    high: int


def activation_qparams(path: Path) -> dict[str, QParams]:
    """Float tensor name → how the QDQ model at ``path`` quantizes it, for every per-tensor activation.

    Weights (QuantizeLinear of an initializer, already folded by ORT) and per-channel quantizations
    are left out: QAT recomputes weight scales from the weights it trains.
    """
    import onnx

    model = onnx.load(str(path))
    return _activations(model, constant_values(model))


def _activations(model: object, constants: dict[str, np.ndarray]) -> dict[str, QParams]:
    found = {}
    for node in model.graph.node:  # type: ignore[attr-defined]
        if node.op_type != "QuantizeLinear" or node.input[0] in constants or len(node.input) < 2:
            continue
        scale = constants.get(node.input[1])
        zero = constants.get(node.input[2]) if len(node.input) > 2 and node.input[2] else np.zeros((), np.uint8)
        if scale is None or zero is None or scale.size != 1:
            continue
        info = np.iinfo(zero.dtype)
        name = node.input[0].removesuffix(RENAMED_OUTPUT)
        found[name] = QParams(float(scale.reshape(())), int(zero.reshape(())), int(info.min), int(info.max))
    return found


@dataclass(frozen=True)
class QdqModel:
    """How one QDQ model quantizes its float graph.

    ``activations``: float tensor → its per-tensor quantization; ``constants``: float initializer →
    the value the model dequantizes it to (weights, biases, arithmetic constants); ``scales``: float
    initializer → the scale(s) it was quantized with (one per channel for per-channel weights);
    ``originals``: those initializers' float values in the graph that was quantized.
    """

    activations: dict[str, QParams]
    constants: dict[str, np.ndarray]
    scales: dict[str, np.ndarray]
    originals: dict[str, np.ndarray]


def read_qdq(path: Path, float_graph: Path) -> QdqModel:
    """The activations, dequantized constants and constant scales of the QDQ model at ``path``,
    quantized from ``float_graph``."""
    import onnx

    model = onnx.load(str(path))
    values = constant_values(model)
    constants, scales = {}, {}
    for node in model.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in values or len(node.input) < 2:
            continue
        quantized, scale = values[node.input[0]], values.get(node.input[1])
        zero = values.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
        if scale is None or not np.issubdtype(quantized.dtype, np.integer):
            continue
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
        shape = [1] * quantized.ndim
        if scale.size > 1:
            shape[axis] = -1
        centred = quantized.astype(np.int64) - (0 if zero is None else zero.astype(np.int64).reshape(shape))
        name = node.output[0].removesuffix(DEQUANTIZED)  # float32 arithmetic, as DequantizeLinear's
        constants[name] = centred.astype(np.float32) * scale.astype(np.float32).reshape(shape)
        scales[name] = scale.astype(np.float32)
    floats = constant_values(onnx.load(str(float_graph)))
    originals = {name: floats[name] for name in constants if name in floats}
    return QdqModel(_activations(model, values), constants, scales, originals)
