"""NNCF's corrections of a float ONNX for quantization: the one adapter to NNCF.

NNCF (OpenVINO's Neural Network Compression Framework) quantizes an ONNX model and, on the way, rewrites its float
weights with what edgepipe's ONNX Runtime recipes lack: **bias correction** (after quantizing a layer's weights it
shifts the layer's bias so that each output channel's mean on the calibration samples is the float model's again,
which repairs the systematic error int8 rounding leaves in depthwise and small layers) and, for transformers,
**SmoothQuant** (a per-channel scale that moves the range of outlier activation channels into the next MatMul's
weights, so one activation scale per tensor fits).

edgepipe keeps those rewrites and not NNCF's quantizer placement: NNCF quantizes only the inputs of the ops its CPU
and GPU plugins run in int8 and leaves the rest (model outputs, activations, heads after the last convolution) in
float, a mixed model that NPUs place partly on the CPU. :func:`nncf_rewrite` reads NNCF's model back to float (each
QuantizeLinear-DequantizeLinear pair as the tensor it rounds), which the ladder then quantizes with its own recipe
into the node units NPU compilers take, and scores against the original float model.

NNCF is imported only when the step runs (it takes seconds).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.graph.onnx_edit import drop_unread_initializers, initializer_values
from edgepipe.native_logs import native_stderr_to_log
from edgepipe.quantize.onnx_qdq import LAYER_OPS, graph_inputs

log = logging.getLogger(__name__)

#: What installs NNCF (a dependency of edgepipe; an environment without it skips the step).
INSTALL = "pip install 'nncf==3.4.0'"
_QDQ = ("QuantizeLinear", "DequantizeLinear")


def nncf_missing() -> bool:
    """True when NNCF is not installed (found without importing it)."""
    return importlib.util.find_spec("nncf") is None


def is_transformer(model: Any) -> bool:
    """True when ``model`` (an ``onnx.ModelProto``) has attention: a MatMul of two activations (no weight input),
    as the query-key and attention-value products are. SmoothQuant is for such models; a conv net has none."""
    constants = {init.name for init in model.graph.initializer}
    constants |= {out for node in model.graph.node if node.op_type == "Constant" for out in node.output}
    return any(node.op_type == "MatMul" and len(node.input) == 2 and not constants.intersection(node.input)
               for node in model.graph.node)


def _float_weight(node: Any, values: dict[str, np.ndarray], originals: dict[str, np.ndarray]) -> np.ndarray:
    """What a DequantizeLinear of a constant computes: ``(q - zero point) * scale`` along its axis; the source's own
    float tensor of that name instead when it rounds to the same integers (no double rounding for the quantizer)."""
    integers, scale = values[node.input[0]], values[node.input[1]]
    zero = values[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros_like(scale, dtype=np.int8)
    if scale.ndim == 1 and scale.size > 1:
        axis = next((a.i for a in node.attribute if a.name == "axis"), 1) % integers.ndim
        shape = [1] * integers.ndim
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    weight = ((integers.astype(np.float32) - zero.astype(np.float32)) * scale).astype(np.float32)
    original = originals.get(node.input[0].removeprefix("q_output_").rsplit("_", 1)[0])
    if original is not None and original.shape == weight.shape and np.all(np.abs(original - weight) <= scale / 2):
        return original
    return weight


def strip_qdq(model: Any, originals: dict[str, np.ndarray] | None = None) -> int:
    """Read a QDQ model back to float, in place; returns how many QuantizeLinear/DequantizeLinear nodes went.

    A DequantizeLinear of a QuantizeLinear becomes the tensor the pair rounds; a DequantizeLinear of an integer
    constant (a weight NNCF stored quantized) becomes its float value, or the source's float weight of that name
    (``originals``) where that rounds to the same integers. A graph output written by a removed DequantizeLinear is
    kept by an Identity, so the outputs keep their names."""
    from onnx import helper, numpy_helper

    values, originals = initializer_values(model), originals or {}
    producer = {out: node for node in model.graph.node for out in node.output}
    rounds, floats = {}, []
    for node in model.graph.node:
        if node.op_type != "DequantizeLinear":
            continue
        source = producer.get(node.input[0])
        if source is not None and source.op_type == "QuantizeLinear":
            rounds[node.output[0]] = source.input[0]
        elif node.input[0] in values and all(name in values for name in node.input[1:] if name):
            name = f"{node.output[0]}_float"
            floats.append(numpy_helper.from_array(_float_weight(node, values, originals), name))
            rounds[node.output[0]] = name
    model.graph.initializer.extend(floats)
    kept = [node for node in model.graph.node if not (node.op_type == "DequantizeLinear" and node.output[0] in rounds)]
    for node in kept:
        for index, name in enumerate(node.input):
            node.input[index] = rounds.get(name, name)
    outputs = {o.name for o in model.graph.output}
    kept += [helper.make_node("Identity", [rounds[name]], [name], name=f"{name}_float")
             for name in sorted(outputs & set(rounds))]
    read = {name for node in kept for name in node.input} | outputs
    kept = [node for node in kept if not (node.op_type == "QuantizeLinear" and node.output[0] not in read)]
    removed = sum(n.op_type in _QDQ for n in model.graph.node) - sum(n.op_type in _QDQ for n in kept)
    del model.graph.node[:]
    model.graph.node.extend(kept)
    drop_unread_initializers(model)
    return removed


def _biases(model: Any) -> dict[str, np.ndarray]:
    values = initializer_values(model)
    return {node.name: values[node.input[2]] for node in model.graph.node
            if node.op_type in LAYER_OPS and len(node.input) > 2 and node.input[2] in values}


def changed_biases(source: Any, rewrite: Any) -> list[str]:
    """The weight layers (node names) whose bias differs between the float ``source`` and NNCF's ``rewrite``."""
    before, after = _biases(source), _biases(rewrite)
    return sorted(name for name, bias in after.items()
                  if name in before and (bias.shape != before[name].shape or not np.array_equal(bias, before[name])))


