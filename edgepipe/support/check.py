"""The support check: read graph → place nodes → partition → totals, as a :class:`SupportReport`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from edgepipe.errors import ProfileError
from edgepipe.graph.opgraph import OpGraph
from edgepipe.graph.read import read_graph
from edgepipe.rules import load_constraints
from edgepipe.support.placement import (
    float64_crossings,
    input_less_partitions,
    partitions,
    peak_activation_bytes,
    place,
    weights_bytes,
)
from edgepipe.support.report import CompileBlocker, NodeVerdict, SupportReport
from edgepipe.targets.profile import OpTable, TargetProfile


def check_graph(graph: OpGraph, profile: TargetProfile) -> SupportReport:
    """Place every node of ``graph`` on ``profile``'s accelerator or the CPU, with reasons and totals."""
    table = profile.op_table(graph.format)
    if table is None:
        takes = ", ".join(f for f in ("onnx", "tflite") if profile.op_table(f) is not None) or "no"
        raise ProfileError(f"target '{profile.name}' has no op table for {graph.format} graphs",
                           path=graph.path, fix=f"Check a {takes} artifact for this target")
    verdicts = place(graph, table, profile.partition)
    runs = partitions(verdicts)
    on_acc = [v for v in verdicts if v.placement == "accelerator"]
    macs = sum(v.macs for v in verdicts)
    acc_macs = sum(v.macs for v in on_acc)
    peak = peak_activation_bytes(graph)
    sram = profile.memory.sram_bytes
    return SupportReport(
        target=profile.name, artifact=graph.path, format=graph.format, partition_semantics=profile.partition,
        nodes=len(verdicts), accelerator_nodes=len(on_acc),
        node_share=len(on_acc) / len(verdicts) if verdicts else 1.0,
        macs=macs, accelerator_macs=acc_macs, mac_share=acc_macs / macs if macs else 1.0,
        partitions=sum(1 for r in runs if r.device == "accelerator"), transitions=max(len(runs) - 1, 0),
        peak_activation_bytes=peak, weights_bytes=weights_bytes(graph), sram_bytes=sram,
        fits_sram=None if sram is None else peak <= sram,
        cpu_ops=dict(Counter(v.op for v in verdicts if v.placement == "cpu")),
        node_verdicts=verdicts, partition_list=runs,
        compile_blockers=compile_blockers(graph, table) + _input_less_blockers(graph, table, verdicts)
        + _float64_blockers(graph, table, verdicts))


def _float64_blockers(graph: OpGraph, table: OpTable, verdicts: list[NodeVerdict]) -> list[CompileBlocker]:
    """A compile failure for each float64 tensor between the accelerator and the CPU (profile
    ``float64_partition_io_fails``)."""
    return [CompileBlocker(node=node.name, op=node.op, constraint="float64_partition_io",
                           rule="No float64 tensor crosses between the accelerator and the CPU.",
                           detail=f"{node.op} '{node.name}' on the accelerator exchanges the float64 tensor '{tensor}' "
                                  "with the CPU: the backend refuses float64 partition inputs and outputs (next step: "
                                  "cast to float32 instead, or keep the float64 ops together on the CPU)")
            for node, tensor in float64_crossings(graph, table, verdicts)]


def _input_less_blockers(graph: OpGraph, table: OpTable, verdicts: list[NodeVerdict]) -> list[CompileBlocker]:
    """A compile failure for each accelerator partition that reads only constants (profile
    ``input_less_groups``)."""
    found = []
    for group in input_less_partitions(graph, table, verdicts):
        names = ", ".join(f"'{n.name}'" for n in group[:4]) + (f" (+{len(group) - 4} more)" if len(group) > 4 else "")
        found.append(CompileBlocker(
            node=group[0].name, op=group[0].op, constraint="input_less_groups",
            rule="Every accelerator partition reads a graph input or a tensor another device wrote.",
            detail=f"{group[0].op} {names} read only constants and form an accelerator partition of their own: "
                   "the backend cannot build a graph with zero inputs (next step: quantize the feature maps too, "
                   "or keep these weights in float)"))
    return found


def compile_blockers(graph: OpGraph, table: OpTable) -> list[CompileBlocker]:
    """The nodes failing one of the table's ``compile_blockers``: with any, the vendor compiler rejects the graph."""
    known = load_constraints()
    found = []
    for node in graph.nodes:
        rules = {**table.compile_blockers.get("*", {}), **table.compile_blockers.get(node.op, {})}
        for name, param in rules.items():
            ok, detail = known[name](node, graph, param)
            if not ok:
                found.append(CompileBlocker(node=node.name, op=node.op, constraint=name,
                                            rule=known[name].rule(param), detail=detail))
    return found


def check_model(path: Path, profile: TargetProfile) -> SupportReport:
    """:func:`check_graph` on the model file at ``path``."""
    return check_graph(read_graph(path), profile)
