"""Where and when a benchmark result was measured: the commit (and whether the tree was clean), the date, the
machine, its CPU model and instruction-set flags, Python and the vendor tools' versions.

Every result file under benchmarks/results/ starts with one :class:`Provenance`; the results page prints it, and a
test refuses a file whose rows were measured at more than one commit.
"""

from __future__ import annotations

import os
import platform
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: The CPU flags that change what an int8 or float kernel can use (x86): the ones a reader needs to compare hosts.
KERNEL_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
                "avx_vnni", "avx512_bf16", "amx_int8")


def commit() -> str:
    """The short hash of HEAD ("unknown" outside a git checkout)."""
    proc = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    return proc.stdout.strip() or "unknown"


def tree_is_clean(besides: Path | None = None) -> bool:
    """True when the checkout has no modified, staged or untracked (not ignored) file, ``besides`` aside (the result
    file a resumable run is writing)."""
    proc = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True, cwd=ROOT, check=False)
    changed = [line[3:] for line in proc.stdout.splitlines() if line.strip()]
    mine = str(besides.resolve().relative_to(ROOT)) if besides is not None else None
    return proc.returncode == 0 and all(path == mine for path in changed)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def cpu() -> tuple[str, list[str]]:
    """The CPU's model name and which of :data:`KERNEL_FLAGS` it has (Linux /proc/cpuinfo)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    return model, [f for f in KERNEL_FLAGS if f in flags]


@dataclass
class Provenance:
    """What a result file was measured with. ``dirty`` is True when the tree had uncommitted changes."""

    commit: str
    dirty: bool
    started: str
    finished: str
    machine: str
    cpu: str
    cpu_flags: list[str]
    cpus: int
    python: str
    tools: dict[str, str] = field(default_factory=dict)

    @classmethod
    def here(cls, started: str, tools: dict[str, str] | None = None, besides: Path | None = None) -> Provenance:
        """Measured here and now; ``besides``: a result file being written, which does not make the tree dirty."""
        model, flags = cpu()
        return cls(commit=commit(), dirty=not tree_is_clean(besides), started=started, finished=now(),
                   machine=f"{platform.system()} {platform.machine()}", cpu=model, cpu_flags=flags,
                   cpus=os.cpu_count() or 0, python=platform.python_version(), tools=dict(tools or {}))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def sentence(self) -> str:
        """One line for a results page."""
        tools = "; tools: " + ", ".join(f"{k} {v}" for k, v in sorted(self.tools.items())) if self.tools else ""
        flags = ", ".join(self.cpu_flags) or "none of the kernel flags"
        return (f"commit `{self.commit}`{' (with uncommitted changes)' if self.dirty else ''}, measured "
                f"{self.started} to {self.finished} on {self.cpu} ({self.cpus} CPUs, {flags}), {self.machine}, "
                f"Python {self.python}{tools}")
