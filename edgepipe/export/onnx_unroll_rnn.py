"""ONNX LSTM, GRU and RNN nodes unrolled into the ops they are defined by, for converters that get them wrong.

onnx2tf converts recurrent ops through Keras layers, and on real models that fails or computes something else:
peephole LSTMs stop with "Dimensions must be equal", bidirectional GRUs (``linear_before_reset``) come
out with outputs far from the ONNX model's. Over a sequence of static length a recurrent op is a fixed graph of
MatMul, Add, Mul, Sigmoid and Tanh per step (the ONNX operator definitions), which every converter handles. Each
node is replaced by exactly that graph: the input projection of every step in one MatMul, then per step the
recurrent MatMul, the gates and the state update, the steps stacked with Concat. Nodes with ``sequence_lens`` not
known to be full, activations other than Sigmoid, Tanh and Relu, or shapes that are not static stay as they are.
"""

from __future__ import annotations

from typing import Any

from edgepipe.graph.onnx_edit import attributes, drop_unread_initializers

#: The recurrent ops unrolled, and their gate count: LSTM (i, o, f, c), GRU (z, r, h), RNN (one).
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
#: Activations the unrolled graph writes as one ONNX op each.
_ACTIVATIONS = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}
_DEFAULTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


class _Builder:
    """Appends nodes and constants for one recurrent node, under names derived from it."""

    def __init__(self, model: Any, base: str) -> None:
        self.model, self.base, self.count = model, base, 0
        self.nodes: list[Any] = []

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{self.base}/unrolled/{hint}_{self.count}"

    def const(self, array: Any, hint: str) -> str:
        from onnx import numpy_helper

        name = self.name(hint)
        self.model.graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _activations(node: Any, attrs: dict[str, Any], directions: int) -> list[list[str]] | None:
    """Per direction, the ONNX op of each activation (f, g, h for an LSTM), or None when one is not supported."""
    if attrs.get("activation_alpha") or attrs.get("activation_beta"):
        return None
    names = [_text(a).lower() for a in attrs.get("activations", [])]
    per = len(_DEFAULTS[node.op_type])
    if not names:
        return [list(_DEFAULTS[node.op_type]) for _ in range(directions)]
    if len(names) != per * directions or any(n not in _ACTIVATIONS for n in names):
        return None
    return [[_ACTIVATIONS[n] for n in names[d * per:(d + 1) * per]] for d in range(directions)]


def _constant(model: Any, name: str) -> Any | None:
    from onnx import numpy_helper

    for tensor in model.graph.initializer:
        if tensor.name == name:
            return numpy_helper.to_array(tensor)
    return None


def _static_shape(shapes: dict[str, list[int]], name: str) -> list[int] | None:
    shape = shapes.get(name)
    return shape if shape and all(d > 0 for d in shape) else None


def _full_lengths(model: Any, name: str, steps: int) -> bool:
    """Whether ``sequence_lens`` is absent or a constant of full lengths (every sequence runs every step)."""
    if not name:
        return True
    lengths = _constant(model, name)
    return lengths is not None and bool((lengths == steps).all())


