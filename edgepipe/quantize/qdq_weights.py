"""Int8 weights for a QAT ONNX: tf2onnx folds the weight FakeQuant ops into float constants on the int8 grid.

The activations of the exported QAT model already carry QuantizeLinear /
DequantizeLinear pairs (from the FakeQuant ops); this stores each Conv / Gemm /
MatMul weight as int8 with a DequantizeLinear in front, the QDQ form ONNX
Runtime's own quantizer writes. The values are unchanged: QAT trained them on
exactly this symmetric grid (scale = max|w| / 127, per output channel for Conv
when QAT was per-channel).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

_WEIGHT_INPUT = {"Conv": 1, "Gemm": 1, "MatMul": 1}


def _scales(weights: np.ndarray, per_channel: bool) -> np.ndarray:
    if per_channel:
        bound = np.abs(weights.reshape(weights.shape[0], -1)).max(axis=1)
    else:
        bound = np.array(np.abs(weights).max())
    return (np.maximum(bound, 1e-12) / 127.0).astype(np.float32)


def store_int8_weights(path: Path, per_channel: bool) -> Path:
    """Rewrite ``path`` in place with int8 weights behind DequantizeLinear; returns ``path``."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    initializers = {init.name: init for init in graph.initializer}
    new_nodes = []
    for node in graph.node:
        index = _WEIGHT_INPUT.get(node.op_type)
        name = node.input[index] if index is not None and len(node.input) > index else None
        if name is None or name not in initializers or initializers[name].data_type != onnx.TensorProto.FLOAT:
            new_nodes.append(node)
            continue
        weights = numpy_helper.to_array(initializers[name])
        channel = per_channel and node.op_type == "Conv"
        scale = _scales(weights, channel)
        shape = (-1,) + (1,) * (weights.ndim - 1) if channel else ()
        quantized = np.clip(np.round(weights / scale.reshape(shape)), -127, 127).astype(np.int8)
        graph.initializer.remove(initializers.pop(name))
        graph.initializer.extend([numpy_helper.from_array(quantized, f"{name}_quantized"),
                                  numpy_helper.from_array(scale, f"{name}_scale"),
                                  numpy_helper.from_array(np.zeros(scale.shape, np.int8), f"{name}_zero_point")])
        attrs: dict[str, Any] = {"axis": 0} if channel else {}
        new_nodes.append(helper.make_node("DequantizeLinear", [f"{name}_quantized", f"{name}_scale",
                                                               f"{name}_zero_point"], [name],
                                          name=f"{name}_DequantizeLinear", **attrs))
        new_nodes.append(node)
    del graph.node[:]
    graph.node.extend(new_nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path
