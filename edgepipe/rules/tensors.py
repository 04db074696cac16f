"""Constraints on a node's feature maps: dtypes, integer widths, ranks, dimensions, sizes and batch."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint

#: The dtype of a resource-variable handle (TFLite's RESOURCE, type 13): a rank-0 reference, not data.
RESOURCE_DTYPES = ("resource", "type13")

#: Bits per element of the integer dtypes (a bool is stored in a byte); other dtypes are not judged here.
INTEGER_BITS = {"bool": 8, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32,
                "int64": 64, "uint64": 64}


def _fmaps(node: OpNode) -> tuple[TensorInfo, ...]:
    return (*node.activations_in, *node.outputs)


@constraint
def dtypes(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """Feature maps (non-constant inputs and outputs) have a dtype in {param}."""
    bad = [t for t in _fmaps(node) if t.dtype not in allowed and t.dtype != "unknown"]
    if bad:
        return False, f"{node.op} feature map '{bad[0].name}' is {bad[0].dtype}, not one of {', '.join(allowed)}"
    return True, "dtypes ok"


@constraint
def dtypes_not_in(node: OpNode, graph: OpGraph, refused: list[str]) -> Verdict:
    """No feature map (non-constant input or output) has a dtype in {param}."""
    bad = [t for t in _fmaps(node) if t.dtype in refused]
    if bad:
        return False, f"{node.op} feature map '{bad[0].name}' is {bad[0].dtype}"
    return True, "dtypes ok"


@constraint
def input_bits_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every non-constant integer input is at most {param} bits wide (an int64 input is 64; the output's width
    does not count).

    A wider input fails the whole compile (a cast to int64, and ops that only move int64 data, compile): do such
    integer arithmetic in int32, e.g. on int32 token ids.
    """
    wide = [t for t in node.activations_in if INTEGER_BITS.get(t.dtype, 0) > limit]
    if wide:
        return False, (f"{node.op} reads '{wide[0].name}' ({wide[0].dtype}, {INTEGER_BITS[wide[0].dtype]} bits) "
                       f"> {limit} bits")
    return True, f"integer inputs at most {limit} bits"


@constraint
def static_shapes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Every feature map has a static shape (no dynamic or unknown dimension)."""
    if not required:
        return True, "dynamic shapes allowed"
    bad = [t for t in _fmaps(node) if not t.static]
    return not bad, f"{node.op} tensor '{bad[0].name}' has dynamic shape {bad[0].shape}" if bad else "static"


@constraint
def no_scalar_feature_maps(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """No feature map (non-constant input or output) is a scalar (rank 0); a constant scalar operand and a
    resource-variable handle are fine.

    The compiler treats a rank-0 tensor it cannot read as a constant as shapeless and leaves its op on the CPU.
    """
    if not required:
        return True, "scalar feature maps allowed"
    bad = [t for t in _fmaps(node) if t.shape == () and t.dtype not in RESOURCE_DTYPES]
    return not bad, f"{node.op} feature map '{bad[0].name}' is a scalar (rank 0)" if bad else "no scalar"


@constraint
def max_rank(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Feature maps have rank at most {param}."""
    ranks = [len(t.shape) for t in _fmaps(node) if t.shape is not None]
    worst = max(ranks, default=0)
    return worst <= limit, f"{node.op} rank {worst} > {limit}" if worst > limit else f"rank {worst}"


@constraint
def max_squeezed_rank(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Feature maps have at most {param} dimensions larger than 1 (the compiler drops size-1 dimensions, so a
    (1, 2, 4, 16, 16) tensor runs as 4-D)."""
    ranks = [sum(1 for d in t.shape if d != 1) for t in _fmaps(node) if t.shape is not None]
    worst = max(ranks, default=0)
    return worst <= limit, (f"{node.op} has {worst} dimensions larger than 1 > {limit}" if worst > limit
                            else f"{worst} dimensions larger than 1")


@constraint
def max_dim(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """No feature-map dimension exceeds {param}."""
    dims = [d for t in _fmaps(node) for d in (t.shape or ()) if isinstance(d, int)]
    worst = max(dims, default=0)
    return worst <= limit, f"{node.op} dimension {worst} > {limit}" if worst > limit else "dims ok"


@constraint
def batch_one(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The batch (first) dimension of every rank-4 feature map is 1."""
    if not required:
        return True, "any batch"
    for t in _fmaps(node):
        if t.shape is not None and len(t.shape) == 4 and t.shape[0] != 1:
            return False, f"{node.op} batch {t.shape[0]} != 1 ('{t.name}')"
    return True, "batch size 1"


@constraint
def max_tensor_bytes(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every feature map fits in {param} bytes."""
    worst = max((t.size_bytes for t in _fmaps(node)), default=0)
    return worst <= limit, f"{node.op} feature map of {worst} bytes > {limit}" if worst > limit else "fits"


def _variable_data(node: OpNode, graph: OpGraph) -> list[TensorInfo]:
    """The variable's data tensors an op reads or writes (through a VAR_HANDLE: every use of the handle)."""
    if node.op == "READ_VARIABLE":
        return list(node.outputs)
    if node.op == "ASSIGN_VARIABLE":
        return list(node.inputs[1:2])
    handle = node.outputs[0].name if node.outputs else ""
    users = [graph.nodes[i] for i in graph.consumers().get(handle, [])]
    return [t for user in users if user.op in ("READ_VARIABLE", "ASSIGN_VARIABLE") for t in _variable_data(user, graph)]


@constraint
def variable_data_dtypes(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """A resource-variable op's handle is a resource tensor, and the data it reads or stores (for VAR_HANDLE:
    through the handle) has a dtype in {param}."""
    handles = node.outputs[:1] if node.op == "VAR_HANDLE" else node.inputs[:1]
    bad_handle = [t for t in handles if t.dtype not in RESOURCE_DTYPES]
    if bad_handle:
        return False, f"{node.op} handle '{bad_handle[0].name}' is {bad_handle[0].dtype}, not a resource"
    bad = [t for t in _variable_data(node, graph) if t.dtype not in allowed]
    if bad:
        return False, f"{node.op} variable data '{bad[0].name}' is {bad[0].dtype}, not one of {', '.join(allowed)}"
    return True, "variable data ok"
