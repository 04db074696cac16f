"""The performance part of a target profile: compute, memory, bus, power modes, thermal envelope, known error.

Declared in ``targets/<name>.toml`` under ``[performance]``; validated strictly
(an unknown key is an error naming the key). Every rate is an *effective*
sustained figure at the unit's reference clock (``clock_mhz``): peak TOPS are
kept beside it for the record, but the cost model (:mod:`edgepipe.perf`) uses
the effective rates, because no network reaches the datasheet peak.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: Op classes the cost model tells apart (see :mod:`edgepipe.perf.graph`).
OpKind = Literal["conv", "depthwise", "gemm", "pool", "elementwise", "quant", "data", "other"]
Precision = Literal["int8", "fp16", "fp32"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ComputeUnit(_Strict):
    """One processor that runs ops: an NPU, a GPU, or the CPU that takes the ops an accelerator cannot."""

    name: str = Field(description="What the unit is, e.g. 'Hexagon HTP (V75)'.")
    clock_mhz: float | None = Field(
        None, gt=0, description="Reference clock the rates below hold at (MHz); accelerator default: [compute].")
    peak_int8_tops: float | None = Field(None, ge=0, description="Datasheet peak int8 throughput (TOPS).")
    peak_fp16_tflops: float | None = Field(None, ge=0, description="Datasheet peak fp16 throughput (TFLOPS).")
    int8_gmacs: float | None = Field(None, gt=0, description="Effective int8 MAC rate (GMAC/s); none = no int8.")
    fp16_gmacs: float | None = Field(None, gt=0, description="Effective fp16 MAC rate (GMAC/s); none = no fp16.")
    fp32_gmacs: float | None = Field(None, gt=0, description="Effective fp32 MAC rate (GMAC/s); none = no fp32.")
    memory_bandwidth_gbps: float | None = Field(
        None, gt=0, description="Effective memory bandwidth the unit sees (GB/s); accelerator default: [memory].")
    weight_bandwidth_gbps: float | None = Field(
        None, gt=0, description="Bandwidth of the memory weights stream from, e.g. flash (GB/s); none = same.")
    per_op_overhead_us: float = Field(0.0, ge=0, description="Fixed cost of dispatching one op (µs).")
    per_run_overhead_us: float = Field(0.0, ge=0, description="Fixed cost of one inference call (µs).")
    efficiency: dict[OpKind, float] = Field(
        default_factory=dict, description="Share (0..1] of the effective MAC rate an op class reaches; default 1.")
    op_gelems: dict[str, float] = Field(
        default_factory=dict, description="Measured rate of specific op types whose kernels the MAC model misses "
                                          "(G output elements/s), e.g. ONNX Runtime's LRN.")

    @model_validator(mode="after")
    def _some_rate(self) -> ComputeUnit:
        if not (self.int8_gmacs or self.fp16_gmacs or self.fp32_gmacs):
            raise ValueError("give at least one of int8_gmacs, fp16_gmacs, fp32_gmacs")
        if any(not 0 < e <= 1.5 for e in self.efficiency.values()):
            raise ValueError("efficiency values must be in (0, 1.5]")
        return self

    @property
    def clock(self) -> float:
        """The reference clock (MHz); set once the profile's [compute] table is merged in."""
        if self.clock_mhz is None:
            raise ValueError(f"{self.name}: no clock_mhz in [performance] or [compute]")
        return self.clock_mhz

    @property
    def bandwidth(self) -> float:
        """Memory bandwidth (GB/s); set once the profile's [memory] table is merged in."""
        if self.memory_bandwidth_gbps is None:
            raise ValueError(f"{self.name}: no memory_bandwidth_gbps in [performance] or bandwidth_gb_s in [memory]")
        return self.memory_bandwidth_gbps

    def gmacs(self, precision: Precision) -> float | None:
        """Effective MAC rate for ``precision`` (GMAC/s); int8 falls back to fp16, fp16 to fp32 when absent."""
        if precision == "int8":
            return self.int8_gmacs or self.fp16_gmacs or self.fp32_gmacs
        if precision == "fp16":
            return self.fp16_gmacs or self.fp32_gmacs
        return self.fp32_gmacs or self.fp16_gmacs

    def takes(self, precision: Precision) -> bool:
        """Whether the unit computes ``precision`` natively (an NPU without float does not take fp32)."""
        return {"int8": self.int8_gmacs, "fp16": self.fp16_gmacs, "fp32": self.fp32_gmacs or self.fp16_gmacs
                }[precision] is not None


