"""One int8 node alone: the model's outputs when only that node reads int8 and every other node computes in float.

What the node-damage ranking (:mod:`.node_damage`) and the isolated per-layer sensitivity
(:mod:`.sensitivity_onnx`) both measure, from one fully quantized model: each try is a graph edit of that
model (:func:`~edgepipe.quantize.qdq_float_nodes.keep_nodes_float` of every other int8 node), never a
quantizer run. The node reads its rounded inputs and int8 weights; everything before and after it is float.

The error a layer adds locally (its output against the float model's, from one float and one quantized
run: ``added_noise_db``) is no substitute: a convolution whose small channels per-tensor int8 crushes
keeps a high SQNR at its own output (their power is small there) and still ruins the model's outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from edgepipe.data.dataset import Dataset
from edgepipe.metrics.compare import ModelOutputs, run_outputs
from edgepipe.quantize.ladder_context import DECISION_THREADS
from edgepipe.quantize.qdq_float_nodes import keep_nodes_float

if TYPE_CHECKING:
    import onnx


def outputs_alone(node: str, base: onnx.ModelProto, prepared: onnx.ModelProto, candidates: list[str],
                  path: Path, data: Dataset) -> ModelOutputs:
    """The outputs on ``data`` of ``base`` with every int8 node of ``candidates`` but ``node`` made float (the try
    is saved at ``path``)."""
    model, _ = keep_nodes_float(base, prepared, [n for n in candidates if n != node])
    path.write_bytes(model.SerializeToString())  # weights inline: a try is as small as the model it edits
    return run_outputs(path, data, threads=DECISION_THREADS)
