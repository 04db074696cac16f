"""Benchmark results into measurement logs: each script owns a section between markers, with date, machine, runs.

    <!-- BEGIN build_overhead.py: written by benchmarks/build_overhead.py, do not edit by hand -->
    ...
    <!-- END build_overhead.py -->

A script replaces only its own section (appended at the end when the doc has none yet), so the numbers
in benchmarks/results/benchmarks.md and performance.md are always what a script measured, never copied by hand.
Those logs are data, not documentation: docs/ holds none of them.
Every section starts with :func:`provenance`: when, on what machine, how many runs.
"""

from __future__ import annotations

import os
import platform
import re
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = ROOT / "benchmarks" / "results" / "benchmarks.md"
PERFORMANCE_MD = ROOT / "benchmarks" / "results" / "performance.md"


def _begin(name: str) -> str:
    script = name.split(":")[0]
    return f"<!-- BEGIN {name}: written by benchmarks/{script}, do not edit by hand -->"


def _end(name: str) -> str:
    return f"<!-- END {name} -->"


def cpu_model() -> str:
    """The CPU's marketing name (Linux /proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> str:
    """One line: CPU, cores, OS, Python, and the 1-minute load average now (other jobs on a shared host)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu_model()}, {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}, "
            f"Python {platform.python_version()}, load average {load:.1f}")


def provenance(script: str, runs: str) -> str:
    """``Measured <date> by benchmarks/<script> on <machine>; runs: <runs>.`` — the first line of every section."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return f"_Measured {stamp} by `benchmarks/{script}` on {machine()}; runs: {runs}._"


def model_error_lines(errors: dict[str, list[float]], quantity: str, unit: str) -> list[str]:
    """One line per model set ("fit", "held-out"): median and worst relative error of a cost model's
    ``quantity`` (e.g. "try time") over its ``unit`` (e.g. "measurements")."""
    return [f"- {kind} models: the modelled {quantity} is off by {100 * statistics.median(values):.0f}% (median), "
            f"{100 * max(values):.0f}% (worst) over {len(values)} {unit}." for kind, values in errors.items() if values]


def spread(values: Sequence[float], fmt: str = "{:.3g}") -> str:
    """``min / median / max`` of ``values``."""
    return " / ".join(fmt.format(v) for v in (min(values), statistics.median(values), max(values)))


def write_section(doc: Path, name: str, body: str) -> None:
    """Put ``body`` between the markers of section ``name`` in ``doc`` (appended when they are not there yet)."""
    text = doc.read_text(encoding="utf-8") if doc.exists() else ""
    block = f"{_begin(name)}\n{body.strip()}\n{_end(name)}"
    pattern = re.compile(re.escape(_begin(name)) + r".*?" + re.escape(_end(name)), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    doc.write_text(text.rstrip("\n") + "\n", encoding="utf-8")


def read_section(doc: Path, name: str) -> str | None:
    """The body of section ``name`` in ``doc``, or ``None`` when it has none."""
    match = re.search(re.escape(_begin(name)) + r"\n(.*?)\n" + re.escape(_end(name)),
                      doc.read_text(encoding="utf-8"), re.S)
    return match.group(1) if match else None
