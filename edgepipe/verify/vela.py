"""Arm Vela: compile the int8 TFLite for an Ethos-U configuration and read which original ops it leaves on the CPU.

Vela names each original op it leaves on the CPU by its output tensor in a warning
(``Warning (supported operators) operator: OP, ofm: 'NAME'`` then ``Reason: ...``), or,
for convolutions with asymmetric weights, in ``Warning: Op OP 'NAME' has asymmetric weights``.
Every other original op is compiled for the NPU. The ``--show-cpu-operations`` list is not
used to match ops: it names ops after Vela's own rewriting (a DEQUANTIZE can appear under the
name of the convolution that feeds it). Cycles and inference time come
from the summary CSV Vela writes into ``--output-dir``.
"""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

from edgepipe.support.report import Placement, SupportReport, Verification
from edgepipe.verify.compare import compare

_WARNING = re.compile(r"^Warning \(supported operators\) operator: (\S+), ofm: '(.+)'")
_ASYMMETRIC = re.compile(r"^Warning: Op (\S+) '(.+)' has asymmetric weights\. To run the operator on Ethos-U")


def _vela_command() -> list[str] | None:
    """The ``vela`` of this environment, else the first on PATH."""
    beside = Path(sys.executable).with_name("vela")
    exe = str(beside) if beside.exists() else shutil.which("vela")
    return [exe] if exe else None


def parse_cpu_ops(stdout: str) -> dict[str, str]:
    """Output tensor name → reason (or '') for each op Vela leaves on the CPU."""
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


def _summary(output_dir: Path) -> dict[str, float | str]:
    for path in output_dir.glob("*_summary_*.csv"):
        with path.open(newline="") as handle:
            row = next(csv.DictReader(handle), None)
        if row:
            wanted = ("cycles_total", "cycles_npu", "inference_time", "inferences_per_second")
            return {k: float(row[k]) for k in wanted if row.get(k) not in (None, "")}
    return {}


def run_vela(model: Path, accelerator: str, workdir: Path) -> tuple[dict[str, str], dict[str, float | str]]:
    """Compile ``model`` with Vela; returns (CPU ops by output tensor with reasons, summary figures)."""
    command = _vela_command()
    if command is None:
        raise FileNotFoundError("vela")
    out = workdir / f"vela-{accelerator}"
    out.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([*command, str(Path(model).resolve()), "--accelerator-config", accelerator,
                           "--output-dir", str(out)], capture_output=True, text=True, timeout=600, cwd=out)
    if proc.returncode != 0:
        raise RuntimeError((proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["vela failed"])
    return parse_cpu_ops(proc.stdout), _summary(out)


def verify(report: SupportReport, model: Path, accelerator: str, workdir: Path) -> Verification:
    """Vela's placement of every original op against edgepipe's."""
    tool = f"vela {accelerator}"
    try:
        cpu, summary = run_vela(model, accelerator, workdir)
    except FileNotFoundError:
        return Verification(tool=tool, status="not installed", detail="pip install 'edgepipe[vela]'")
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        return Verification(tool=tool, status="failed", detail=str(exc))
    vendor: dict[str, Placement] = {v.name: "cpu" if v.name in cpu else "accelerator" for v in report.node_verdicts}
    result = compare(tool, report, vendor)
    result.extra.update(summary)
    return result
