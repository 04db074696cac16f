"""Padded ONNX MaxPools rewritten so that onnx2tf converts them exactly.

A MaxPool's padding (its ``pads``, and the end padding ``ceil_mode`` adds) never wins the max in ONNX. onnx2tf
writes it as an explicit pad with zeros whenever it also writes the full-integer TFLite (its workaround for the
int8 range of a pad with the float minimum, onnx2tf's GitHub issue #444), unless the padding is exactly TensorFlow's
``SAME``. A window that reaches past its input then takes ``max(x, 0)``: after a PReLU or a linear layer, negative
maxima become 0 (a face detector's refinement network: its box outputs at cosine 0.988 with the ONNX model's, refused at
export). Before onnx2tf sees the model, each such MaxPool is rewritten:

- padding that is TensorFlow's ``SAME`` becomes ``pads`` without ``ceil_mode`` (onnx2tf writes a ``SAME`` pool,
  which ignores the padding);
- other padding becomes the input's first and last rows and columns repeated (Slice + Concat, ops every NPU
  runs) and an unpadded pool: with unit dilation every window that reaches into the padding also covers the
  input's edge it repeats, so the max is the same and the int8 range is untouched.
"""

from __future__ import annotations

import math
from typing import Any

from edgepipe.graph.onnx_edit import attributes

#: Spatial rank of the pools rewritten (NCHW 2-D pooling).
_SPATIAL = 2


def _pool_padding(size: int, kernel: int, stride: int, begin: int, end: int, ceil: bool) -> tuple[int, int, int]:
    """(begin, end, output size) of one axis: ``end`` grown by what ``ceil_mode`` adds (the last window starts
    inside the input or its begin padding, as ONNX Runtime and PyTorch count it)."""
    span = size + begin + end - kernel
    out = (math.ceil(span / stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + begin:
        out -= 1
    return begin, max((out - 1) * stride + kernel - size - begin, 0), out


def _same(size: int, kernel: int, stride: int) -> tuple[int, int, int]:
    """TensorFlow's ``SAME`` padding of one axis: (begin, end, output size)."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2, out


def _edge_repeat(model: Any, node: Any, shape: list[int], paddings: list[tuple[int, int]]) -> tuple[list[Any], str]:
    """The Slice and Concat nodes that repeat the edges of ``node``'s input (rows, then columns) as ``paddings``
    asks, their indices added to ``model``'s initializers, and the name of the padded tensor."""
    import numpy as np
    from onnx import helper, numpy_helper

    nodes, current, base = [], node.input[0], f"{node.output[0]}_edge"
    for axis, (begin, end) in zip((2, 3), paddings):
        if not (begin or end):
            continue
        edges = {}
        for side, count, start in (("first", begin, 0), ("last", end, shape[axis] - 1)):
            if not count:
                continue
            names = [f"{base}_{side}{axis}_{k}" for k in ("starts", "ends", "axes")]
            for name, value in zip(names, (start, start + 1, axis)):
                model.graph.initializer.append(numpy_helper.from_array(np.array([value], np.int64), name))
            edges[side] = f"{base}_{side}{axis}"
            nodes.append(helper.make_node("Slice", [current, *names], [edges[side]], name=edges[side]))
        padded = f"{base}_padded{axis}"
        ordered = [edges.get("first", "")] * begin + [current] + [edges.get("last", "")] * end
        nodes.append(helper.make_node("Concat", ordered, [padded], axis=axis, name=padded))
        current = padded
    return nodes, current


def _non_negative(name: str, producers: dict[str, Any], constants: dict[str, Any]) -> bool:
    """Whether tensor ``name`` is written by an op whose output is never negative (a zero padding is then exact)."""
    from onnx import numpy_helper

    node = producers.get(name)
    if node is None:
        return False
    if node.op_type in ("Relu", "Sigmoid", "Softmax", "Abs"):
        return True
    if node.op_type == "Clip":
        low = attributes(node).get("min")
        if low is None and len(node.input) > 1 and node.input[1] in constants:
            low = float(numpy_helper.to_array(constants[node.input[1]]))
        return low is not None and low >= 0
    return False


def exact_max_pools(model: Any) -> int:
    """Rewrite ``model``'s (an ``onnx.ModelProto``, changed in place) padded 2-D MaxPools as the module says;
    returns how many were rewritten. Pools reading a tensor that is never negative (after a Relu: onnx2tf's zero
    padding is exact), with dilation, indices, ``auto_pad`` or unknown input shapes stay."""
    import onnx

    shapes = {v.name: [d.dim_value if d.HasField("dim_value") else 0 for d in v.type.tensor_type.shape.dim]
              for v in (*onnx.shape_inference.infer_shapes(model).graph.value_info, *model.graph.input)}
    producers = {out: node for node in model.graph.node for out in node.output}
    constants = {t.name: t for t in model.graph.initializer}
    rewritten, nodes = 0, []
    for node in model.graph.node:
        attrs = attributes(node)
        shape = shapes.get(node.input[0] if node.input else "", [])
        kernel = list(attrs.get("kernel_shape", []))
        if (node.op_type != "MaxPool" or len(node.output) > 1 or len(kernel) != _SPATIAL or len(shape) != 4
                or not all(shape) or attrs.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")
                or any(d != 1 for d in attrs.get("dilations", [1, 1]))
                or _non_negative(node.input[0], producers, constants)):
            nodes.append(node)
            continue
        strides = list(attrs.get("strides", [1, 1]))
        pads = list(attrs.get("pads", [0, 0, 0, 0]))
        ceil = bool(attrs.get("ceil_mode", 0))
        axes = [_pool_padding(shape[2 + i], kernel[i], strides[i], pads[i], pads[2 + i], ceil) for i in range(2)]
        if not any(begin or end for begin, end, _ in axes):
            if ceil:
                _set(node, "ceil_mode", 0)
                rewritten += 1
            nodes.append(node)
            continue
        if all(axis == _same(shape[2 + i], kernel[i], strides[i]) for i, axis in enumerate(axes)):
            if not ceil:  # already TensorFlow's SAME: onnx2tf writes a SAME pool
                nodes.append(node)
                continue
            _set(node, "ceil_mode", 0)
            _set(node, "pads", [axes[0][0], axes[1][0], axes[0][1], axes[1][1]])
            nodes.append(node)
            rewritten += 1
            continue
        added, padded = _edge_repeat(model, node, shape, [(b, e) for b, e, _ in axes])
        nodes.extend(added)
        node.input[0] = padded
        _set(node, "ceil_mode", 0)
        _set(node, "pads", [0, 0, 0, 0])
        nodes.append(node)
        rewritten += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return rewritten


def _set(node: Any, name: str, value: Any) -> None:
    """Set (or add) attribute ``name`` of ``node``."""
    from onnx import helper

    kept = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend([*kept, helper.make_attribute(name, value)])
