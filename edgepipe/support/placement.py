"""Per-node placement: run each op's constraints from the target profile, then apply partition semantics."""

from __future__ import annotations

from typing import Any

from edgepipe.graph.opgraph import OpGraph, OpNode
from edgepipe.rules import load_constraints
from edgepipe.rules.neighbours import accelerator_layout_source
from edgepipe.support.ort_partitions import (
    QDQ_OPS,
    forms_node_unit,
    input_less_groups,
    is_per_channel,
    is_standalone_constant_dequantize,
)
from edgepipe.support.report import FailedConstraint, NodeVerdict, Partition
from edgepipe.targets.profile import OpTable

NOT_LISTED = "op_listed"


def rules_for(table: OpTable, op: str) -> dict[str, Any] | None:
    """The constraints that apply to ``op`` (generic merged with the op's own), or None if it is not listed."""
    if op not in table.ops:
        return None
    own = table.ops[op]
    skipped = set(own.get("skip", ()))
    merged = {k: v for k, v in table.generic.items() if k not in skipped}
    merged.update({k: v for k, v in own.items() if k != "skip"})
    return merged


def evaluate_node(node: OpNode, graph: OpGraph, table: OpTable) -> list[FailedConstraint]:
    """Every constraint ``node`` fails on this table (empty: it runs on the accelerator)."""
    if table.all_ops:
        return []
    rules = rules_for(table, node.op)
    if rules is None:
        return [FailedConstraint(constraint=NOT_LISTED, rule="The op is in the accelerator's op table.",
                                 detail=f"{node.op} is not supported by the accelerator")]
    known = load_constraints()
    failed = []
    for name, param in rules.items():
        if param is False:
            continue
        check = known[name]
        ok, detail = check(node, graph, param)
        if not ok:
            failed.append(FailedConstraint(constraint=name, rule=check.rule(param), detail=detail))
    return failed


def _quantized_writer(graph: OpGraph, dequantize: OpNode, producers: dict[str, int]) -> str | None:
    """The op type that wrote the float tensor ``dequantize`` reads back through its QuantizeLinear, if any."""
    quantize = producers.get(dequantize.inputs[0].name)
    if quantize is None or graph.nodes[quantize].op != "QuantizeLinear" or not graph.nodes[quantize].inputs:
        return None
    writer = producers.get(graph.nodes[quantize].inputs[0].name)
    return None if writer is None else graph.nodes[writer].op


