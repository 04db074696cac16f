"""What the host looked like during a benchmark: CPU model, governor, load, threads, peak memory.

Everything is read from ``/proc`` and ``/sys`` where they exist; what cannot be
read is reported as ``None`` rather than guessed.
"""

from __future__ import annotations

import os
import platform
import resource
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class HostInfo(BaseModel):
    """The machine a benchmark ran on."""

    model_config = ConfigDict(extra="forbid")

    cpu_model: str | None
    logical_cpus: int | None
    governor: str | None = Field(description="cpufreq scaling governor of CPU 0; none on VMs without cpufreq.")
    load_avg_1min: float | None = Field(description="1-minute load average when the benchmark started.")
    machine: str
    python: str


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError:
        return None


def cpu_model() -> str | None:
    """The CPU's model name from ``/proc/cpuinfo`` (or ``platform.processor()``)."""
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.lower().startswith(("model name", "hardware", "cpu model")):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def host_info() -> HostInfo:
    """A snapshot of this host."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return HostInfo(cpu_model=cpu_model(), logical_cpus=os.cpu_count(),
                    governor=_read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
                    load_avg_1min=load, machine=platform.machine(), python=platform.python_version())


def peak_rss_bytes() -> int:
    """Peak resident memory of this process so far (bytes); Linux reports KiB, macOS bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if platform.system() == "Darwin" else peak * 1024)


def current_rss_bytes() -> int | None:
    """Resident memory of this process now (bytes), from ``/proc/self/status``."""
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def thread_count() -> int | None:
    """OS threads in this process now (runtime thread pools included), from ``/proc/self/status``."""
    for line in (_read("/proc/self/status") or "").splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return None
