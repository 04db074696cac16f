"""NNCF's post-training quantization of a float ONNX: the one adapter to NNCF.

NNCF (OpenVINO's Neural Network Compression Framework) quantizes an ONNX model to QDQ int8 with what edgepipe's
ONNX Runtime recipes lack: **bias correction** (after quantizing a layer's weights it shifts the layer's bias so
that the mean of each output channel on the calibration samples is the float model's again, which repairs the
systematic error int8 rounding leaves in depthwise and small layers) and, for transformers, **SmoothQuant** (it
moves the range of outlier activation channels into the next MatMul's weights, so one activation scale per tensor
fits). Its activation ranges come from its own range estimators (the ``mixed`` preset: asymmetric activations,
symmetric per-channel weights), so its result is a candidate of its own, not a variant of an ONNX Runtime recipe.

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
from edgepipe.graph.onnx_edit import attributes, drop_unread_initializers, initializer_values
from edgepipe.native_logs import native_stderr_to_log
from edgepipe.quantize.onnx_qdq import graph_inputs

log = logging.getLogger(__name__)

#: What installs NNCF (a dependency of edgepipe; an environment without it skips the step).
INSTALL = "pip install 'nncf==3.4.0'"


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


def fold_weight_quantize(model: Any) -> int:
    """Replace every QuantizeLinear of a constant (NNCF writes float weights -> QuantizeLinear -> DequantizeLinear)
    with its integer result as an initializer, in place; returns how many were folded.

    The integers are exactly what the node computes (round half to even, saturated, per axis), so outputs do not
    change; what changes is the form: an integer weight read by a DequantizeLinear is the QDQ node unit NPU
    compilers take (the QNN HTP runs no standalone quantization of a per-channel weight) and what ONNX Runtime's
    quantizer writes. The file is also a quarter of the size.
    """
    from onnx import numpy_helper

    values = initializer_values(model)
    kept, folded = [], 0
    for node in model.graph.node:
        names = [n for n in node.input if n]
        if node.op_type != "QuantizeLinear" or len(names) < 3 or not all(n in values for n in names):
            kept.append(node)
            continue
        x, scale, zero = (values[n] for n in names[:3])
        if scale.ndim == 1 and scale.size > 1:
            axis = int(attributes(node).get("axis", 1)) % x.ndim
            shape = [1] * x.ndim
            shape[axis] = scale.size
            scale, zero = scale.reshape(shape), zero.reshape(shape)
        info = np.iinfo(zero.dtype)
        integers = np.clip(np.rint(x / scale) + zero.astype(np.int64), info.min, info.max).astype(zero.dtype)
        model.graph.initializer.append(numpy_helper.from_array(integers, node.output[0]))
        folded += 1
    del model.graph.node[:]
    model.graph.node.extend(kept)
    drop_unread_initializers(model)
    return folded


@dataclass(frozen=True)
class NncfResult:
    """An NNCF-quantized QDQ ONNX: ``path``, the algorithms it applied, and the seconds NNCF took."""

    path: Path
    algorithms: tuple[str, ...]
    seconds: float

    @property
    def label(self) -> str:
        """The candidate's name in the ladder's trail."""
        return "nncf " + " + ".join(self.algorithms)


def quantize_with_nncf(source: Path, out: Path, calibration: Dataset, transformer: bool) -> NncfResult:
    """Quantize the float ONNX ``source`` to ``out`` with NNCF on every ``calibration`` sample: the mixed preset,
    bias correction, and SmoothQuant when ``transformer``. NNCF's own exceptions propagate (run it under
    :data:`~edgepipe.containment.NNCF`)."""
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
    fold_weight_quantize(quantized)
    onnx.save(quantized, str(out))
    algorithms = ("min-max ranges", "bias correction", *(("SmoothQuant",) if transformer else ()))
    return NncfResult(out, algorithms, round(time.perf_counter() - start, 1))