def _direction(b: _Builder, kind: str, acts: list[str], xw: list[str], r: str, rb: str | None, h: str,
               c: str | None, p: str | None, hidden: int, clip: float | None, linear_before_reset: bool,
               reverse: bool) -> tuple[list[str], str, str | None]:
    """One direction's steps: per-step outputs H_t [batch, hidden] in time order, the last H and (LSTM) C."""
    outputs: list[str] = [""] * len(xw)
    order = range(len(xw) - 1, -1, -1) if reverse else range(len(xw))
    peep = [b.op("Slice", [p, b.const(_i64(k * hidden), "start"), b.const(_i64((k + 1) * hidden), "end"),
                           b.const(_i64(0), "axis")]) for k in range(3)] if p else None
    for t in order:
        gates_x = xw[t]
        rec = b.op("MatMul", [h, r])  # [batch, gates * hidden]
        if kind == "GRU" and linear_before_reset:
            split = _split(b, gates_x, 3, hidden)
            rsplit = _split(b, b.op("Add", [rec, rb]) if rb else rec, 3, hidden)
            z = b.op(acts[0], [b.op("Add", [split[0], rsplit[0]])])
            rr = b.op(acts[0], [b.op("Add", [split[1], rsplit[1]])])
            cand = b.op(acts[1], [b.op("Add", [split[2], b.op("Mul", [rr, rsplit[2]])])])
            h = _gru_update(b, z, cand, h)
        elif kind == "GRU":
            split = _split(b, gates_x, 3, hidden)
            rsplit = _split(b, b.op("Add", [rec, rb]) if rb else rec, 3, hidden)
            z = b.op(acts[0], [b.op("Add", [split[0], rsplit[0]])])
            rr = b.op(acts[0], [b.op("Add", [split[1], rsplit[1]])])
            rh = b.op("MatMul", [b.op("Mul", [rr, h]), b.op("Slice", [r, b.const(_i64(2 * hidden), "start"),
                                                                      b.const(_i64(3 * hidden), "end"),
                                                                      b.const(_i64(1), "axis")])])
            pre = b.op("Add", [split[2], rh])
            if rb:
                pre = b.op("Add", [pre, b.op("Slice", [rb, b.const(_i64(2 * hidden), "start"),
                                                       b.const(_i64(3 * hidden), "end"), b.const(_i64(-1), "axis")])])
            cand = b.op(acts[1], [pre])
            h = _gru_update(b, z, cand, h)
        else:
            total = b.op("Add", [gates_x, rec])
            if rb:
                total = b.op("Add", [total, rb])
            if clip is not None:
                total = b.op("Clip", [total, b.const(_f32(-clip), "low"), b.const(_f32(clip), "high")])
            if kind == "RNN":
                h = b.op(acts[0], [total])
            else:
                i, o, f, g = _split(b, total, 4, hidden)
                assert c is not None
                if peep:
                    i = b.op("Add", [i, b.op("Mul", [peep[0], c])])
                    f = b.op("Add", [f, b.op("Mul", [peep[2], c])])
                i, f, g = b.op(acts[0], [i]), b.op(acts[0], [f]), b.op(acts[1], [g])
                c = b.op("Add", [b.op("Mul", [f, c]), b.op("Mul", [i, g])])
                if peep:
                    o = b.op("Add", [o, b.op("Mul", [peep[1], c])])
                h = b.op("Mul", [b.op(acts[0], [o]), b.op(acts[2], [c])])
        outputs[t] = h
    return outputs, h, c


def _gru_update(b: _Builder, z: str, cand: str, h: str) -> str:
    """H = (1 - z) * candidate + z * H_prev."""
    import numpy as np

    keep = b.op("Sub", [b.const(np.array(1.0, np.float32), "one"), z])
    return b.op("Add", [b.op("Mul", [keep, cand]), b.op("Mul", [z, h])])


def _split(b: _Builder, tensor: str, parts: int, hidden: int) -> list[str]:
    """The ``parts`` gate blocks of width ``hidden`` along the last axis."""
    return [b.op("Slice", [tensor, b.const(_i64(k * hidden), "start"), b.const(_i64((k + 1) * hidden), "end"),
                           b.const(_i64(-1), "axis")]) for k in range(parts)]


def _i64(value: int) -> Any:
    import numpy as np

    return np.array([value], np.int64)


def _f32(value: float) -> Any:
    import numpy as np

    return np.array(value, np.float32)