@dataclass(frozen=True)
class NncfRewrite:
    """NNCF's rewrite of a float ONNX, back in float: ``path``, the layers whose bias it corrected, the MatMuls
    SmoothQuant scaled, and the seconds NNCF took."""

    path: Path
    corrected: tuple[str, ...]
    smoothed: int
    seconds: float

    @property
    def label(self) -> str:
        """What the rewrite did, for the ladder's trail."""
        smooth = f", SmoothQuant on {self.smoothed} MatMul input(s)" if self.smoothed else ""
        return f"NNCF bias correction of {len(self.corrected)} layer(s){smooth}"

    @property
    def changed(self) -> bool:
        return bool(self.corrected or self.smoothed)


def nncf_rewrite(source: Path, out: Path, calibration: Dataset, transformer: bool) -> NncfRewrite:
    """NNCF's quantization of the float ONNX ``source`` on every ``calibration`` sample (the mixed preset, bias
    correction, SmoothQuant when ``transformer``), read back to float and written to ``out``. NNCF's own exceptions
    propagate (run it under :data:`~edgepipe.containment.NNCF`)."""
    import onnx

    start = time.perf_counter()
    model = onnx.load(str(source))
    names = graph_inputs(model)
    feeds = [dict(zip(names, sample)) for sample in calibration.samples()]
    chatter = io.StringIO()
    with native_stderr_to_log(), contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
        import nncf  # heavy optional dependency, imported when the step runs

        quantized = nncf.quantize(model, nncf.Dataset(feeds), preset=nncf.QuantizationPreset.MIXED,
                                  subset_size=len(feeds), fast_bias_correction=True,
                                  model_type=nncf.ModelType.TRANSFORMER if transformer else None)
    log.debug("NNCF: %s", chatter.getvalue()[-2000:])
    strip_qdq(quantized, initializer_values(model))
    onnx.save(quantized, str(out))
    added = sum(n.op_type == "Mul" for n in quantized.graph.node) - sum(n.op_type == "Mul" for n in model.graph.node)
    return NncfRewrite(out, tuple(changed_biases(model, quantized)), max(added, 0),
                       round(time.perf_counter() - start, 1))
