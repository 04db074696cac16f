"""ONNX-ML ``Scaler`` nodes written as ``Sub`` and ``Mul``, so that onnx2tf (which has no ONNX-ML ops) converts
a model whose input is standardized by scikit-learn's ``StandardScaler`` exported with its network.

``Scaler(x) = (x - offset) * scale``, per last-axis feature or with one value broadcast: the same function in
float32, on ops every NPU runs.
"""

from __future__ import annotations

from typing import Any

_ML_DOMAIN = "ai.onnx.ml"


def scalers_as_arithmetic(model: Any) -> int:
    """Rewrite, in place, every ``Scaler`` of ``model``'s main graph; returns how many."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from edgepipe.graph.onnx_edit import attributes
    from edgepipe.graph.onnx_types import tensor_types

    if not any(node.op_type == "Scaler" for node in model.graph.node):
        return 0
    types = tensor_types(model)
    nodes, count = [], 0
    for node in model.graph.node:
        if node.op_type != "Scaler" or node.domain != _ML_DOMAIN:
            nodes.append(node)
            continue
        attrs = attributes(node)
        base = node.name or node.output[0]
        offset, scale = (np.asarray(attrs.get(k, [default]), np.float32) for k, default in
                         (("offset", 0.0), ("scale", 1.0)))
        for name, value in ((f"{base}/offset", offset), (f"{base}/scale", scale)):
            model.graph.initializer.append(numpy_helper.from_array(value, name))
        source = node.input[0]
        if types.get(source, (TensorProto.UNDEFINED, None))[0] != TensorProto.FLOAT:
            # Scaler takes float, double, int64 or int32 and always gives float
            nodes.append(helper.make_node("Cast", [source], [f"{base}/as_float"], name=f"{base}/as_float",
                                          to=TensorProto.FLOAT))
            source = f"{base}/as_float"
        nodes += [helper.make_node("Sub", [source, f"{base}/offset"], [f"{base}/centred"], name=f"{base}/centred"),
                  helper.make_node("Mul", [f"{base}/centred", f"{base}/scale"], [node.output[0]],
                                   name=f"{base}/scaled")]
        count += 1
    if count:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
    return count
