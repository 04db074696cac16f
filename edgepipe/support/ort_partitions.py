"""ONNX Runtime's grouping of an execution provider's nodes into partitions, and the groups the QNN EP cannot build.

ONNX Runtime hands an EP its supported nodes as groups: it walks the graph in dependency order, first every CPU
node that is ready, then every ready EP node into one group, and repeats. A node that reads only constants (a
DequantizeLinear of a weight the CPU reads) is ready from the start, so it lands in whichever group forms first,
and that group can hold nothing else. The QNN EP drops a group of one such Q/DQ node to the CPU and fails the
session on a bigger one ("Having zero graph inputs is not supported on this backend"), probed on the HTP
emulator (onnxruntime-qnn 2.7.0; tests/vendors/qnn).
"""

from __future__ import annotations

from collections import defaultdict, deque

from edgepipe.graph.opgraph import OpGraph, OpNode

QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")


#: Ops whose node unit takes a dequantized bias (input 2) only when it dequantizes int32, and a Gemm's only with
#: ``beta`` 1 (ONNX Runtime's Conv and Gemm QDQ selectors).
_INT32_BIAS_OPS = ("Conv", "ConvTranspose", "Gemm")


def _bias_refused(graph: OpGraph, node: OpNode) -> bool:
    """Whether ``node``'s dequantized bias keeps it out of a node unit: an int8 feature map added by a Gemm (ONNX
    Runtime's fusion of a MatMul and the Add of another layer's output: a surrogate model's mirrored evaluation), or a
    Gemm bias scaled by ``beta`` other than 1."""
    if node.op not in _INT32_BIAS_OPS or len(node.inputs) < 3 or not node.inputs[2].name:
        return False
    writer = graph.producers().get(node.inputs[2].name)
    bias = graph.nodes[writer] if writer is not None else None
    if bias is None or bias.op != "DequantizeLinear" or not bias.inputs:
        return False
    return bias.inputs[0].dtype != "int32" or float(node.attrs.get("beta", 1.0)) != 1.0


def forms_node_unit(graph: OpGraph, node: OpNode) -> bool:
    """Whether every feature map ``node`` reads comes from a DequantizeLinear and ONNX Runtime's selector for the
    op takes them: it forms a QDQ node unit. An op reading a float tensor of another op (a Sqrt after a ReduceMean)
    or a float graph input forms none, nor does a Gemm or Conv whose dequantized bias is not int32; the Q after it
    runs alone, and so does the DequantizeLinear of its weight."""
    producers = graph.producers()
    return not _bias_refused(graph, node) and all(
        t.name in producers and graph.nodes[producers[t.name]].op == "DequantizeLinear" for t in node.activations_in)


def is_standalone_constant_dequantize(graph: OpGraph, node: OpNode) -> bool:
    """A DequantizeLinear of a constant that no reader takes into its node unit (every reader also reads a float
    feature map: a weight-only quantized MatMul, the bias Add after it): ONNX Runtime treats it as an op of its own."""
    if node.op != "DequantizeLinear" or not node.inputs or not node.inputs[0].constant:
        return False
    consumers = graph.consumers()
    readers = [graph.nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]
    return bool(readers) and not any(forms_node_unit(graph, r) for r in readers if r.op not in QDQ_OPS)


def is_per_channel(dequantize: OpNode) -> bool:
    """Whether a DequantizeLinear has one scale per channel."""
    return len(dequantize.inputs) > 1 and dequantize.inputs[1].elements > 1


def supported_groups(graph: OpGraph, on_ep: list[bool], skipped: set[int]) -> list[list[int]]:
    """The EP's node groups in the order ONNX Runtime forms them (node indices). ``on_ep[i]``: node ``i`` is the
    EP's; ``skipped`` nodes take no part (folded away, or a weight's DequantizeLinear inside its reader's node
    unit): what they write counts as a constant."""
    producers = graph.producers()
    members = [n for n in graph.nodes if n.index not in skipped]
    after: dict[int, set[int]] = defaultdict(set)
    waiting: dict[int, int] = {}
    for node in members:
        before = {producers[t.name] for t in node.inputs
                  if t.name in producers and producers[t.name] not in skipped and producers[t.name] != node.index}
        waiting[node.index] = len(before)
        for source in before:
            after[source].add(node.index)
    ready_cpu: deque[int] = deque(n.index for n in members if not waiting[n.index] and not on_ep[n.index])
    ready_ep: deque[int] = deque(n.index for n in members if not waiting[n.index] and on_ep[n.index])

    def release(index: int) -> None:
        for reader in sorted(after[index]):
            waiting[reader] -= 1
            if not waiting[reader]:
                (ready_ep if on_ep[reader] else ready_cpu).append(reader)

    groups: list[list[int]] = []
    while ready_cpu or ready_ep:
        while ready_cpu:
            release(ready_cpu.popleft())
        group: list[int] = []
        while ready_ep:
            group.append(ready_ep.popleft())
            release(group[-1])
        if group:
            groups.append(group)
    return groups


def input_less_groups(graph: OpGraph, on_ep: list[bool], skipped: set[int]) -> list[list[int]]:
    """The EP's groups that read no graph input and no tensor written outside the group (only constants)."""
    producers = graph.producers()
    found = []
    for group in supported_groups(graph, on_ep, skipped):
        inside = set(group)
        reads = [t for i in group for t in graph.nodes[i].inputs if t.name and not t.constant]
        if all(t.name in producers and (producers[t.name] in inside or producers[t.name] in skipped) for t in reads):
            found.append(group)
    return found