def _unroll(model: Any, node: Any, shapes: dict[str, list[int]]) -> list[Any] | None:
    """The nodes replacing ``node``, or None when it stays (see the module docstring)."""
    import numpy as np

    attrs = attributes(node)
    kind, layout = node.op_type, int(attrs.get("layout", 0))
    inputs = list(node.input) + [""] * (8 - len(node.input))
    x_shape = _static_shape(shapes, inputs[0])
    weights = [_constant(model, inputs[k]) if inputs[k] else None for k in (1, 2, 3)]
    if x_shape is None or len(x_shape) != 3 or weights[0] is None or weights[1] is None or \
            (inputs[3] and weights[2] is None) or attrs.get("input_forget", 0):
        return None
    steps, batch = (x_shape[1], x_shape[0]) if layout else (x_shape[0], x_shape[1])
    directions = 2 if _text(attrs.get("direction", "forward")) == "bidirectional" else 1
    acts = _activations(node, attrs, directions)
    if acts is None or not _full_lengths(model, inputs[4], steps):
        return None
    hidden, gates = int(attrs["hidden_size"]), GATES[kind]
    peepholes = _constant(model, inputs[7]) if kind == "LSTM" and inputs[7] else None
    if kind == "LSTM" and inputs[7] and peepholes is None:
        return None
    clip = float(attrs["clip"]) if "clip" in attrs else None
    if clip is not None and kind != "LSTM" and kind != "RNN":
        return None
    b = _Builder(model, node.name or node.output[0])
    x = inputs[0] if not layout else b.op("Transpose", [inputs[0]], perm=[1, 0, 2])  # [steps, batch, in]
    reverse_only = _text(attrs.get("direction", "forward")) == "reverse"
    results = []
    for d in range(directions):
        w, r = weights[0][d].astype(np.float32), weights[1][d].astype(np.float32)  # [G * H, in], [G * H, H]
        bias = weights[2][d] if weights[2] is not None else np.zeros(2 * gates * hidden, np.float32)
        wb, rb = bias[:gates * hidden], bias[gates * hidden:]
        gru_split_rb = kind == "GRU"
        projected = b.op("Add", [b.op("MatMul", [x, b.const(w.T.copy(), "w")]),
                                 b.const((wb if gru_split_rb else wb + rb).astype(np.float32), "bias")])
        xw = [b.op("Squeeze", [b.op("Slice", [projected, b.const(_i64(t), "start"), b.const(_i64(t + 1), "end"),
                                              b.const(_i64(0), "axis")]), b.const(_i64(0), "axis")])
              for t in range(steps)]
        h0 = _state(b, model, inputs[5], d, layout, batch, hidden)
        c0 = _state(b, model, inputs[6], d, layout, batch, hidden) if kind == "LSTM" else None
        p = b.const(peepholes[d].astype(np.float32), "peepholes") if peepholes is not None else None
        rt = b.const(r.T.copy(), "r")
        rbias = b.const(rb.astype(np.float32), "rbias") if gru_split_rb and weights[2] is not None else None
        results.append(_direction(b, kind, acts[d], xw, rt, rbias, h0, c0, p, hidden, clip,
                                  bool(attrs.get("linear_before_reset", 0)), reverse_only or d == 1))
    _outputs(b, node, results, layout)
    return b.nodes


def _state(b: _Builder, model: Any, name: str, direction: int, layout: int, batch: int, hidden: int) -> str:
    """The initial state of one direction as [batch, hidden]: the input's slice, or zeros."""
    import numpy as np

    if not name:
        return b.const(np.zeros((batch, hidden), np.float32), "zero_state")
    axis = 1 if layout else 0
    picked = b.op("Gather", [name, b.const(np.array(direction, np.int64), "direction")], axis=axis)
    return picked


