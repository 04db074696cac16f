"""Constraints on dense layers (a Gemm, or a MatMul with constant weights), which the Rockchip compiler runs as
1 x 1 convolutions: their output columns and the feature maps they flatten."""

from __future__ import annotations

import math
from collections.abc import Callable

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.neighbours import RESHAPES, readers_through_no_ops, static_dims, writer

#: Single-input ops the compiler fuses into the layer of the op before them (an activation into ``ConvSigmoid``).
_FUSED_AFTER = frozenset({"Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu",
                          "Identity"})
#: The largest H and W of a flattened plane that the compiler folds into a dense layer as its convolution kernel.
_DENSE_KERNEL_SIDE_MAX = 7


def fully_connected(node: OpNode) -> bool:
    """Whether ``node`` is a Gemm or a MatMul with constant weights (the compiler runs it as a 1 x 1 Conv behind a
    reshape of its own, which a reshape before it merges into)."""
    return node.op == "Gemm" or node.op == "MatMul" and len(node.inputs) == 2 and node.inputs[1].constant


def _layer_fused_into(node: OpNode, graph: OpGraph, is_layer: Callable[[OpNode], bool]) -> OpNode | None:
    """The layer ``node`` is (``is_layer``), or follows through its bias Add and the activations the compiler fuses
    into it; None otherwise."""
    current: OpNode | None = node
    for _ in range(3):
        if current is None or is_layer(current):
            break
        bias = current.op == "Add" and any(t.constant for t in current.inputs)
        if not bias and current.op not in _FUSED_AFTER:
            return None
        current = next((w for position in range(len(current.inputs)) if (w := writer(current, graph, position))),
                       None)
    return current if current is not None and is_layer(current) else None


def matmul_columns(node: OpNode, graph: OpGraph) -> tuple[OpNode, int] | None:
    """(the MatMul with constant weights that ``node`` is, or follows through its bias Add and the activations
    fused into it; its output columns) when its output has more than one row; None otherwise."""
    matmul = _layer_fused_into(node, graph, lambda n: n.op == "MatMul")
    if matmul is None or matmul.op != "MatMul" or len(matmul.inputs) < 2 or not matmul.inputs[1].constant \
            or not matmul.outputs:
        return None
    out = matmul.outputs[0]
    if not out.static or not out.shape or len(out.shape) < 2:
        return None
    columns = int(out.shape[-1] or 0)
    return (matmul, columns) if columns and out.elements // columns > 1 else None


@constraint
def matmul_columns_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """A MatMul with constant weights and more than one output row, and an op fused into it (its bias Add, an
    activation), writes at most {param} output columns.

    The compiler runs the product as a convolution and transposes it back; that transpose of more channels falls
    back to the CPU.
    """
    found = matmul_columns(node, graph)
    if found is None or found[1] <= limit:
        return True, "columns within the limit" if found else "not after a multi-row MatMul with constant weights"
    matmul, columns = found
    return False, f"MatMul '{matmul.name}' writes {columns} columns > {limit}"


@constraint
def output_columns_multiple(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Gemm, or a MatMul with constant weights, that writes a 2-D graph output writes a number of columns that is
    a multiple of {param}.

    The compiler runs either as a Conv; the Reshape back to 2-D it adds at a graph output of other widths runs on
    the CPU.
    """
    if node.op == "MatMul" and not fully_connected(node):
        return True, "a MatMul of two activations"
    names = graph.output_names()
    written = [t for t in node.outputs if t.name in names and t.shape is not None and len(t.shape) == 2]
    columns = written[0].shape[-1] if written else None  # type: ignore[index]
    if not isinstance(columns, int) or columns % multiple == 0:
        return True, "not a 2-D graph output" if columns is None else f"{columns} columns"
    return False, (f"{node.op} writes graph output '{written[0].name}' of {columns} columns, "
                   f"not a multiple of {multiple}")


@constraint
def reshaped_columns_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """A Gemm with more than one output row whose output a reshape reads writes at most {param} columns.

    The compiler runs the Gemm as a convolution; turning more channels back into rows for the reshape falls back
    to the CPU. Read by an activation instead, the Gemm stays on the NPU.
    """
    shape = static_dims(node.outputs[0].shape) if node.outputs else None
    rows = math.prod(shape[:-1]) if shape and len(shape) >= 2 else 1
    if shape is None or rows <= 1 or shape[-1] <= limit:
        return True, "one row" if rows <= 1 else f"at most {limit} columns"
    if any(r.op in RESHAPES for r in readers_through_no_ops(node, graph)):
        return False, f"{node.op} writes {shape[-1]} columns > {limit} over {rows} rows to a reshape"
    return True, "not read by a reshape"


def _flattened_plane(dense: OpNode, graph: OpGraph) -> list[int] | None:
    """The [1, C, H, W] feature map whose flatten is ``dense``'s one input row, as the compiler reshapes it: read
    through an NCHW-to-NHWC Transpose when the weights are not transposed (a Gemm without transB, a MatMul), which
    the compiler folds into the weights; None when the row is no such flatten, or a Transpose it keeps comes
    between."""
    row = static_dims(dense.inputs[0].shape) if dense.inputs else None
    flatten = writer(dense, graph, 0)
    if row is None or len(row) != 2 or row[0] != 1 or flatten is None or flatten.op not in ("Reshape", "Flatten"):
        return None
    source, shape = writer(flatten, graph, 0), static_dims(flatten.inputs[0].shape)
    if source is not None and source.op == "Transpose" and list(source.attrs.get("perm") or ()) == [0, 2, 3, 1]:
        if dense.op == "Gemm" and dense.attrs.get("transB"):
            return None
        shape = static_dims(source.inputs[0].shape)
    return shape if shape is not None and len(shape) == 4 and shape[0] == 1 else None


@constraint
def dense_plane_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A dense layer (or an op fused into it) whose input row flattens a [1, C, H, W] map reads an H x W plane of a
    multiple of {param} elements, or one whose H and W are at most 7.

    The compiler folds a plane of at most 7 x 7 into the layer as its kernel and reshapes other planes into the
    layer's input channels on the CPU. A Transpose to NHWC before the flatten counts when the compiler folds it
    into weights that are not transposed.
    """
    dense = _layer_fused_into(node, graph, fully_connected)
    plane = _flattened_plane(dense, graph) if dense is not None else None
    if dense is None or plane is None:
        return True, "no dense layer over a flattened feature map"
    height, width = plane[2], plane[3]
    if (height * width) % multiple == 0:
        return True, f"flattens an H x W plane of {height * width} elements"
    if max(height, width) <= _DENSE_KERNEL_SIDE_MAX:
        return True, f"flattens a {height} x {width} plane, folded into the layer as its kernel"
    return False, (f"{dense.op} '{dense.name}' reads a flatten of {plane}: an H x W plane of {height * width} "
                   f"elements, not a multiple of {multiple}, wider than {_DENSE_KERNEL_SIDE_MAX}")
