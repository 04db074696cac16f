"""Typed records of a performance estimate: per op, per power mode, Vela's view, and the host's measurement.

These are the ``performance`` section of ``report.json`` and the output of
``edgepipe bench --target``. Times in ms, energy in mJ, power in W, bytes in bytes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from edgepipe.figures import MODEL_ESTIMATE, VENDOR_ESTIMATE, FigureKind
from edgepipe.latency.cpu_features import HostCpu
from edgepipe.quantize.host.fastest import DeploymentCandidate, Int8Form


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class OpEstimate(_Record):
    """One op's estimated time on the unit it was placed on."""

    name: str
    op_type: str
    unit: Literal["accelerator", "cpu"]
    macs: int
    bytes_moved: int = Field(description="Activations and weights read plus outputs written (bytes).")
    ms: float = Field(description="Estimated time (ms): max(compute, memory) + per-op overhead; 0 when fused.")
    bound: Literal["compute", "memory", "overhead", "fused", "free"]


class TransferEstimate(_Record):
    """One accelerator↔CPU crossing: bytes ÷ bus bandwidth + fixed latency."""

    before_op: str = Field(description="The op whose input crosses ('output' for the graph output).")
    direction: Literal["to_accelerator", "to_cpu"]
    bytes: int
    ms: float


class DelegateEstimate(_Record):
    """The emulated delegate: per-op times, the crossings, and their sums (ms)."""

    ops: list[OpEstimate]
    transfers: list[TransferEstimate]
    accelerator_ms: float
    cpu_ms: float
    transfer_ms: float
    total_ms: float
    cpu_ops: int = Field(description="Ops that fall back to the profile's CPU.")


class ModeEstimate(_Record):
    """Latency and energy in one power mode."""

    mode: str
    clock_mhz: float
    latency_ms: float = Field(description="Single-stream latency (ms).")
    energy_mj: float = Field(description="Energy per inference while busy: active W × latency (mJ).")
    inferences_per_j: float
    energy_mj_at_10hz: float = Field(description="Energy per inference at 10 inferences/s, idle time included (mJ).")
    throughput_ips: float = Field(description="Back-to-back inferences per second before any throttling.")
    sustained_ips: float = Field(description="Inferences per second once the thermal envelope throttles the clock.")
    time_to_throttle_s: float | None = Field(description="Seconds of load before throttling; none = never.")
    kind: FigureKind = Field(MODEL_ESTIMATE, description="What the latency is: 'vendor estimate' (Vela's cycles) "
                             "or 'model estimate' (edgepipe's cost model); energy is always a model estimate.")


class VelaComparison(_Record):
    """Vela's own estimate for an Ethos-U target next to edgepipe's cost model."""

    accelerator: str
    system_config: str
    clock_mhz: float
    cycles: int
    vela_ms: float = Field(description="Vela's inference_time (ms) at the configured clock.")
    edgepipe_ms: float = Field(description="edgepipe's cost model at the same clock (ms).")
    ratio: float = Field(description="edgepipe_ms ÷ vela_ms (1.0 = the two agree).")
    npu_ops: int
    cpu_ops: int
    kind: FigureKind = Field(VENDOR_ESTIMATE, description="vela_ms is Vela's own estimate, not a measurement.")


class PerformanceReport(_Record):
    """Estimated (and, on host-cpu, measured) latency and energy of one model on one target."""

    target: str
    artifact: str = Field(description="The artifact the estimate is for.")
    estimator: Literal["cost-model", "vela"]
    default_mode: str
    modes: list[ModeEstimate]
    error: str = Field(description="The estimate's error measured on held-out models on this calibrated host "
                       "('±X% median, N held-out models, …'), else 'unvalidated'.")
    kind: FigureKind = Field(MODEL_ESTIMATE, description="What the latency and energy figures are: 'vendor "
                             "estimate' (Vela) or 'model estimate' (edgepipe's cost and power models).")
    delegate: DelegateEstimate | None = None
    vela: VelaComparison | None = None
    int8_forms: list[Int8Form] = Field(default_factory=list)
    deployment_candidates: list[DeploymentCandidate] = Field(
        default_factory=list, description="host-cpu: every fp32 and int8 form timed on this host, fastest first.")
    deployment_artifact: str | None = Field(None, description="host-cpu: the fastest faithful form on this host "
                                                              "(fp32 when no faithful int8 form is faster).")
    host_cpu: HostCpu | None = Field(None, description="host-cpu: the CPU the forms were timed on, with the "
                                                       "features that decide int8 and fp16 speed.")
    notes: list[str] = Field(default_factory=list)
