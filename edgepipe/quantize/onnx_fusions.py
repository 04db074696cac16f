"""Exact rewrites that put an export's int8 tensors where its operations are, not between their pieces.

Exporters write one operation as several ONNX nodes, and ONNX Runtime's QDQ quantizer gives
every tensor between them its own int8 scale. Two patterns of real exports lose most of the
model's accuracy that way; both are rewritten before quantization, as NPU compilers do:

- **decomposed HardSwish**: PaddlePaddle writes ``hardswish(x)`` as ``Mul(x, Clip(x + 3, 0, 6)) / 6``.
  The product ``x * relu6(x + 3)`` spans six times the output's range, so its int8 step is six
  times too coarse for the values that matter (a text detector: output cosine 0.20 after
  min/max PTQ). The chain becomes one ``HardSwish`` (opset >= 14).
- **a constant scale or shift right after a Conv** (``Mul``/``Div``/``Add``/``Sub`` by a scalar or a
  per-output-channel constant: PP-LCNetV3's learnable affine blocks, re-parameterised blocks):
  folded into the Conv's weights and bias, which is exact because the Conv is affine in them.

Every rewrite is checked by the caller like an opset upgrade (same outputs in ONNX Runtime on real
samples) and undone when it is not exact. :func:`name_nodes` gives unnamed nodes a name first:
mixed precision refers to nodes by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: First opset with a ``HardSwish`` op.
HARDSWISH_OPSET = 14
_AFFINE_OPS = ("Mul", "Div", "Add", "Sub")


class _Graph:
    """Producers, consumers and constant initializers of a graph, rebuilt after every change."""

    def __init__(self, model: Any):
        graph = model.graph
        self.producer = {out: node for node in graph.node for out in node.output}
        self.consumers: dict[str, list[Any]] = {}
        for node in graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self._initializers = {init.name: init for init in graph.initializer}
        self._arrays: dict[str, np.ndarray] = {}
        self.outputs = {v.name for v in graph.output}

    def constant(self, name: str) -> np.ndarray | None:
        """The initializer ``name`` as an array (read once), or None when ``name`` is no initializer."""
        from onnx import numpy_helper

        if name not in self._arrays and name in self._initializers:
            self._arrays[name] = numpy_helper.to_array(self._initializers[name])
        return self._arrays.get(name)

    def scalar(self, name: str) -> float | None:
        value = self.constant(name)
        return float(value.reshape(-1)[0]) if value is not None and value.size == 1 else None

    def only_consumer(self, name: str) -> Any:
        users = self.consumers.get(name, [])
        return users[0] if len(users) == 1 and name not in self.outputs else None


def name_nodes(model: Any) -> int:
    """Name every unnamed node ``<op>_<k>`` (unique in the graph); returns how many were named."""
    taken = {node.name for node in model.graph.node if node.name}
    named = 0
    for index, node in enumerate(model.graph.node):
        if node.name:
            continue
        name, k = f"{node.op_type}_{index}", 0
        while name in taken:
            k += 1
            name = f"{node.op_type}_{index}_{k}"
        node.name = name
        taken.add(name)
        named += 1
    return named


def _clip_bounds(graph: _Graph, clip: Any) -> tuple[float | None, float | None]:
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in clip.attribute}
    low = graph.scalar(clip.input[1]) if len(clip.input) > 1 and clip.input[1] else attrs.get("min")
    high = graph.scalar(clip.input[2]) if len(clip.input) > 2 and clip.input[2] else attrs.get("max")
    return low, high


def _hardswish_chain(graph: _Graph, mul: Any) -> tuple[str, list[Any]] | None:
    """``(x, [add, clip, mul, scale])`` when ``mul`` is the product of ``x * Clip(x + 3, 0, 6) / 6``."""
    if mul.op_type != "Mul" or len(mul.input) != 2:
        return None
    for x, gate in (tuple(mul.input), tuple(reversed(mul.input))):
        clip = graph.producer.get(gate)
        if clip is None or clip.op_type != "Clip" or graph.only_consumer(gate) is not mul:
            continue
        if _clip_bounds(graph, clip) != (0.0, 6.0):
            continue
        add = graph.producer.get(clip.input[0])
        if add is None or add.op_type != "Add" or x not in add.input:
            continue
        if graph.only_consumer(add.output[0]) is not clip:
            continue
        others = [name for name in add.input if name != x]
        if len(others) != 1 or graph.scalar(others[0]) != 3.0:
            continue
        scale = graph.only_consumer(mul.output[0])
        if scale is None or len(scale.input) != 2:
            continue
        constant = graph.scalar(scale.input[1]) if scale.input[0] == mul.output[0] else None
        if (scale.op_type, constant) == ("Div", 6.0) or (scale.op_type == "Mul" and constant is not None
                                                          and abs(constant - 1 / 6) < 1e-6):
            return x, [add, clip, mul, scale]
    return None


def fuse_decomposed_hardswish(model: Any) -> int:
    """Replace every ``x * Clip(x + 3, 0, 6) / 6`` (or ``* (1/6)``) by ``HardSwish(x)``; returns how many.

    The model must already be at opset >= 14 (:data:`HARDSWISH_OPSET`).
    """
    from onnx import helper

    fused = 0
    while True:
        graph = _Graph(model)
        found = next((match for node in model.graph.node if (match := _hardswish_chain(graph, node))), None)
        if found is None:
            return fused
        x, pieces = found
        position = min(list(model.graph.node).index(n) for n in pieces)
        for node in pieces:
            model.graph.node.remove(node)
        model.graph.node.insert(position, helper.make_node("HardSwish", [x], list(pieces[-1].output),
                                                           name=pieces[2].name or pieces[-1].name))
        fused += 1


def has_decomposed_hardswish(model: Any) -> bool:
    """True when :func:`fuse_decomposed_hardswish` would fuse something."""
    graph = _Graph(model)
    return any(_hardswish_chain(graph, node) for node in model.graph.node)


def _per_channel(value: np.ndarray, channels: int, rank: int) -> np.ndarray | None:
    """``value`` as one number per output channel, when it broadcasts that way over a rank-``rank`` Conv output
    (``N, C, spatial...``): a scalar, or ``C`` values on axis 1 and size 1 elsewhere (``(C, 1, 1)``, ``(1, C, 1, 1)``).
    A ``(C,)`` constant broadcasts over the last axis, not the channels, and is refused."""
    if value.ndim > rank:
        return None
    shape = (1,) * (rank - value.ndim) + tuple(value.shape)
    if any(size != 1 for axis, size in enumerate(shape) if axis != 1):
        return None
    if shape[1] == 1:
        return np.full(channels, float(value.reshape(-1)[0]))
    return value.reshape(-1).astype(np.float64) if shape[1] == channels else None


def _affine_after(graph: _Graph, conv: Any) -> tuple[Any, np.ndarray] | None:
    """The Mul/Div/Add/Sub by a per-channel constant that is the only reader of ``conv``'s output, and that constant."""
    weight = graph.constant(conv.input[1]) if conv.op_type == "Conv" and len(conv.input) > 1 else None
    if weight is None or (len(conv.input) > 2 and conv.input[2] and graph.constant(conv.input[2]) is None):
        return None
    follower = graph.only_consumer(conv.output[0])
    if follower is None or follower.op_type not in _AFFINE_OPS or len(follower.input) != 2:
        return None
    first = follower.input[0] == conv.output[0]
    other = follower.input[1] if first else follower.input[0]
    constant = graph.constant(other)
    if constant is None or (follower.op_type in ("Div", "Sub") and not first):
        return None
    value = _per_channel(constant.astype(np.float64), weight.shape[0], weight.ndim)
    if value is None or (follower.op_type == "Div" and np.any(value == 0)):
        return None
    return follower, value