def _qdq_units(graph: OpGraph, table: OpTable, failed: list[list[FailedConstraint]]) -> None:
    """Weight dequantization runs where the ops reading the weights run (ONNX Runtime's QDQ node units).

    A DequantizeLinear of constant data goes to the CPU when every node reading it does. A QuantizeLinear
    that quantizes the output of an op running on the CPU runs there too when that op reads only dequantized
    feature maps (it closes that op's node unit; observed on the QNN HTP emulator for a BatchNormalization with
    int32 parameters). The DequantizeLinear of a feature map such an op reads joins it on the CPU when the
    quantized tensor was written by one of ``table.qdq_unit_inputs_after`` (the HTP emulator: after a Reshape,
    Flatten, Transpose or Unsqueeze, not after a Squeeze, Add, Mul, MaxPool, Relu, Sigmoid, Slice, Concat or
    Resize), also when other nodes read it (ONNX Runtime gives the unit its own copy), or when the op's unit is
    refused for its rank. An op the accelerator does not list at all (Erf) forms no
    node unit, and the Q after it runs standalone. Other Q/DQ of feature maps are ops of their own (the QNN
    HTP runs them standalone) and keep their own verdict.
    """
    consumers, producers = graph.consumers(), graph.producers()
    closed: dict[int, OpNode] = {}  # ops whose node unit runs on the CPU, by index
    for node in graph.nodes:
        writer = graph.nodes[producers[node.inputs[0].name]] if (
            node.op == "QuantizeLinear" and node.inputs and node.inputs[0].name in producers) else None
        owner = _unit_owner(graph, writer) if writer is not None else None
        activation: OpNode | None = None
        if owner is not None:  # the Q closes the unit of the op before the activation that writes its input
            activation, writer = writer, owner
        closes = writer is not None and writer.op not in QDQ_OPS and \
            any(f.constraint != NOT_LISTED for f in failed[writer.index])
        if closes and writer is not None and not failed[node.index] and forms_node_unit(graph, writer):
            failed[node.index] = [FailedConstraint(
                constraint="qdq_node_unit", rule="Output quantization runs where the op it closes runs.",
                detail=f"{node.op} closes the node unit of {writer.op} '{writer.name}', which runs on the CPU")]
            if activation is not None and not failed[activation.index]:
                failed[activation.index] = [FailedConstraint(
                    constraint="qdq_node_unit", rule="An activation between an op and its output quantization "
                                                     "runs where the op runs.",
                    detail=f"{activation.op} is part of the node unit of {writer.op} '{writer.name}' (between it "
                           "and its QuantizeLinear), which runs on the CPU")]
            closed[writer.index] = writer
    for node in graph.nodes:
        if failed[node.index] or node.op != "DequantizeLinear" or not node.inputs or node.inputs[0].constant:
            continue
        unit = next((closed[i] for t in node.outputs for i in consumers.get(t.name, []) if i in closed), None)
        if _quantized_writer(graph, node, producers) not in table.qdq_unit_inputs_after and not (
                unit is not None and _unit_refused_for_rank(unit, failed[unit.index])) and not (
                unit is not None and table.qdq_unit_inputs_layout_ops
                and not _after_accelerator_layout_op(graph, node, table, failed)):
            continue
        if unit is not None:
            failed[node.index] = [FailedConstraint(
                constraint="qdq_node_unit", rule="Input dequantization runs where the op it opens runs.",
                detail=f"{node.op} opens the node unit of {unit.op} '{unit.name}', which runs on the CPU")]
    for node in graph.nodes:
        if failed[node.index] or node.op != "DequantizeLinear" or not (node.inputs and node.inputs[0].constant):
            continue
        users = [graph.nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]
        if table.standalone_constant_dequantize and is_standalone_constant_dequantize(graph, node):
            if is_per_channel(node):
                failed[node.index] = [FailedConstraint(
                    constraint="standalone_constant_dequantize",
                    rule="A DequantizeLinear no node unit takes runs on its own: per-tensor on the accelerator, "
                         "per-channel on the CPU.",
                    detail=f"{node.op} of a per-channel weight that {users[0].op} '{users[0].name}' reads outside "
                           "any node unit: the EP runs no standalone per-channel dequantization")]
            continue
        if not users or not all(failed[u.index] for u in users):
            continue
        failed[node.index] = [FailedConstraint(
            constraint="qdq_node_unit", rule="Weight dequantization runs where the ops reading it run.",
            detail=f"{node.op} follows {users[0].op} '{users[0].name}' onto the CPU")]


def _after_accelerator_layout_op(graph: OpGraph, dequantize: OpNode, table: OpTable,
                                 failed: list[list[FailedConstraint]]) -> bool:
    """Whether the tensor ``dequantize`` reads comes, through ops a layout transpose passes, from one of
    ``table.qdq_unit_inputs_layout_ops`` running on the accelerator (its NHWC transpose then stands between the
    DequantizeLinear and the CPU op reading it, which keeps the DequantizeLinear out of that op's node unit)."""
    source = accelerator_layout_source(dequantize, graph)
    return source is not None and source.op in table.qdq_unit_inputs_layout_ops and not failed[source.index]


#: Activations ONNX Runtime keeps inside the node unit of the op before them when they stand between it and its
#: QuantizeLinear (a Neg the quantizer left float, then a Relu, then the Q: tf2onnx's PReLU; HTP emulator).
_UNIT_ACTIVATIONS = ("Relu", "Clip")


