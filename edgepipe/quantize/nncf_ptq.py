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

from edgepipe.data.dataset import Dataset
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
    onnx.save(quantized, str(out))
    algorithms = ("min-max ranges", "bias correction", *(("SmoothQuant",) if transformer else ()))
    return NncfResult(out, algorithms, round(time.perf_counter() - start, 1))
