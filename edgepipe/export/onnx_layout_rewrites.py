"""Graph rewrites a conversion route applies before onnx2tf where its conversion of the original fails: each
computes exactly what the nodes it replaces compute (ONNX Runtime gives the same outputs), in ops onnx2tf converts.

- ``softmax-last-axis``: a Softmax over another axis than the last of a rank-3+ tensor (a classifier head's
  Softmax over the channels of a (1, C, 1, 1) map) becomes Transpose -> Softmax(last axis) -> Transpose: onnx2tf
  moves the channel axis of feature maps last and got the Softmax's axis wrong ("tf.nn.softmax" errors).
- ``concat-last-axis``: a Concat of rank-3+ tensors on another axis than the last (a detection head joining its
  box and class maps) likewise becomes Transposes around a Concat on the last axis (onnx2tf's "tf.concat" errors
  come from inputs it laid out differently).
- ``dft-as-matmul``: a real, one-sided ``DFT`` over axis 1 of a ``[batch, n, 1]`` signal becomes a MatMul with
  its cosine and sine basis (onnx2tf has no DFT).
- ``constant-full-rank``: the constant operand of an elementwise binary op (``Add``, ``Sub``, ``Mul``, ``Div``,
  ``Pow``) whose rank is below its rank-3+ partner's is stored at the partner's rank, ones prepended (what ONNX's
  broadcasting does anyway): onnx2tf transposes the feature map to channels-last and then fails to lay out a
  lower-rank constant beside it ("axes don't match array" at a TF LayerNorm's ``beta - mean * gamma``).
- ``constant-minus-as-add``: ``Sub(c, x)`` of a value known before the model runs (an anchor grid computed from
  shapes) and a rank-3+ feature map becomes ``Add(c, Mul(x, -1))``, the same IEEE arithmetic: onnx2tf lays out the
  constant operand of a Sub as if it came second. Tried only after a failure that names no node.

Each rewrite is a :class:`Rewrite`: what the report says, whether it applies to a model (and to the node a
conversion failed at), and the function that rewrites the model in place and returns how many nodes it rewrote.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from edgepipe.graph.onnx_edit import attributes, constant_values


@dataclass(frozen=True)
class Rewrite:
    """A graph rewrite of one op type, exact in what it computes."""

    says: str
    op_types: tuple[str, ...]
    #: Whether a node of one of ``op_types`` (with its attributes and its inputs' ranks) is one this rewrite takes.
    takes: Callable[[Any, Any, dict[str, int]], bool]
    #: The nodes that replace one it takes: (model, node, every tensor's rank, the node's index) -> nodes.
    rewrite: Callable[[Any, Any, dict[str, int], int], list[Any]]
    #: When the route is worth trying: "failing-node" (the conversion failed at a node this rewrite takes),
    #: "always" (the model has a node it takes), "unnamed" (it has one, and the failure named no node: the
    #: conversion ran and computed something else, or failed without saying where).
    when: str = "failing-node"

    def candidates(self, model: Any) -> list[Any]:
        ranks = _ranks(model)
        return [n for n in model.graph.node if n.op_type in self.op_types and self.takes(model, n, ranks)]

    def applies(self, model: Any, failed_at: str | None) -> bool:
        """Whether this rewrite changes ``model`` (at the node ``failed_at`` when it must)."""
        found = self.candidates(model)
        if self.when == "always":
            return bool(found)
        if self.when == "unnamed":
            return failed_at is None and bool(found)
        return failed_at is not None and any(n.name == failed_at for n in found)

    def apply(self, model: Any) -> int:
        """Rewrite every node this rewrite takes, in place; returns how many."""
        ranks = _ranks(model)
        nodes, count = [], 0
        for index, node in enumerate(list(model.graph.node)):
            if node.op_type in self.op_types and self.takes(model, node, ranks):
                nodes += self.rewrite(model, node, ranks, index)
                count += 1
            else:
                nodes.append(node)
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        return count


def _ranks(model: Any) -> dict[str, int]:
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    found = {v.name: len(v.type.tensor_type.shape.dim)
             for v in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
             if v.type.tensor_type.HasField("shape")}
    return found | {init.name: len(init.dims) for init in model.graph.initializer}


def _input_rank(node: Any, ranks: dict[str, int]) -> int:
    return ranks.get(node.input[0], 0) if node.input else 0


def _axis(node: Any, rank: int, default: int) -> int:
    axis = int(attributes(node).get("axis", default))
    return axis % rank if rank else axis


def _to_last(axis: int, rank: int) -> list[int]:
    return [*[d for d in range(rank) if d != axis], axis]


def _inverse(perm: list[int]) -> list[int]:
    return [perm.index(d) for d in range(len(perm))]


def _softmax_takes(model: Any, node: Any, ranks: dict[str, int]) -> bool:
    rank = _input_rank(node, ranks)
    return rank >= 3 and _axis(node, rank, -1) != rank - 1


def _softmax_last_axis(model: Any, node: Any, ranks: dict[str, int], index: int) -> list[Any]:
    from onnx import helper

    rank = _input_rank(node, ranks)
    perm = _to_last(_axis(node, rank, -1), rank)
    moved, soft = f"{node.output[0]}_axis_last_{index}", f"{node.output[0]}_softmax_last_{index}"
    return [helper.make_node("Transpose", [node.input[0]], [moved], perm=perm),
            helper.make_node(node.op_type, [moved], [soft], name=node.name, axis=-1),
            helper.make_node("Transpose", [soft], [node.output[0]], perm=_inverse(perm))]


def _concat_takes(model: Any, node: Any, ranks: dict[str, int]) -> bool:
    rank = _input_rank(node, ranks)
    return rank >= 3 and _axis(node, rank, 0) != rank - 1


def _concat_last_axis(model: Any, node: Any, ranks: dict[str, int], index: int) -> list[Any]:
    from onnx import helper

    rank = _input_rank(node, ranks)
    perm = _to_last(_axis(node, rank, 0), rank)
    nodes, moved = [], []
    for k, name in enumerate(node.input):
        moved.append(f"{name}_axis_last_{index}_{k}")
        nodes.append(helper.make_node("Transpose", [name], [moved[-1]], perm=perm))
    joined = f"{node.output[0]}_concat_last_{index}"
    nodes.append(helper.make_node("Concat", moved, [joined], name=node.name, axis=rank - 1))
    nodes.append(helper.make_node("Transpose", [joined], [node.output[0]], perm=_inverse(perm)))
    return nodes


def _dft_takes(model: Any, node: Any, ranks: dict[str, int]) -> bool:
    rank = _input_rank(node, ranks)
    found = attributes(node)
    if rank != 3 or found.get("inverse", 0) or not found.get("onesided", 0) or int(found.get("axis", 1)) != 1:
        return False
    length = constant_values(model).get(node.input[1]) if len(node.input) > 1 and node.input[1] else None
    shape = _shape(model, node.input[0])
    return shape is not None and shape[2] == 1 and isinstance(shape[1], int) and shape[1] > 0 and (
        length is None or int(np.asarray(length).ravel()[0]) == shape[1])


def _shape(model: Any, name: str) -> list[int | str] | None:
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    for value in [*inferred.graph.value_info, *inferred.graph.input]:
        if value.name == name:
            return [d.dim_value if d.HasField("dim_value") else d.dim_param for d in value.type.tensor_type.shape.dim]
    return None


def _dft_as_matmul(model: Any, node: Any, ranks: dict[str, int], index: int) -> list[Any]:
    """``[B, n, 1] -> [B, n//2 + 1, 2]``: Reshape to ``[B, n]``, MatMul with ``[cos | -sin]``, Reshape back."""
    from onnx import helper, numpy_helper

    shape = _shape(model, node.input[0])
    assert shape is not None and isinstance(shape[1], int)
    n = shape[1]
    bins = n // 2 + 1
    angle = 2.0 * np.pi * np.outer(np.arange(n), np.arange(bins)) / n
    basis = np.stack([np.cos(angle), -np.sin(angle)], axis=-1).reshape(n, 2 * bins).astype(np.float32)
    names = {k: f"{node.output[0]}_dft_{k}_{index}" for k in ("basis", "flat", "flat_shape", "product", "shape")}
    model.graph.initializer.extend([numpy_helper.from_array(basis, names["basis"]),
                                    numpy_helper.from_array(np.array([0, n], np.int64), names["flat_shape"]),
                                    numpy_helper.from_array(np.array([0, bins, 2], np.int64), names["shape"])])
    return [helper.make_node("Reshape", [node.input[0], names["flat_shape"]], [names["flat"]]),
            helper.make_node("MatMul", [names["flat"], names["basis"]], [names["product"]], name=node.name),
            helper.make_node("Reshape", [names["product"], names["shape"]], [node.output[0]])]


_BINARY = ("Add", "Sub", "Mul", "Div", "Pow")


def _low_rank_constant(model: Any, node: Any, ranks: dict[str, int]) -> int | None:
    """The index of ``node``'s initializer operand whose rank is below its rank-3+ partner's, else None."""
    if len(node.input) != 2:
        return None
    initializers = {init.name for init in model.graph.initializer}
    for k in (0, 1):
        constant, partner = node.input[k], node.input[1 - k]
        if constant in initializers and partner not in initializers and ranks.get(partner, 0) >= 3 \
                and ranks[constant] < ranks[partner]:
            return k
    return None


def _constant_rank_takes(model: Any, node: Any, ranks: dict[str, int]) -> bool:
    return _low_rank_constant(model, node, ranks) is not None


def _constant_full_rank(model: Any, node: Any, ranks: dict[str, int], index: int) -> list[Any]:
    """``node`` reading a copy of its low-rank constant stored at its partner's rank (leading ones)."""
    from onnx import numpy_helper

    k = _low_rank_constant(model, node, ranks)
    assert k is not None
    name, full = node.input[k], ranks[node.input[1 - k]]
    value = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == name))
    widened = f"{name}_rank{full}_{index}"
    model.graph.initializer.append(numpy_helper.from_array(value.reshape((1,) * (full - value.ndim) + value.shape),
                                                           widened))
    node.input[k] = widened
    return [node]


