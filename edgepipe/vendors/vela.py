"""Arm Vela (``ethos-u-vela``, in edgepipe's own environment): compile int8 TFLite for an Ethos-U configuration.

Placement: Vela names each original op it leaves on the CPU by its output tensor in a warning
(``Warning (supported operators) operator: OP, ofm: 'NAME'`` then ``Reason: ...``), or, for convolutions with
asymmetric weights, in ``Warning: Op OP 'NAME' has asymmetric weights``. Every other original op is compiled
for the NPU. The ``--show-cpu-operations`` list is not used to match ops: it names ops after Vela's own
rewriting. Estimate: the summary CSV Vela writes into ``--output-dir`` (``cycles_total``, ``core_clock`` in Hz,
``inference_time`` in s). This is the only place edgepipe runs Vela: the support check's verification and the
performance estimate both come through here, with the same system configuration.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from edgepipe.graph.opgraph import OpGraph
from edgepipe.support.report import Placement
from edgepipe.vendors.base import CompileResult, CompileStatus, Toolchain, last_line

_WARNING = re.compile(r"^Warning \(supported operators\) operator: (\S+), ofm: '(.+)'")
_ASYMMETRIC = re.compile(r"^Warning: Op (\S+) '(.+)' has asymmetric weights\. To run the operator on Ethos-U")
_COUNT = re.compile(r"(CPU|NPU) operators = (\d+)")
#: Vela's name for an op without outputs (ASSIGN_VARIABLE, CALL_ONCE): a virtual tensor after its op index.
_PLACEHOLDER = re.compile(r"^placeholder-for-(\d+)-OFM$")


def graph_names(cpu: dict[str, str], graph: OpGraph) -> dict[str, str]:
    """Vela's names translated to edgepipe's: ``placeholder-for-N-OFM`` is the op without outputs at index N of
    its subgraph (edgepipe names it ``OP_i``), of the op type Vela's warning names where it names one (it says
    ``None`` for CALL_ONCE); other names are output tensors, as edgepipe names TFLite nodes."""
    named: dict[str, str] = {}
    for name, reason in cpu.items():
        found = _PLACEHOLDER.match(name)
        index = int(found.group(1)) if found else -1
        matches = [n for n in graph.nodes if not n.outputs and n.attrs.get("subgraph_op", n.index) == index]
        typed = [n for n in matches if n.op == reason.split(":", 1)[0]] or matches
        for node in typed:
            named[node.name] = reason
        if not typed:
            named[name] = reason
    return named


def parse_cpu_ops(stdout: str) -> dict[str, str]:
    """Output tensor name -> reason for each op Vela leaves on the CPU."""
    cpu: dict[str, str] = {}
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        warning = _WARNING.match(line)
        if warning:
            name = warning.group(2).removesuffix("_act")
            reason = lines[i + 1].removeprefix("Reason: ").strip() if i + 1 < len(lines) else ""
            cpu[name] = f"{warning.group(1)}: {reason}"
        asymmetric = _ASYMMETRIC.match(line)
        if asymmetric:
            cpu[asymmetric.group(2)] = f"{asymmetric.group(1)}: asymmetric weights"
    return cpu


#: Vela 5's reader rejecting a file it cannot take ("'<tensor>' Does not have valid TFLite Semantics. - Constant
#: tensors must not have empty buffers ... Failed to parse TFLite file"): the error and the rule it names.
_REJECTED_INPUT = re.compile(r"Error:\s*(.+?Does not have valid TFLite Semantics\.)\s*-\s*([^\n]+)")


#: The exception Vela's compiler (Regor, Ethos-U85) raises when it cannot compile the graph it was given, e.g.
#: "Failed to allocate tensors. Memory used 393744, limit 393216" in a memory mode whose SRAM the working set of
#: one of its operations outgrows: a verdict on the graph, not a crash of the tool.
_COMPILER_REFUSED = "RuntimeError: Compilation failed:"


def failure_status(output: str) -> tuple[CompileStatus, str]:
    """(status, detail) of a Vela run that exited non-zero: a Python traceback is the tool failing
    ("failed"), unless it is the compiler refusing the graph; a printed error is a compile failure."""
    line = last_line(output)
    if "Traceback" in output and _COMPILER_REFUSED not in line:
        return "failed", f"vela: {line}"
    if _COMPILER_REFUSED in line:
        return "compile_failed", f"vela could not compile this graph: {line.split(_COMPILER_REFUSED, 1)[1].strip()}"
    return "compile_failed", f"vela: {line}"


#: Regor's staging allocation failing: the feature maps its fast-storage allocator chose to keep in SRAM fit the
#: limit at every moment, but their addresses do not (long-lived small tensors fragment it).
_ALLOCATION = re.compile(r"Failed to allocate tensors\. Memory used (\d+), limit (\d+)")
#: The arena cache size a retry asks for is rounded up to this (bytes), as SRAM sizes are.
_ARENA_STEP = 16 * 1024


def allocation_shortfall(detail: str) -> tuple[int, int] | None:
    """(bytes used, limit) of a Vela staging-allocation failure named in ``detail``; None for any other."""
    found = _ALLOCATION.search(detail)
    return (int(found.group(1)), int(found.group(2))) if found else None


def retry_arena(used: int) -> int:
    """The arena cache size to retry with: what the failed allocation used, rounded up to 16 KiB."""
    return -(-used // _ARENA_STEP) * _ARENA_STEP


def read_summary(output_dir: Path, stdout: str) -> dict[str, float]:
    """Vela's estimate: cycles, clock (MHz), inference time (ms), and its NPU/CPU op counts."""
    figures: dict[str, float] = {f"{kind.lower()}_ops": float(n) for kind, n in _COUNT.findall(stdout)}
    for path in sorted(output_dir.glob("*_summary_*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            row = next(csv.DictReader(handle), None)
        if row:
            figures["cycles"] = float(row["cycles_total"])
            figures["clock_mhz"] = float(row["core_clock"]) / 1e6
            figures["inference_ms"] = float(row["inference_time"]) * 1e3
            break
    return figures


def summary_config(output_dir: Path) -> dict[str, str]:
    """The accelerator and system configuration Vela's summary says it compiled for."""
    for path in sorted(output_dir.glob("*_summary_*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            row = next(csv.DictReader(handle), None)
        if row:
            return {"accelerator": row.get("accelerator_configuration", ""),
                    "system_config": row.get("system_config", "")}
    return {}


class Vela(Toolchain):
    """Arm's Ethos-U compiler, run as the ``vela`` command of this Python environment."""

    name = "vela"
    install_command = "pip install 'edgepipe[vela]'"
    options = {"accelerator-config": "Ethos-U configuration (ethos-u55-128, ethos-u85-256, ...)",
               "system-config": "system configuration from Vela's Arm/vela.ini",
               "memory-mode": "memory mode from Vela's Arm/vela.ini",
               "arena-cache-size": "SRAM (bytes) Vela may use for staging, instead of the memory mode's"}
    #: Vela needs minutes on real models: a Conv-TasNet speech enhancer (747 ops, 1 s of 16 kHz audio) compiles for
    #: the U55 in 912 s on a shared 2-core host (one run by hand); at 600 s that was a tool failure.
    timeout_s = 1800.0

    def version(self) -> str | None:
        if self.executable() is None:
            return None
        try:
            return metadata.version("ethos-u-vela")
        except metadata.PackageNotFoundError:
            return "unknown (vela on PATH)"

    def environment(self) -> str:
        return sys.prefix

    @staticmethod
    def executable() -> str | None:
        """The ``vela`` of this environment, else the first on PATH."""
        beside = Path(sys.executable).with_name("vela")
        return str(beside) if beside.is_file() else shutil.which("vela")

    def command(self, model: Path, options: dict[str, str], output_dir: Path) -> list[str]:
        """The vela command line; Vela refuses ``--config`` with its built-in default system config."""
        command = [str(self.executable()), str(Path(model).resolve()), "--output-dir", str(output_dir),
                   "--accelerator-config", options.get("accelerator-config", "ethos-u55-128")]
        if options.get("system-config"):
            command += ["--config", "Arm/vela.ini", "--system-config", options["system-config"]]
        if options.get("memory-mode"):
            command += ["--memory-mode", options["memory-mode"]]
        if options.get("arena-cache-size"):
            command += ["--arena-cache-size", options["arena-cache-size"]]
        return command

    def allocation_next_step(self, model: Path, options: dict[str, str], workdir: Path, used: int,
                             limit: int, first_s: float = 0.0) -> str:
        """The next step after a staging-allocation failure, checked by Vela itself: compiling again with an
        arena cache big enough for what the failed allocation used says whether more SRAM is the whole fix. A
        first compile that took more than half the time limit (``first_s``) is not repeated: the check would
        likely time out, and the user would wait twice for one answer."""
        arena = retry_arena(used)
        where = f"Vela's SRAM staging area of {limit:,} B (its fast-storage allocator needed {used:,} B)"
        if first_s > self.limit_s() / 2:
            return (f"; {where}; next step: a memory mode with more SRAM (the check with --arena-cache-size {arena} "
                    f"was not run: this compile took {first_s:.0f} s of the {self.limit_s():g} s limit)")
        retry = {**options, "arena-cache-size": str(arena)}
        out = workdir / f"vela-{options.get('accelerator-config', 'default')}-arena-{arena}"
        out.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(self.command(model, retry, out), capture_output=True, text=True,
                                  timeout=self.limit_s(), cwd=out, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:  # the failure stands; only the check is missing
            return (f"; {where}; next step: a memory mode with more SRAM (the check with --arena-cache-size {arena} "
                    f"did not run: {type(exc).__name__})")
        if proc.returncode == 0:
            return (f"; {where}; next step: it compiles with --arena-cache-size {arena} ({arena // 1024} KiB): "
                    "give the NPU that much SRAM (a bigger memory mode such as Dedicated_Sram_512KB), or shrink "
                    "the feature maps (a smaller input)")
        return (f"; {where}; next step: it does not compile with --arena-cache-size {arena} either: shrink the "
                "feature maps (a smaller input) or use a memory mode with more SRAM")

    def compile_impl(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        tool = self.label(options)
        out = workdir / f"vela-{options.get('accelerator-config', 'default')}"
        out.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        proc = subprocess.run(self.command(model, options, out), capture_output=True, text=True,
                              timeout=self.limit_s(), cwd=out, check=False)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:  # stderr last: a Python exception's own line ends it, not a warning on stdout
            output = f"{proc.stdout}\n{proc.stderr}"
            rejected = _REJECTED_INPUT.search(output)
            if rejected:  # Vela's reader refused the graph (its own check, not a crash): a compile failure
                return CompileResult(tool=tool, status="compile_failed",
                                     detail=f"vela: {rejected.group(1).strip()} ({rejected.group(2).strip()})")
            status, detail = failure_status(output)
            shortfall = allocation_shortfall(detail) if status == "compile_failed" else None
            if shortfall is not None:
                detail += self.allocation_next_step(model, options, workdir, *shortfall, first_s=seconds)
            return CompileResult(tool=tool, status=status, detail=detail)
        cpu = graph_names(parse_cpu_ops(proc.stdout), graph)
        names = {node.name for node in graph.nodes}
        placement: dict[str, Placement] = {n: "cpu" if n in cpu else "accelerator" for n in names}
        return CompileResult(tool=tool, status="compiled", placement=placement, reasons=cpu,
                             unmatched={n: "cpu" for n in cpu if n not in names},
                             estimate=read_summary(out, proc.stdout), extra=dict(summary_config(out)))
