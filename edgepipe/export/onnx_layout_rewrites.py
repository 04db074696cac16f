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
    op_type: str
    #: Whether a node of ``op_type`` (with its attributes and input rank) is one this rewrite takes.
    takes: Callable[[Any, dict[str, Any], int], bool]
    rewrite: Callable[[Any, Any, int, int], list[Any]]
    #: True when the route is worth trying only if the conversion failed at a node of this type.
    only_at_failing_node: bool = True

    def candidates(self, model: Any) -> list[Any]:
        ranks = _ranks(model)
        return [n for n in model.graph.node if n.op_type == self.op_type
                and self.takes(model, n, ranks.get(n.input[0], 0) if n.input else 0)]

    def applies(self, model: Any, failed_at: str | None) -> bool:
        """Whether this rewrite changes ``model`` (at the node ``failed_at`` when it must)."""
        found = self.candidates(model)
        if not self.only_at_failing_node:
            return bool(found)
        return failed_at is not None and any(n.name == failed_at for n in found)

    def apply(self, model: Any) -> int:
        """Rewrite every node this rewrite takes, in place; returns how many."""
        ranks = _ranks(model)
        nodes, count = [], 0
        for index, node in enumerate(list(model.graph.node)):
            if node.op_type == self.op_type and self.takes(model, node, ranks.get(node.input[0], 0) if node.input
                                                           else 0):
                nodes += self.rewrite(model, node, ranks.get(node.input[0], 0), index)
                count += 1
            else:
                nodes.append(node)
        del model.graph.node[:]
        model.graph.node.extend(nodes)
        return count


def _ranks(model: Any) -> dict[str, int]:
    import onnx

    inferred = onnx.shape_inference.infer_shapes(model)
    return {v.name: len(v.type.tensor_type.shape.dim)
            for v in [*inferred.graph.value_info, *inferred.graph.input, *inferred.graph.output]
            if v.type.tensor_type.HasField("shape")}


def _axis(node: Any, rank: int, default: int) -> int:
    axis = int(attributes(node).get("axis", default))
    return axis % rank if rank else axis


def _to_last(axis: int, rank: int) -> list[int]:
    return [*[d for d in range(rank) if d != axis], axis]


def _inverse(perm: list[int]) -> list[int]:
    return [perm.index(d) for d in range(len(perm))]


def _softmax_takes(model: Any, node: Any, rank: int) -> bool:
    return rank >= 3 and _axis(node, rank, -1) != rank - 1


def _softmax_last_axis(model: Any, node: Any, rank: int, index: int) -> list[Any]:
    from onnx import helper

    perm = _to_last(_axis(node, rank, -1), rank)
    moved, soft = f"{node.output[0]}_axis_last_{index}", f"{node.output[0]}_softmax_last_{index}"
    return [helper.make_node("Transpose", [node.input[0]], [moved], perm=perm),
            helper.make_node(node.op_type, [moved], [soft], name=node.name, axis=-1),
            helper.make_node("Transpose", [soft], [node.output[0]], perm=_inverse(perm))]


def _concat_takes(model: Any, node: Any, rank: int) -> bool:
    return rank >= 3 and _axis(node, rank, 0) != rank - 1


def _concat_last_axis(model: Any, node: Any, rank: int, index: int) -> list[Any]:
    from onnx import helper

    perm = _to_last(_axis(node, rank, 0), rank)
    nodes, moved = [], []
    for k, name in enumerate(node.input):
        moved.append(f"{name}_axis_last_{index}_{k}")
        nodes.append(helper.make_node("Transpose", [name], [moved[-1]], perm=perm))
    joined = f"{node.output[0]}_concat_last_{index}"
    nodes.append(helper.make_node("Concat", moved, [joined], name=node.name, axis=rank - 1))
    nodes.append(helper.make_node("Transpose", [joined], [node.output[0]], perm=_inverse(perm)))
    return nodes


def _dft_takes(model: Any, node: Any, rank: int) -> bool:
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


def _dft_as_matmul(model: Any, node: Any, rank: int, index: int) -> list[Any]:
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


#: The rewrites a route may apply, by name, in the order routes try them.
REWRITES: dict[str, Rewrite] = {
    "softmax-last-axis": Rewrite("its Softmax over the last axis (transposes around it)", "Softmax", _softmax_takes,
                                 _softmax_last_axis),
    "concat-last-axis": Rewrite("its Concat on the last axis (transposes around it)", "Concat", _concat_takes,
                                _concat_last_axis),
    "dft-as-matmul": Rewrite("its DFT as a MatMul with the Fourier basis", "DFT", _dft_takes, _dft_as_matmul,
                             only_at_failing_node=False),
}
