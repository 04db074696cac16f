"""Vela's own performance estimate for Ethos-U targets, read from the summary CSV it writes.

Vela compiles the int8 TFLite for the profile's ``vela_accelerator`` and writes
``<model>_summary_<system config>.csv`` with ``cycles_total``, ``core_clock`` (Hz)
and ``inference_time`` (s). Arm calls these numbers an estimate; edgepipe
reports them as the delegate estimate for Ethos-U and compares its own cost
model with them.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from edgepipe.errors import MissingToolchain, ToolFailed
from edgepipe.targets.performance import PerformanceSpec


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


def _vela_command() -> list[str]:
    beside = Path(sys.executable).with_name("vela")
    found = str(beside) if beside.is_file() else shutil.which("vela")
    if found is None:
        raise MissingToolchain("the vela compiler", "pip install 'edgepipe[vela]'")
    return [found]


def run_vela(tflite: Path, spec: PerformanceSpec, timeout_s: float = 300) -> VelaEstimate:
    """Compile ``tflite`` with Vela for ``spec`` and read its summary CSV."""
    if not spec.vela_accelerator:
        raise ValueError("profile has no vela_accelerator")
    with tempfile.TemporaryDirectory(prefix="edgepipe-vela-") as tmp:
        command = [*_vela_command(), str(tflite), "--output-dir", tmp, "--accelerator-config", spec.vela_accelerator]
        if spec.vela_system_config:  # Vela refuses --config with its built-in default system config
            command += ["--config", "Arm/vela.ini", "--system-config", spec.vela_system_config]
        if spec.vela_memory_mode:
            command += ["--memory-mode", spec.vela_memory_mode]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        summaries = sorted(Path(tmp).glob("*_summary_*.csv"))
        if proc.returncode != 0 or not summaries:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise VelaFailed("vela", f"{tflite.name}: {tail[0]}",
                             "the cost-model estimate is used instead; `edgepipe check --verify` shows Vela's view")
        with summaries[0].open(encoding="utf-8") as handle:
            row = next(csv.DictReader(handle))
    counts = {kind: int(m.group(1)) for kind in ("CPU", "NPU")
              for m in [re.search(rf"{kind} operators = (\d+)", proc.stdout)] if m}
    return VelaEstimate(accelerator=row["accelerator_configuration"], system_config=row["system_config"],
                        clock_mhz=float(row["core_clock"]) / 1e6, cycles=int(float(row["cycles_total"])),
                        inference_ms=float(row["inference_time"]) * 1e3, npu_ops=counts.get("NPU", 0),
                        cpu_ops=counts.get("CPU", 0))
