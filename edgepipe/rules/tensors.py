"""Constraints on a node's tensors: dtypes, ranks, static shapes, batch, quantization parameters."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint

#: The dtype of a resource-variable handle (TFLite's RESOURCE, type 13): a rank-0 reference, not data.
RESOURCE_DTYPES = ("resource", "type13")


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
    """No feature map (non-constant input or output) has a dtype in {param}: the QNN HTP emulator runs a Cast that
    reads or writes int8, int16 or uint16 on the CPU (MarbleNet's int16 audio; probed from graph inputs and
    inside the graph), one of int32, uint8, bool or float16 on the HTP."""
    bad = [t for t in _fmaps(node) if t.dtype in refused]
    if bad:
        return False, f"{node.op} feature map '{bad[0].name}' is {bad[0].dtype}"
    return True, "dtypes ok"


@constraint
def weight_dtypes(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """Constant weights (the second input) have a dtype in {param}."""
    if len(node.inputs) < 2 or not node.inputs[1].constant:
        return True, "no constant weights"
    weight = node.inputs[1]
    return weight.dtype in allowed, f"{node.op} weights are {weight.dtype}, not one of {', '.join(allowed)}"


@constraint
def static_shapes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Every feature map has a static shape (no dynamic or unknown dimension)."""
    if not required:
        return True, "dynamic shapes allowed"
    bad = [t for t in _fmaps(node) if not t.static]
    return not bad, f"{node.op} tensor '{bad[0].name}' has dynamic shape {bad[0].shape}" if bad else "static"