def _outputs(b: _Builder, node: Any, results: list[tuple[list[str], str, str | None]], layout: int) -> None:
    """Write Y, Y_h and Y_c under the node's output names in the layout it declares."""
    outputs = list(node.output) + [""] * (3 - len(node.output))
    axis0 = b.const(_i64(0), "axis")
    if outputs[0]:
        per_direction = []
        for steps, _, _ in results:  # [steps, batch, hidden], then [steps, 1, batch, hidden]: the 4-D tensor once
            stacked = b.op("Concat", [b.op("Unsqueeze", [s, axis0]) for s in steps], axis=0)
            per_direction.append(stacked)
        # when every reader squeezes the direction axis away, they read the 3-D steps and Y is not written
        if not (len(per_direction) == 1 and not layout and _squeeze_direction(b, outputs[0], per_direction[0], 1, 4)):
            four = [b.op("Unsqueeze", [t, b.const(_i64(1), "axis")]) for t in per_direction]
            y = b.op("Concat", four, axis=1) if len(four) > 1 else four[0]
            b.nodes.append(_identity(b.op("Transpose", [y], perm=[2, 0, 1, 3]) if layout else y, outputs[0]))
    for k in (1, 2):
        last = [str(r[1]) if k == 1 else r[2] for r in results]  # each direction's final H (or C)
        if not outputs[k] or None in last:
            continue
        if len(last) == 1 and not layout and _squeeze_direction(b, outputs[k], str(last[0]), 0, 3):
            continue
        finals = [b.op("Unsqueeze", [str(state), axis0]) for state in last]
        state = b.op("Concat", finals, axis=0) if len(finals) > 1 else finals[0]  # [directions, batch, hidden]
        b.nodes.append(_identity(b.op("Transpose", [state], perm=[1, 0, 2]) if layout else state, outputs[k]))


def _squeeze_direction(b: _Builder, y: str, steps: str, axis: int, rank: int) -> bool:
    """Point every reader of the one-direction output ``y`` (Y [steps, 1, batch, hidden]: ``axis`` 1 of ``rank`` 4;
    Y_h or Y_c [1, batch, hidden]: 0 of 3) at ``steps``, the same without that axis, when each is a Squeeze of
    constant axes that include it; False (nothing changed) when another op or a graph output reads ``y``.
    Converters that take every 4-D tensor for an NCHW image and every 3-D one for NCW (onnx2tf) then see none."""
    graph = b.model.graph
    if any(o.name == y for o in graph.output):
        return False
    readers = [n for n in graph.node if y in n.input]
    plans = []
    for reader in readers:
        axes = _constant(b.model, reader.input[1]) if reader.op_type == "Squeeze" and len(reader.input) > 1 else None
        if axes is None:
            return False
        normal = sorted({int(a) % rank for a in axes.ravel()})
        if axis not in normal:
            return False
        plans.append((reader, [a - 1 if a > axis else a for a in normal if a != axis]))
    if not readers:
        return False
    for reader, rest in plans:
        if rest:
            reader.input[0], reader.input[1] = steps, b.const(_i64_list(rest), "axes")
        else:
            reader.op_type = "Identity"
            del reader.input[1:]
            reader.input[0] = steps
    return True


def _i64_list(values: list[int]) -> Any:
    import numpy as np

    return np.array(values, np.int64)


def _identity(source: str, target: str) -> Any:
    from onnx import helper

    return helper.make_node("Identity", [source], [target], name=f"{target}/unrolled")


def unroll_recurrent(model: Any) -> int:
    """Unroll ``model``'s (an ``onnx.ModelProto``, changed in place, opset 13 or later) recurrent nodes as the module
    says; returns how many were unrolled."""
    import onnx

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13:  # Slice, Squeeze and Unsqueeze take their axes as inputs from opset 13
        return 0
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value if d.HasField("dim_value") else 0 for d in v.type.tensor_type.shape.dim]
              for v in (*inferred.graph.value_info, *inferred.graph.input)}
    nodes, unrolled = [], 0
    for node in model.graph.node:
        replacement = _unroll(model, node, shapes) if node.op_type in GATES and node.domain in ("", "ai.onnx") \
            else None
        if replacement is None:
            nodes.append(node)
        else:
            nodes.extend(replacement)
            unrolled += 1
    if unrolled:
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        drop_unread_initializers(model)
    return unrolled


def has_recurrent(model: Any) -> bool:
    """Whether ``model``'s main graph has an LSTM, GRU or RNN node of the default domain."""
    return any(node.op_type in GATES and node.domain in ("", "ai.onnx") for node in model.graph.node)