class Bus(_Strict):
    """The link between accelerator and host CPU; each crossing costs bytes ÷ bandwidth + a fixed latency."""

    name: str = Field("", description="E.g. 'USB 3.0', 'PCIe 4.0 x16', 'on-chip AXI'.")
    bandwidth_gbps: float = Field(gt=0, description="Effective transfer bandwidth (GB/s).")
    latency_us: float = Field(ge=0, description="Fixed cost of one crossing (µs).")


class PowerMode(_Strict):
    """One operating point: the accelerator's clock and the power drawn while busy and while idle."""

    name: str = Field(description="Mode id, e.g. 'burst' (ORT QNN htp_performance_mode names for Hexagon).")
    clock_mhz: float = Field(gt=0, description="Accelerator clock in this mode (MHz).")
    active_w: float = Field(gt=0, description="Power while inferring (W).")
    idle_w: float = Field(ge=0, description="Power while idle between inferences (W).")
    note: str = Field("", description="Where the figures come from.")


class ThermalEnvelope(_Strict):
    """When sustained load throttles the clock, and to what."""

    time_to_throttle_s: float = Field(gt=0, description="Seconds of continuous load before throttling (s).")
    throttled_clock_mhz: float = Field(gt=0, description="Clock after throttling (MHz).")


class MeasuredError(_Strict):
    """How wrong this profile's estimates are known to be: measured on N models, or unvalidated."""

    median_abs_pct: float | None = Field(None, ge=0, description="Median absolute % error; none = unvalidated.")
    within_25_pct_share: float | None = Field(None, ge=0, le=1, description="Share of models within ±25%.")
    models: int = Field(0, ge=0, description="How many held-out models the error was measured on.")
    measured_on: str = Field("", description="Against what, and when (date, runtime, host).")

    def describe(self) -> str:
        """``'±X%, measured on N models'`` or ``'unvalidated'`` — the text every estimate carries."""
        if self.median_abs_pct is None or self.models == 0:
            return "unvalidated"
        return f"±{self.median_abs_pct:.0f}%, measured on {self.models} models"


class PerformanceSpec(_Strict):
    """Everything the emulated delegate and the power report need to know about a target."""

    estimator: Literal["cost-model", "vela"] = Field(
        "cost-model", description="'vela': Vela's own estimate is the delegate estimate (Ethos-U).")
    vela_accelerator: str | None = Field(None, description="Vela --accelerator-config, e.g. 'ethos-u55-128'.")
    vela_system_config: str | None = Field(None, description="Vela --system-config from Arm/vela.ini.")
    vela_memory_mode: str | None = Field(None, description="Vela --memory-mode from Arm/vela.ini.")
    compute_precision: Precision | None = Field(
        None, description="Precision the accelerator computes in whatever the artifact's (its toolchain quantizes).")
    accelerator: ComputeUnit
    bus: Bus | None = Field(None, description="Accelerator↔CPU link; none when the accelerator is the CPU.")
    fallback_cpu: ComputeUnit | None = Field(None, description="The CPU that runs ops the accelerator cannot.")
    power_modes: list[PowerMode] = Field(min_length=1)
    default_power_mode: str = Field(description="The mode reports lead with.")
    thermal: ThermalEnvelope | None = None
    error: MeasuredError = Field(default_factory=MeasuredError)
    sources: list[str] = Field(default_factory=list, description="Public documents the figures come from.")

    @model_validator(mode="after")
    def _modes(self) -> PerformanceSpec:
        names = [m.name for m in self.power_modes]
        if len(set(names)) != len(names):
            raise ValueError(f"power mode names repeat: {names}")
        if self.default_power_mode not in names:
            raise ValueError(f"default_power_mode {self.default_power_mode!r} is not one of {names}")
        if self.estimator == "vela" and not self.vela_accelerator:
            raise ValueError("estimator 'vela' needs vela_accelerator")
        return self

    def mode(self, name: str | None = None) -> PowerMode:
        """The power mode ``name`` (default: ``default_power_mode``); KeyError names the known modes."""
        wanted = name or self.default_power_mode
        for mode in self.power_modes:
            if mode.name == wanted:
                return mode
        raise KeyError(f"no power mode {wanted!r}; known: {', '.join(m.name for m in self.power_modes)}")
