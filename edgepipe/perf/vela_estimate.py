"""Vela's own performance estimate for Ethos-U targets, through the one Vela adapter (:mod:`edgepipe.vendors.vela`).

Vela compiles the int8 TFLite for the profile's ``vela_accelerator`` (with its system configuration and memory
mode) and writes a summary CSV with ``cycles_total``, ``core_clock`` (Hz) and ``inference_time`` (s). Arm calls
these numbers an estimate; edgepipe reports them as the delegate estimate for Ethos-U and compares its own cost
model with them. A missing Vela or a graph Vela cannot compile is the user's environment or model, not a bug
in edgepipe: :class:`VelaFailed` is a user error (exit 1) naming the fix.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from edgepipe.errors import MissingToolchain, ToolFailed
from edgepipe.graph.tflite_reader import read_tflite
from edgepipe.targets.performance import PerformanceSpec
from edgepipe.vendors.vela import Vela


@dataclass(frozen=True)
class VelaEstimate:
    """What Vela's summary says about one compiled model."""

    accelerator: str
    system_config: str
    clock_mhz: float
    cycles: int
    inference_ms: float
    npu_ops: int
    cpu_ops: int


class VelaFailed(ToolFailed):
    """Vela ran and could not compile the model (a tool failure: reported, never exit 3)."""


def vela_options(spec: PerformanceSpec) -> dict[str, str]:
    """The Vela options a performance section names."""
    if not spec.vela_accelerator:
        raise ValueError("profile has no vela_accelerator")
    options = {"accelerator-config": spec.vela_accelerator}
    if spec.vela_system_config:
        options["system-config"] = spec.vela_system_config
    if spec.vela_memory_mode:
        options["memory-mode"] = spec.vela_memory_mode
    return options


def run_vela(tflite: Path, spec: PerformanceSpec) -> VelaEstimate:
    """Compile ``tflite`` with Vela for ``spec`` and read its estimate."""
    tool = Vela()
    with tempfile.TemporaryDirectory(prefix="edgepipe-vela-") as tmp:
        result = tool.compile(tflite, read_tflite(tflite), vela_options(spec), Path(tmp))
    if result.status == "not installed":
        raise MissingToolchain("the vela compiler", tool.install_command)
    if result.status != "compiled" or "cycles" not in result.estimate:
        raise VelaFailed("vela", f"{tflite.name}: {result.detail or 'no summary written'}",
                         "the cost-model estimate is used instead; `edgepipe check --verify` shows Vela's view")
    figures = result.estimate
    return VelaEstimate(accelerator=str(result.extra.get("accelerator", spec.vela_accelerator)),
                        system_config=str(result.extra.get("system_config", "")), clock_mhz=figures["clock_mhz"],
                        cycles=int(figures["cycles"]), inference_ms=figures["inference_ms"],
                        npu_ops=int(figures.get("npu_ops", 0)), cpu_ops=int(figures.get("cpu_ops", 0)))
