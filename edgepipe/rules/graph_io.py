"""Constraints on the model as a whole and on its boundary: the opset, and nodes that read graph inputs or write
graph outputs."""

from __future__ import annotations

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import Verdict, constraint


@constraint
def opset_max(node: OpNode, graph: OpGraph, limit: int) -> Verdict:
    """The model imports ONNX opset {param} or older (convert it first with onnx.version_converter).

    Judged on the first node, so the verdict names it once.
    """
    if graph.opset is None or graph.opset <= limit or not graph.nodes or node.index != graph.nodes[0].index:
        return True, f"opset {graph.opset}"
    return False, f"the model imports ONNX opset {graph.opset} > {limit}"


@constraint
def not_graph_output(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Does not write a graph output (the runtime does that step on the host)."""
    names = graph.output_names()
    hit = [t.name for t in node.outputs if t.name in names]
    bad = required and bool(hit)
    return not bad, f"{node.op} writes graph output '{hit[0]}'" if bad else "internal"


@constraint
def not_graph_input(node: OpNode, graph: OpGraph, required: bool) -> Verdict:
    """Does not read a graph input, directly or through a Transpose (the runtime does that step on the host).

    ONNX Runtime's layout transformation cancels a Transpose of a graph input against the one it inserts, so the
    op after that Transpose reads the graph input.
    """
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
    """The op reads no graph input of type {param}: the compiler refuses such a model input, even when a Cast
    makes it float at once."""
    names = graph.input_names()
    hit = [t for t in node.inputs if t.name in names and t.dtype in refused]
    if hit:
        return False, f"{node.op} reads graph input '{hit[0].name}' of type {hit[0].dtype}"
    return True, "no such input"
