"""Constraints on QDQ node units: where ONNX Runtime's execution providers run a DequantizeLinear or
QuantizeLinear, which join the unit of the op they feed or close."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint
from edgepipe.rules.neighbours import TRANSPOSABLE, layout_source

#: Signed integer types: the QDQ node units of some ops run on the CPU with signed activations only.
SIGNED = frozenset({"int4", "int8", "int16"})


@constraint
def signed_feeds_none_of(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Does not dequantize signed integers into one of {param}: it joins the QDQ node unit of every op it feeds,
    and such an op's unit runs on the CPU with signed activations.

    With unsigned activations the same unit runs on the accelerator.
    """
    dtype = node.inputs[0].dtype if node.inputs else None
    if dtype not in SIGNED:
        return True, f"dequantizes {dtype}"
    consumers = graph.consumers()
    for tensor in node.outputs:
        for index in consumers.get(tensor.name, []):
            user = graph.nodes[index]
            if user.op in ops:
                return False, (f"{node.op} of {dtype} feeds {user.op} '{user.name}', whose QDQ node unit runs on "
                               "the CPU with signed activations")
    return True, "feeds accelerator ops"


@constraint
def not_written_by(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Does not read the output of one of {param}: a QuantizeLinear closes the QDQ node unit of the op that
    writes its input, and runs where that unit runs.

    A DequantizeLinear of raw int8 data that such an op wrote outside any node unit, as in a dynamically quantized
    model, runs on the CPU with it.
    """
    source = _writer_among(node, graph, ops)
    if source is not None:
        return False, f"{node.op} reads the output of {source.op} '{source.name}', which runs on the CPU"
    return True, "written by an accelerator op"


def _writer_among(node: OpNode, graph: OpGraph, ops: list[str]) -> OpNode | None:
    """The node of one of ``ops`` writing a feature-map input of ``node``, if any."""
    producers = graph.producers()
    found = (graph.nodes[producers[t.name]] for t in node.activations_in if t.name in producers)
    return next((source for source in found if source.op in ops), None)


@constraint
def graph_output_after_layout_op(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Writes no graph output but a 3-D or 4-D one carried from one of {param}.

    Carried: through ops a layout transpose passes (element-wise and Q/DQ ops, a Softmax, Slice, Concat, Split or
    ReduceMean); ONNX Runtime then ends the graph with a transpose on the accelerator.
    """
    names = graph.output_names()
    hit = [t for t in node.outputs if t.name in names]
    if not hit:
        return True, "internal"
    source = layout_source(node, graph, TRANSPOSABLE)
    if source is not None and source.op in ops and hit[0].shape is not None and len(hit[0].shape) in (3, 4):
        return True, f"output follows {source.op}"
    after = f" after {source.op} '{source.name}'" if source is not None else ""
    return False, f"{node.op} writes graph output '{hit[0].name}'{after}"


@constraint
def grouped_input_not_dequantized_from(node: OpNode, graph: OpGraph, refused: list[str]) -> Verdict:
    """A grouped (depthwise) Conv does not read a feature map dequantized from {param}: ONNX Runtime's NHWC
    layout transformation for the QNN EP then fails, and the whole model with it."""
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
    """A per-channel DequantizeLinear of constant weights is not the first input of a MatMul whose other input is
    dequantized from {param}.

    Such a DequantizeLinear stays out of the MatMul's node unit and runs on the CPU.
    """
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


@constraint
def signed_not_written_by(node: OpNode, graph: OpGraph, ops: list[str]) -> Verdict:
    """Does not quantize to signed integers the output of one of {param}: it closes the writer's QDQ node unit,
    which runs on the CPU for such an op with signed activations.

    With unsigned activations the same unit runs on the accelerator.
    """
    dtype = node.outputs[0].dtype if node.outputs else None
    if dtype not in SIGNED:
        return True, f"quantizes to {dtype}"
    source = _writer_among(node, graph, ops)
    if source is not None:
        return False, (f"{node.op} to {dtype} reads the output of {source.op} '{source.name}', whose QDQ node unit "
                       "runs on the CPU with signed activations")
    return True, "written by an accelerator op"
