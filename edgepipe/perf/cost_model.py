"""The emulated delegate: per-op time from MACs and bytes on the unit each op is placed on.

time(op) = max(MACs ÷ effective MAC rate, bytes ÷ bandwidth) + per-op overhead (weights stream at their
own bandwidth where the profile gives one, e.g. from flash); the total adds the
accelerator's fixed per-inference overhead.
Ops the accelerator cannot take run on the profile's fallback CPU; each
accelerator↔CPU crossing costs bytes ÷ bus bandwidth + the bus's fixed latency.
Only the accelerator's clock follows the power mode: its MAC rate scales with
clock ÷ reference clock and its per-op overhead (cycles) inversely; memory and
bus bandwidth are taken as clock-independent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from edgepipe.perf.graph import GraphWork, OpWork
from edgepipe.perf.report import DelegateEstimate, OpEstimate, TransferEstimate
from edgepipe.targets.performance import Bus, ComputeUnit, PerformanceSpec


def op_time_ms(op: OpWork, unit: ComputeUnit, clock_scale: float = 1.0) -> tuple[float, str]:
    """Time of ``op`` on ``unit`` (ms) and what bounds it ('compute', 'memory', 'overhead', 'fused', 'free')."""
    if op.fused:
        return 0.0, "fused"
    if op.kind == "data":
        return 0.0, "free"
    rate = (unit.gmacs(op.precision) or 0.0) * 1e9 * unit.efficiency.get(op.kind, 1.0) * clock_scale
    compute_s = op.macs / rate if rate else 0.0
    if op.op_type in unit.op_gelems:  # a kernel measured on its own: its rate replaces the MAC model
        compute_s = op.output_elements / (unit.op_gelems[op.op_type] * 1e9 * clock_scale)
    weight_bw = unit.weight_bandwidth_gbps or unit.bandwidth
    memory_s = ((op.input_bytes + op.output_bytes) / (unit.bandwidth * 1e9)
                + op.weight_bytes / (weight_bw * 1e9))
    overhead_s = unit.per_op_overhead_us * 1e-6 / clock_scale
    bound = "compute" if compute_s >= memory_s else "memory"
    if overhead_s > max(compute_s, memory_s):
        bound = "overhead"
    return (max(compute_s, memory_s) + overhead_s) * 1e3, bound


def transfer_ms(nbytes: int, bus: Bus) -> float:
    """One crossing of ``nbytes`` over ``bus`` (ms)."""
    return (nbytes / (bus.bandwidth_gbps * 1e9) + bus.latency_us * 1e-6) * 1e3


def default_placement(graph: GraphWork, spec: PerformanceSpec,
                      unsupported: set[str] | None = None) -> list[bool]:
    """True where an op runs on the accelerator: it takes the op's precision and the op is not ``unsupported``.

    ``unsupported`` holds op names (or op types) a support check rejected.
    Free ops (reshapes) stay on the unit of the op before them, so they never cause a crossing.
    """
    unsupported = unsupported or set()
    placement: list[bool] = []
    for op in graph.ops:
        if op.kind == "data" and placement:
            placement.append(placement[-1])
            continue
        rejected = op.name in unsupported or op.op_type in unsupported
        placement.append(spec.fallback_cpu is None or (spec.accelerator.takes(op.precision) and not rejected))
    return placement


def _transfers(graph: GraphWork, placement: Sequence[bool], bus: Bus | None) -> list[TransferEstimate]:
    if bus is None:
        return []
    out: list[TransferEstimate] = []
    on_accel = False  # the input arrives on the CPU
    for op, accel in zip(graph.ops, placement):
        if op.fused or op.kind == "data" or accel == on_accel:
            continue
        nbytes = op.input_bytes or graph.input_bytes
        out.append(TransferEstimate(before_op=op.name, direction="to_accelerator" if accel else "to_cpu",
                                    bytes=nbytes, ms=transfer_ms(nbytes, bus)))
        on_accel = accel
    if on_accel:
        out.append(TransferEstimate(before_op="output", direction="to_cpu", bytes=graph.output_bytes,
                                    ms=transfer_ms(graph.output_bytes, bus)))
    return out


def estimate(graph: GraphWork, spec: PerformanceSpec, clock_mhz: float | None = None,
             placement: Sequence[bool] | None = None) -> DelegateEstimate:
    """Per-op and total time of ``graph`` on the target ``spec`` with the accelerator at ``clock_mhz`` (ms)."""
    placement = list(placement if placement is not None else default_placement(graph, spec))
    scale = (clock_mhz or spec.accelerator.clock) / spec.accelerator.clock
    ops = []
    for op, accel in zip(graph.ops, placement):
        unit = spec.accelerator if accel or spec.fallback_cpu is None else spec.fallback_cpu
        if unit is spec.accelerator and spec.compute_precision and op.kind != "data":
            op = replace(op, precision=spec.compute_precision)
        ms, bound = op_time_ms(op, unit, scale if unit is spec.accelerator else 1.0)
        ops.append(OpEstimate(name=op.name, op_type=op.op_type, unit="accelerator" if accel else "cpu",
                              macs=op.macs, bytes_moved=op.bytes_moved, ms=ms, bound=bound))  # type: ignore[arg-type]
    transfers = _transfers(graph, placement, spec.bus)
    accel_ms = sum(o.ms for o in ops if o.unit == "accelerator") + spec.accelerator.per_run_overhead_us * 1e-3
    cpu_ms = sum(o.ms for o in ops if o.unit == "cpu")
    moved_ms = sum(t.ms for t in transfers)
    cpu_ops = sum(1 for o, a in zip(graph.ops, placement) if not a and o.kind != "data" and not o.fused)
    return DelegateEstimate(ops=ops, transfers=transfers, accelerator_ms=accel_ms, cpu_ms=cpu_ms,
                            transfer_ms=moved_ms, total_ms=accel_ms + cpu_ms + moved_ms, cpu_ops=cpu_ops)