def _data_dependent(model: Any) -> set[str]:
    """The tensors whose values depend on the model's input data: a Shape or Size of a feature map does not (its
    value is known once the input shapes are), nor does what is computed from those and constants alone."""
    found = {value.name for value in model.graph.input}
    for node in model.graph.node:
        if node.op_type not in ("Shape", "Size") and any(name in found for name in node.input):
            found.update(node.output)
    return found


def _minus_takes(model: Any, node: Any, ranks: dict[str, int]) -> bool:
    if len(node.input) != 2:
        return False
    dependent = _data_dependent(model)
    constant, feature_map = node.input
    return constant not in dependent and feature_map in dependent and ranks.get(feature_map, 0) >= 3


def _minus_as_add(model: Any, node: Any, ranks: dict[str, int], index: int) -> list[Any]:
    """``c - x`` as ``c + x * -1``: IEEE subtraction is the addition of the negation, and a product with -1 only
    flips the sign, so the values are the same. A Mul, not a Neg: NPUs run a Mul by a constant (Vela places NEG on
    the CPU)."""
    from onnx import TensorProto, helper, numpy_helper

    from edgepipe.graph.onnx_types import tensor_types

    elem = tensor_types(model).get(node.input[1], (TensorProto.FLOAT, None))[0] or TensorProto.FLOAT
    minus_one, negated = f"{node.name or node.output[0]}_minus_one_{index}", f"{node.input[1]}_negated_{index}"
    dtype = helper.tensor_dtype_to_np_dtype(elem)
    model.graph.initializer.append(numpy_helper.from_array(np.array(-1, dtype), minus_one))
    return [helper.make_node("Mul", [node.input[1], minus_one], [negated], name=f"{node.name}_negation"),
            helper.make_node("Add", [node.input[0], negated], list(node.output), name=node.name)]


#: The rewrites a route may apply, by name, in the order routes try them.
REWRITES: dict[str, Rewrite] = {
    "softmax-last-axis": Rewrite("its Softmax over the last axis (transposes around it)", ("Softmax",),
                                 _softmax_takes, _softmax_last_axis),
    "concat-last-axis": Rewrite("its Concat on the last axis (transposes around it)", ("Concat",), _concat_takes,
                                _concat_last_axis),
    "dft-as-matmul": Rewrite("its DFT as a MatMul with the Fourier basis", ("DFT",), _dft_takes, _dft_as_matmul,
                             when="always"),
    "constant-full-rank": Rewrite("its elementwise constants at their partner's rank", _BINARY,
                                  _constant_rank_takes, _constant_full_rank),
    "constant-minus-as-add": Rewrite("its constant-minus-feature-map Subs as Adds of a negation", ("Sub",),
                                     _minus_takes, _minus_as_add, when="unnamed"),
}