def _unit_owner(graph: OpGraph, activation: OpNode) -> OpNode | None:
    """The op whose node unit ``activation`` belongs to: the non-Q/DQ op writing its input, when ``activation`` is
    one of :data:`_UNIT_ACTIVATIONS` and only the QuantizeLinear reads it; None otherwise."""
    if activation.op not in _UNIT_ACTIVATIONS or not activation.activations_in:
        return None
    consumers, producers = graph.consumers(), graph.producers()
    if len([i for t in activation.outputs for i in consumers.get(t.name, [])]) != 1:
        return None
    source = activation.activations_in[0].name
    op = graph.nodes[producers[source]] if source in producers else None
    return op if op is not None and op.op not in QDQ_OPS else None


#: Ops whose Q/DQ ONNX Runtime drops rather than grouping into a node unit (its DropQDQ selector): their input
#: DequantizeLinear stays a standalone op wherever the op runs.
_DROP_QDQ_OPS = ("MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Flatten", "Gather", "Resize", "Slice")


def _unit_refused_for_rank(unit: OpNode, reasons: list[FailedConstraint]) -> bool:
    """Whether the accelerator refuses ``unit``'s whole node unit for the rank of its tensors (an Elu, Tanh or Sqrt
    of rank 5 on the QNN HTP: the DequantizeLinear opening it goes to the CPU with it, whatever wrote the tensor;
    probed), unlike an op whose Q/DQ ONNX Runtime drops (a 3-D MaxPool's input dequantization stays)."""
    return unit.op not in _DROP_QDQ_OPS and any(f.constraint == "max_rank" for f in reasons)


def _gelu_nodes(erf: OpNode, graph: OpGraph) -> list[OpNode] | None:
    """The Div, Erf, Add and two Muls of a GELU written out around ``erf`` (x / sqrt 2 -> Erf -> + 1 -> * x -> * 0.5,
    the last two in either order), or None when ``erf`` is not in one."""
    producers, consumers = graph.producers(), graph.consumers()

    def readers(node: OpNode) -> list[OpNode]:
        return [graph.nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]

    div = graph.nodes[producers[erf.inputs[0].name]] if erf.inputs and erf.inputs[0].name in producers else None
    add = readers(erf)
    if div is None or div.op not in ("Div", "Mul") or [a.op for a in add] != ["Add"]:
        return None
    first = readers(add[0])
    second = readers(first[0]) if [m.op for m in first] == ["Mul"] else []
    if [m.op for m in second] != ["Mul"]:
        return None
    return [div, erf, add[0], first[0], second[0]]


def _fused_gelus(graph: OpGraph, failed: list[list[FailedConstraint]]) -> None:
    """A GELU written out runs where the op writing its input runs, as the one layer the compiler fuses it into
    (rknn-toolkit2 on RK3588: after a transposed convolution it runs on the CPU, the GELU runs there too)."""
    producers = graph.producers()
    for erf in graph.nodes:
        gelu = _gelu_nodes(erf, graph) if erf.op == "Erf" else None
        source = gelu[0].inputs[0].name if gelu and gelu[0].inputs else None
        if gelu is None or source not in producers or not failed[producers[source]]:
            continue
        writer = graph.nodes[producers[source]]
        for node in gelu:
            if not failed[node.index]:
                failed[node.index] = [FailedConstraint(
                    constraint="fused_gelu_follows_input", rule="A fused GELU runs where the op before it runs.",
                    detail=f"{node.op} is part of a GELU after {writer.op} '{writer.name}', which runs on the CPU")]


