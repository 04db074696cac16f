"""Per-layer sensitivity of a full-integer TFLite model, with TF's ``QuantizationDebugger``.

Isolated: the debugger's numeric-verify model compares every quantized op's
output with the float op run on the same (dequantized) inputs; SQNR and cosine
are its ``layer_direct_compare_metrics``. Accumulated: the same tensor in the
quantized and the float TFLite (LiteRT with all tensors preserved), matched by
name.
"""

from __future__ import annotations

import csv
import io
import logging
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.export.tf_function import TFGraph
from edgepipe.metrics.similarity import cosine, sqnr_db
from edgepipe.native_logs import native_stderr_to_log
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.report import LayerSensitivity
from edgepipe.quantize.tflite_int8 import int8_converter, selective_debugger

log = logging.getLogger(__name__)


def _dequantized(quant: Sequence[np.ndarray], scale: float, zero_point: int) -> np.ndarray:
    return (np.asarray(quant, np.float64) - zero_point) * scale


def _sqnr(floats: Sequence[np.ndarray], quant: Sequence[np.ndarray], scale: float, zero_point: int) -> float:
    return round(sqnr_db(np.asarray(floats), _dequantized(quant, scale, zero_point)), 3)


def _cosine(floats: Sequence[np.ndarray], quant: Sequence[np.ndarray], scale: float, zero_point: int) -> float:
    return round(cosine(np.asarray(floats), _dequantized(quant, scale, zero_point)), 6)


def _all_tensors(path: Path, dataset: Dataset, limit: int) -> dict[str, list[np.ndarray]]:
    """Every named tensor of the TFLite at ``path``, dequantized, per sample."""
    from ai_edge_litert.interpreter import Interpreter

    from edgepipe.runtimes.litert_runner import dequantize, quantize

    with warnings.catch_warnings():  # LiteRT warns that preserving all tensors is for debugging: it is
        warnings.simplefilter("ignore", UserWarning)
        interp = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True)
    with native_stderr_to_log():
        interp.allocate_tensors()
    details = [d for d in interp.get_tensor_details() if d["name"]]
    inputs = interp.get_input_details()
    values: dict[str, list[np.ndarray]] = {}
    for sample in dataset.samples(limit):
        for array, detail in zip(sample, inputs):
            interp.set_tensor(detail["index"], quantize(array, detail))
        interp.invoke()
        for detail in details:
            try:
                tensor = interp.get_tensor(detail["index"])
            except ValueError:
                continue
            values.setdefault(detail["name"], []).append(dequantize(tensor, detail))
    return values


def _layer_rows(debugger: Any) -> list[dict[str, Any]]:
    buffer = io.StringIO()
    debugger.layer_statistics_dump(buffer)
    buffer.seek(0)
    return list(csv.DictReader(buffer))


def tflite_sensitivity(graph: TFGraph, float_path: Path, int8_path: Path, calibration: Dataset, dataset: Dataset,
                       recipe: QuantRecipe, limit: int = 64) -> list[LayerSensitivity]:
    """Isolated (debugger) and accumulated (float vs int8 tensors) SQNR / cosine of every quantized op."""
    with native_stderr_to_log():  # the debugger's converter and interpreter print from C++
        debugger = selective_debugger(int8_converter(graph, calibration, recipe), dataset,
                                      compare={"sqnr": _sqnr, "cosine": _cosine}, limit=limit)
        with warnings.catch_warnings():  # the debugger runs TF's deprecated tf.lite.Interpreter
            warnings.simplefilter("ignore", UserWarning)
            debugger.run()
    floats = _all_tensors(float_path, dataset, limit)
    quants = _all_tensors(int8_path, dataset, limit)
    rows = []
    for stats in _layer_rows(debugger):
        name = stats["tensor_name"]
        row = LayerSensitivity(format="tflite", layer=name, op=stats["op_name"],
                               isolated_sqnr_db=round(float(stats["sqnr"]), 3),
                               isolated_cosine=round(float(stats["cosine"]), 6))
        if name in floats and name in quants and np.shape(floats[name]) == np.shape(quants[name]):
            row.accumulated_sqnr_db = round(sqnr_db(floats[name], quants[name]), 3)
            row.accumulated_cosine = round(cosine(floats[name], quants[name]), 6)
        rows.append(row)
    log.info("TFLite sensitivity of %d layers (%s)", len(rows), recipe.label)
    return rows