def fold_affine_into_conv(model: Any) -> int:
    """Fold each per-channel constant Mul/Div/Add/Sub that alone reads a Conv's output into that Conv; returns how many.

    New weight and bias initializers are added (the old ones may have other readers); unread ones are dropped.
    """
    from onnx import numpy_helper

    folded = 0
    while True:
        graph = _Graph(model)
        found = next(((conv, *pair) for conv in model.graph.node if (pair := _affine_after(graph, conv))), None)
        if found is None:
            break
        conv, follower, value = found
        original = graph.constant(conv.input[1])
        assert original is not None  # _affine_after checked it
        weight = original.astype(np.float64)
        old_bias = graph.constant(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        bias = np.zeros(weight.shape[0]) if old_bias is None else old_bias.astype(np.float64)
        scale = value.reshape(-1, *([1] * (weight.ndim - 1)))
        if follower.op_type == "Mul":
            weight, bias = weight * scale, bias * value
        elif follower.op_type == "Div":
            weight, bias = weight / scale, bias / value
        else:
            bias = bias + value if follower.op_type == "Add" else bias - value
        stem = conv.name or conv.output[0]
        names = _fresh_names(model, [f"{stem}_folded_w", f"{stem}_folded_b"])
        model.graph.initializer.extend([numpy_helper.from_array(weight.astype(original.dtype), names[0]),
                                        numpy_helper.from_array(bias.astype(original.dtype), names[1])])
        conv.input[1] = names[0]
        if len(conv.input) > 2:
            conv.input[2] = names[1]
        else:
            conv.input.append(names[1])
        conv.output[0] = follower.output[0]
        model.graph.node.remove(follower)
        folded += 1
    drop_unread_initializers(model)
    return folded


def _fresh_names(model: Any, wanted: list[str]) -> list[str]:
    taken = {init.name for init in model.graph.initializer} | {v.name for v in model.graph.input}
    taken |= {name for node in model.graph.node for name in (*node.input, *node.output)}
    names = []
    for name in wanted:
        candidate, k = name, 0
        while candidate in taken:
            k += 1
            candidate = f"{name}{k}"
        taken.add(candidate)
        names.append(candidate)
    return names


def drop_unread_initializers(model: Any) -> None:
    """Remove initializers no node reads (and that are no graph output)."""
    read = {name for node in model.graph.node for name in node.input} | {v.name for v in model.graph.output}
    for init in [i for i in model.graph.initializer if i.name not in read]:
        model.graph.initializer.remove(init)
