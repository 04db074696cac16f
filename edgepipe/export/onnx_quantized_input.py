"""Artifacts of an ONNX model that is already quantized: the file itself is the int8 artifact, never rewritten.

- **dynamic** int8 (``quantize_dynamic``; ``ConvInteger``, ``MatMulInteger``, com.microsoft
  ``DynamicQuantizeLSTM``…): the file as loaded becomes ``model_int8.onnx`` (checked and
  timed). Its float weights are not rebuilt: the report says so; no TFLite (onnx2tf has no
  conversion for these ops).
- **static QDQ**: the file is ``model_int8.onnx``; the float reference ``model.onnx`` is the
  same graph with every Q/DQ removed (:mod:`edgepipe.export.onnx_dequantized`), so the
  label-free comparison measures the shipped model's activation quantization. The export stage
  converts that reference to TFLite for the TFLite targets, which quantize it again.
- **QOperator**: the file is ``model_int8.onnx``, checked and timed only.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from edgepipe.artifacts import Artifact
from edgepipe.export.onnx_dequantized import strip_qdq
from edgepipe.load.onnx_quantized import QuantizedKind

log = logging.getLogger(__name__)


def already_quantized_artifacts(model: Any, kind: QuantizedKind, folder: Path) -> tuple[list[Artifact], str]:
    """``model_int8.onnx`` (the model as loaded) and, for QDQ, its float reference; plus the reason for the report."""
    import onnx

    int8_path = folder / "model_int8.onnx"
    onnx.save(model, str(int8_path))
    artifacts = [Artifact(int8_path, "onnx", "int8")]
    if kind.form == "qdq":
        reference, weights, pairs, relus = strip_qdq(model)
        onnx.save(reference, str(folder / "model.onnx"))
        artifacts.insert(0, Artifact(folder / "model.onnx", "onnx", "fp32"))
        reason = (f"input is already {kind.describe()}: it is model_int8.onnx, unchanged; model.onnx is its float "
                  f"reference, the same graph without Q/DQ ({weights} weights dequantized, {pairs} activation pairs "
                  f"removed, {relus} of them written as the ReLU their zero point applies), so the comparison "
                  "measures activation quantization only; the shipped file is not quantized again")
    else:
        reason = (f"input is already {kind.describe()}: it is model_int8.onnx, unchanged, checked and timed; "
                  "its float weights are not rebuilt, so there is no float reference and no re-quantization")
    log.info("%s", reason)
    return artifacts, reason