def _split_by_subgraph_read(graph: OpGraph, failed: list[list[FailedConstraint]]) -> OpNode | None:
    """The first control-flow node on the CPU that splits the accelerator's nodes through an edge only its
    subgraph shows: it reads a feature map an accelerator node wrote from inside its body, and an accelerator
    node depends on its output. ONNX Runtime's partitioner groups both accelerator nodes (no edge of the graph
    joins them through the CPU node), then refuses the group; probed on the QNN HTP emulator (onnxruntime-qnn
    2.7.0): every node of the model then runs on the CPU."""
    producers, consumers = graph.producers(), graph.consumers()
    for node in graph.nodes:
        if not failed[node.index] or not node.attrs.get("outer_reads"):
            continue
        writers = [producers[name] for name in node.attrs["outer_reads"] if name in producers]
        if not any(not failed[w] for w in writers):
            continue
        seen, frontier = set(), [t.name for t in node.outputs]
        while frontier:
            for reader in consumers.get(frontier.pop(), ()):
                if reader in seen:
                    continue
                if not failed[reader]:
                    return node
                seen.add(reader)
                frontier.extend(t.name for t in graph.nodes[reader].outputs)
    return None


def _grouping_skips(graph: OpGraph, table: OpTable) -> set[int]:
    """Nodes that take no part in ONNX Runtime's grouping: folded away, or a weight's DequantizeLinear inside the
    node unit of the op reading it."""
    return {node.index for node in graph.nodes if node.op in table.ignore or (
        node.op == "DequantizeLinear" and node.inputs and node.inputs[0].constant
        and not is_standalone_constant_dequantize(graph, node))}


def _drop_lone_constant_groups(graph: OpGraph, table: OpTable, failed: list[list[FailedConstraint]]) -> None:
    """A group of one Q/DQ node that reads only constants goes to the CPU (the QNN EP drops such a partition)."""
    on_ep = [not reasons and node.op not in table.ignore for node, reasons in zip(graph.nodes, failed)]
    for group in input_less_groups(graph, on_ep, _grouping_skips(graph, table)):
        node = graph.nodes[group[0]]
        if len(group) == 1 and node.op in QDQ_OPS:
            failed[node.index] = [FailedConstraint(
                constraint="input_less_groups", rule="A partition of one Q/DQ node that reads only constants "
                                                     "is dropped to the CPU.",
                detail=f"{node.op} reads only constants and no other accelerator node is ready with it: ONNX "
                       "Runtime's partition would hold it alone, and the EP drops that partition")]


def input_less_partitions(graph: OpGraph, table: OpTable, verdicts: list[NodeVerdict]) -> list[list[OpNode]]:
    """The accelerator's partitions (ONNX Runtime's grouping) that read nothing but constants, of two nodes or
    more: the QNN HTP backend cannot build a graph without inputs, and the session fails."""
    if not table.input_less_groups:
        return []
    placed = {v.index: v.placement == "accelerator" for v in verdicts}
    on_ep = [placed.get(node.index, False) for node in graph.nodes]
    return [[graph.nodes[i] for i in group] for group in input_less_groups(graph, on_ep, _grouping_skips(graph, table))
            if len(group) > 1]


def float64_crossings(graph: OpGraph, table: OpTable, verdicts: list[NodeVerdict]) -> list[tuple[OpNode, str]]:
    """(the accelerator node, the tensor) for each float64 tensor that crosses between the accelerator and the CPU
    (or a graph input or output): the QNN EP claims a Cast to float64, then fails the session on that partition's
    input or output ("Unsupported FP64 data type in graph IO", as for an IsInf of a double)."""
    if not table.float64_partition_io_fails:
        return []
    placed = {v.index: v.placement == "accelerator" for v in verdicts}
    producers, consumers, outputs = graph.producers(), graph.consumers(), graph.output_names()
    found = []
    for node in graph.nodes:
        if not placed.get(node.index):
            continue
        for tensor in node.outputs:
            readers = consumers.get(tensor.name, [])
            if tensor.dtype == "float64" and (tensor.name in outputs or any(not placed.get(i) for i in readers)):
                found.append((node, tensor.name))
        for tensor in node.activations_in:
            writer = producers.get(tensor.name)
            if tensor.dtype == "float64" and (writer is None or not placed.get(writer)):
                found.append((node, tensor.name))
    return found