@constraint
def no_scalar_feature_maps(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """No feature map (non-constant input or output) is a scalar (rank 0): the compiler treats a rank-0 tensor
    it cannot read as a constant as shapeless and leaves its op on the CPU (a constant scalar operand is
    fine, and so is a resource-variable handle, a reference rather than data)."""
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
    return True, "batch 1"


@constraint
def quantized_tensors(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Inputs, outputs and weights carry quantization parameters with positive scales."""
    if not required:
        return True, "float allowed"
    tensors = [t for t in (*node.inputs, *node.outputs) if not (t.constant and t.dtype in ("int32", "int64"))]
    missing = [t for t in tensors if t.dtype not in ("int32", "int64", "bool") and not t.quantized]
    if missing:
        return False, f"{node.op} tensor '{missing[0].name}' ({missing[0].dtype}) has no quantization parameters"
    negative = [t for t in tensors if not t.scale_positive]
    return not negative, f"{node.op} tensor '{negative[0].name}' has a scale <= 0" if negative else "quantized"


@constraint
def per_tensor_quantization(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Quantization is per tensor: no tensor has per-axis scales."""
    if not required:
        return True, "per-axis allowed"
    bad = [t for t in (*node.inputs, *node.outputs) if t.per_axis]
    return not bad, f"{node.op} tensor '{bad[0].name}' is quantized per axis" if bad else "per tensor"


@constraint
def constant_weights(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Weights and parameter tensors (every input after the first) are constant."""
    if not required:
        return True, "dynamic weights allowed"
    bad = [t for t in node.inputs[1:] if not t.constant]
    return not bad, f"{node.op} input '{bad[0].name}' is not constant" if bad else "constant"


@constraint
def same_input_shapes(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Element-wise inputs have the same shape (no broadcasting)."""
    shapes = {t.shape for t in node.activations_in if t.shape is not None}
    if not required or len(shapes) <= 1:
        return True, "shapes match"
    return False, f"{node.op} broadcasts {' vs '.join(str(s) for s in sorted(shapes, key=str))}"


@constraint
def max_tensor_bytes(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every feature map fits in {param} bytes."""
    worst = max((t.size_bytes for t in _fmaps(node)), default=0)
    return worst <= limit, f"{node.op} feature map of {worst} bytes > {limit}" if worst > limit else "fits"


@constraint
def max_squeezed_rank(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Feature maps have at most {param} dimensions larger than 1 (the compiler drops size-1 dimensions, e.g. a
    rank-5 (1, 2, 4, 16, 16) tensor runs as 4-D; rknn-toolkit2's squeeze_to_4d rewrites)."""
    ranks = [sum(1 for d in t.shape if d != 1) for t in _fmaps(node) if t.shape is not None]
    worst = max(ranks, default=0)
    return worst <= limit, (f"{node.op} has {worst} dimensions larger than 1 > {limit}" if worst > limit
                            else f"{worst} dimensions larger than 1")


@constraint
def operands_rank(node: OpNode, graph: OpGraph, rank: int) -> Verdict:
    """Every input, constants included, has rank {param} (rknn-toolkit2 2.5.0 runs a Max of 4-D tensors, or of
    one and a [1, 1, 1, 1] or per-channel constant, on the NPU, and one with a scalar, a vector or operands of
    another rank on the CPU: magika's LayerNorm Maximum(eps, variance) over [1, 256])."""
    ranks = {t.name: len(t.shape) for t in node.inputs if t.shape is not None}
    other = [name for name, r in ranks.items() if r != rank]
    if other:
        return False, f"{node.op} input '{other[0]}' has rank {ranks[other[0]]}, not {rank}"
    return True, f"rank-{rank} inputs"


@constraint
def no_broadcast_constant_minuend(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The first operand is not a constant of several elements broadcast over the output's leading axes (a [C] or
    [1, 1, C] constant minus an [N, T, C] tensor: Keras LayerNorm's beta - mean * gamma / std as tf2onnx writes it);
    rknn-toolkit2 2.5.0 runs such a Sub on RK3588's CPU, and one whose minuend is a scalar, of the output's shape,
    a per-channel [1, C, 1, 1] or a [T, 1] column constant, or not a constant, on the NPU."""
    first, out = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    if not required or first is None or out is None or not first.constant or not first.static or not out.static:
        return True, "not a constant minuend"
    core = list(first.shape or ())
    while core and core[0] == 1:
        core.pop(0)
    target = list(out.shape or ())
    leading = 1 < first.elements < out.elements and bool(core) and len(core) <= len(target) and \
        target[len(target) - len(core):] == core
    if leading:
        shape = list(first.shape or ())
        return False, f"{node.op} subtracts from constant '{first.name}' {shape} broadcast to {target}"
    return True, "minuend not broadcast over leading axes"


@constraint
def nonempty_constant_inputs(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """No constant input has zero elements: Vela 5.2.0 refuses the whole file otherwise ("Constant tensors must
    not have empty buffers"), e.g. the empty new-shape of a RESHAPE to a scalar, as PLCMOS v2's one-value output
    is written by the TFLite converter."""
    if not required:
        return True, "not required"
    written, fed = graph.producers(), graph.input_names()
    empty = [t for t in node.inputs if t.static and t.elements == 0 and
             (t.constant or (t.name not in written and t.name not in fed))]  # an empty buffer reads as no data
    if empty:
        return False, f"{node.op} reads constant '{empty[0].name}' of shape {list(empty[0].shape or ())}, no elements"
    return True, "no empty constant"


#: Ops whose output shape is the value of one of their inputs (a target shape), and that input's position.
_SHAPED_BY_INPUT = {"Expand": 1, "ConstantOfShape": 0}


def _run_time_shape_writer(node: OpNode, graph: OpGraph) -> OpNode | None:
    """The op computing at run time the target shape of an Expand or ConstantOfShape; None when it is stored."""
    position = _SHAPED_BY_INPUT.get(node.op)
    if position is None or len(node.inputs) <= position:
        return None
    writer = graph.producers().get(node.inputs[position].name)
    return None if writer is None or graph.nodes[writer].op == "Constant" else graph.nodes[writer]


@constraint
def shape_input_stored(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The target shape is stored in the model (an initializer or a Constant node), not computed at run time: ONNX
    Runtime's QNN EP sees no static output shape otherwise and leaves the op to the CPU (VoiceFilter-Lite's zero
    LSTM states expanded to a shape made from its input's Shape; probed)."""
    writer = _run_time_shape_writer(node, graph) if required else None
    if writer is None:
        return True, "shape stored"
    shape = node.inputs[_SHAPED_BY_INPUT[node.op]]
    return False, f"{node.op} shape '{shape.name}' computed at run time by {writer.op}"


@constraint
def reads_no_run_time_shape(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Reads no output of an Expand or ConstantOfShape whose target shape is computed at run time: ONNX Runtime's
    QNN EP knows no static shape for it and leaves the reader to the CPU too (VoiceFilter-Lite's and
    text2tashkeel's Slices of their zero LSTM states; an Add probed; a Concat runs on the HTP)."""
    if not required:
        return True, "not required"
    producers = graph.producers()
    for tensor in node.inputs:
        writer = graph.nodes[producers[tensor.name]] if tensor.name in producers else None
        if writer is not None and _run_time_shape_writer(writer, graph) is not None:
            return False, f"{node.op} reads '{tensor.name}', which {writer.op} shapes at run time"
    return True, "no run-time shaped input"


@constraint
def not_a_table_lookup(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Gathers from a tensor computed at run time, not rows of a constant table by run-time indices: rknn-toolkit2
    2.5.0 runs such an embedding lookup on the CPU whatever the indices' dtype (slovorez's int32 character ids;
    probed on both SoCs, as int64 ids were)."""
    if not required or len(node.inputs) < 2:
        return True, "not required"
    table, indices = node.inputs[0], node.inputs[1]
    if table.constant and not indices.constant:
        return False, f"{node.op} looks up rows of constant '{table.name}' by run-time indices '{indices.name}'"
    return True, "not a table lookup"



@constraint
def constants_not_nan(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op reads no float constant holding a NaN: rknn-toolkit2 2.5.0's quantizer computes such a constant's range
    as NaN and the build fails ("cannot convert float NaN to integer"), whatever op reads it (a Where's fill value,
    an Add's constant; an unused one is dropped; Fracast's masking of missing steps, probed on RK3588 and RK3576).
    Fix: replace the NaN by a finite value the model can tell from data (e.g. 0 with the mask kept)."""
    bad = node.attrs.get("nan_constants") or []
    if required and bad:
        return False, f"{node.op} reads constant '{bad[0]}' holding NaN (replace it by a finite value)"
    return True, "no NaN constant"


@constraint
def opset_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """The model imports ONNX opset {param} or older (rknn-toolkit2 2.5.0's loader: "Unsupport onnx opset 21, need
    <= 19"; convert it first with onnx.version_converter); judged on the first node, so the verdict names it once."""
    if graph.opset is None or graph.opset <= limit or not graph.nodes or node.index != graph.nodes[0].index:
        return True, f"opset {graph.opset}"
    return False, f"the model imports ONNX opset {graph.opset} > {limit}"


@constraint
def conv1d_explicit_pads(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A 1-D convolution (a rank-3 input) spells its padding as ``pads``, not ``auto_pad`` SAME: rknn-toolkit2 2.5.0
    rewrites it into a 2-D convolution with both, which its own ONNX Runtime then refuses ("A Conv/ConvTranspose node
    has both 'auto_pad' and 'pads' attributes"; DeepLC's CNN, probed: 1-D SAME_UPPER and SAME_LOWER fail, 1-D with
    pads or VALID and 2-D SAME_UPPER build; next step: export with explicit padding)."""
    data = node.inputs[0] if node.inputs else None
    one_d = data is not None and data.shape is not None and len(data.shape) == 3
    if not required or not one_d or node.attrs.get("padding") != "same":
        return True, "explicit or no padding" if one_d else "not a 1-D convolution"
    return False, f"{node.op} '{node.name}' is a 1-D convolution padded by auto_pad SAME"