def place(graph: OpGraph, table: OpTable, semantics: str) -> list[NodeVerdict]:
    """Accelerator or CPU for every node; under 'prefix' everything after the first CPU node goes to the CPU."""
    failed = [[] if node.op in table.ignore or (table.fold_constants and (node.attrs.get("folded")
                                                                        or node.attrs.get("unused")))
              else evaluate_node(node, graph, table) for node in graph.nodes]
    if table.qdq_node_units:
        _qdq_units(graph, table, failed)
    if table.fused_gelu_follows_input:
        _fused_gelus(graph, failed)
    splitter = _split_by_subgraph_read(graph, failed) if table.subgraph_reads_split_partitions else None
    if splitter is not None:
        for node in graph.nodes:
            if not failed[node.index]:
                failed[node.index] = [FailedConstraint(
                    constraint="subgraph_reads_split_partitions",
                    rule="No CPU control-flow op reads an accelerator feature map inside its subgraph while the "
                         "accelerator reads its output (ONNX Runtime then refuses the EP's whole partition).",
                    detail=f"{splitter.op} '{splitter.name}' on the CPU reads accelerator feature maps inside its "
                           "subgraph and feeds accelerator nodes: ONNX Runtime refuses the partition, every node "
                           "runs on the CPU")]
    if table.input_less_groups:
        _drop_lone_constant_groups(graph, table, failed)
    verdicts: list[NodeVerdict] = []
    cut: str | None = None
    for node in graph.nodes:
        if node.op in table.ignore:
            continue
        reasons = failed[node.index]
        if not reasons and cut is not None:
            reasons = [FailedConstraint(constraint="prefix_partition",
                                        rule="Only ops before the first unsupported op run on the accelerator.",
                                        detail=f"after the first unsupported op ({cut})")]
        if reasons and semantics == "prefix" and cut is None:
            cut = f"{node.op} '{node.name}'"
        verdicts.append(NodeVerdict(index=node.index, name=node.name, op=node.op,
                                    placement="cpu" if reasons else "accelerator", failed=reasons, macs=node.macs))
    return verdicts


def partitions(verdicts: list[NodeVerdict]) -> list[Partition]:
    """Maximal runs of nodes on one device along execution order."""
    runs: list[Partition] = []
    for verdict in verdicts:
        if runs and runs[-1].device == verdict.placement:
            runs[-1].nodes.append(verdict.index)
        else:
            runs.append(Partition(device=verdict.placement, nodes=[verdict.index]))
    return runs


def peak_activation_bytes(graph: OpGraph) -> int:
    """Largest total of live feature maps (bytes) when nodes run in order and tensors die after their last use."""
    last_use: dict[str, int] = {}
    for node in graph.nodes:
        for tensor in node.inputs:
            last_use[tensor.name] = node.index
    outputs = graph.output_names()
    live: dict[str, int] = {t.name: t.size_bytes for t in graph.graph_inputs}
    peak = sum(live.values())
    for node in graph.nodes:
        for tensor in node.outputs:
            if not tensor.constant:
                live[tensor.name] = tensor.size_bytes
        peak = max(peak, sum(live.values()))
        for tensor in node.inputs:
            if last_use.get(tensor.name) == node.index and tensor.name not in outputs:
                live.pop(tensor.name, None)
    return peak


def weights_bytes(graph: OpGraph) -> int:
    """Bytes of constant tensors read by the graph's nodes (each counted once)."""
    seen: dict[str, int] = {}
    for node in graph.nodes:
        for tensor in node.inputs:
            if tensor.constant:
                seen[tensor.name] = tensor.size_bytes
    return sum(seen.values())
