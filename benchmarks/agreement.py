"""Agreement of edgepipe's per-op placement with the vendor compilers, on real third-party models: the
measurement of one model on one target, which benchmarks/rounds.py (a round's first run) and
benchmarks/in_sample.py (every listed model) run for each model (``python -m benchmarks``).

Each model's artifacts are the ones `edgepipe build` writes (int8 TFLite for ethos-u*, QDQ int8 ONNX for
mobile-npu, float ONNX for the Rockchip profiles); every target's vendor compiler runs through the same adapter
`edgepipe check --verify` and `build` use. A :class:`Row` keeps the counts and every node's placement on both
sides, so benchmarks/metrics.py can count each op once per source op. Nothing is dropped: a model whose compile
or tool run failed, or that has no artifact, is a row with its status; a compile failure edgepipe predicted (the
profile's compile_blockers name a node of the graph) is its own status, "failure predicted".
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from edgepipe.graph.opgraph import OpGraph  # noqa: E402
from edgepipe.support import SupportReport, check_graph, read_graph  # noqa: E402 - after the path set-up above
from edgepipe.support.report import Verification  # noqa: E402
from edgepipe.targets import TargetProfile, load_profile  # noqa: E402
from edgepipe.vendors.base import CompileResult  # noqa: E402
from edgepipe.vendors.compare import compare  # noqa: E402
from edgepipe.vendors.qnn.emulator import QnnHtp  # noqa: E402
from edgepipe.vendors.registry import toolchain_for  # noqa: E402
from edgepipe.vendors.rknn.toolkit import Rknn  # noqa: E402

TARGETS = ["ethos-u55", "ethos-u85", "mobile-npu", "rk3588", "rk3576"]
#: The build target whose artifact each agreement target reads (Rockchip profiles deploy edge-box-npu's float ONNX).
BUILD_TARGET = {"rk3588": "edge-box-npu", "rk3576": "edge-box-npu"}
log = logging.getLogger("agreement")


@dataclass
class Row:
    """One model on one target."""

    model: str
    role: str
    target: str
    status: str
    nodes: int = 0
    compared: int = 0
    agree: int = 0
    vendor_cpu: int = 0
    edgepipe_cpu: int = 0
    both_cpu: int = 0
    seconds: float = 0.0
    detail: str = ""
    #: The commit whose code measured the row ("" for rows recorded before rows named their commit).
    commit: str = ""
    #: Per node (by name): edgepipe's placement then the vendor's, one letter each: "A" accelerator, "C" CPU, "-"
    #: not placed by that side (a node the other side alone names, or every node of a compile that failed). Empty
    #: where no vendor tool ran, and in rows recorded before rows kept it.
    placements: dict[str, str] = field(default_factory=dict)


def artifacts(folder: Path, build_target: str) -> dict[tuple[str, str], Path]:
    """(format, precision) -> the artifact `edgepipe build` wrote for ``build_target`` under ``folder``."""
    found: dict[tuple[str, str], Path] = {}
    for path in sorted(folder.glob(f"*/{build_target}/*")):
        if path.suffix in (".onnx", ".tflite"):
            precision = "int8" if "int8" in path.stem else "fp32"
            found.setdefault((path.suffix[1:], precision), path)
    for path in sorted(folder.glob("*/*/model.onnx")):  # the float export is one file for every target
        found.setdefault(("onnx", "fp32"), path)
    for path in sorted(folder.glob("*/*/model_int8.tflite")):  # Ethos-U55 and U85 share one quantization group
        found.setdefault(("tflite", "int8"), path)
    return found


def ptq_config(source: Path, work: Path) -> Path:
    """A copy of the model folder ``source`` under ``work`` whose edgepipe.toml runs only the PTQ step.

    Agreement is about placement, not accuracy, so the fallback ladder's later steps (calibration search, mixed
    precision, QAT) are skipped: they change scales, not which ops the artifact holds. The copy keeps relative
    data paths valid; the zoo folder is never modified.
    """
    copy = work / source.name
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(source, copy)
    config = copy / "edgepipe.toml"
    text = config.read_text(encoding="utf-8")
    if 'steps = ["ptq"]' in text:
        pass
    elif "[quantization]" in text:
        text = text.replace("[quantization]", '[quantization]\nsteps = ["ptq"]', 1)
    else:
        text += '\n[quantization]\nsteps = ["ptq"]\n'
    config.write_text(text, encoding="utf-8")
    return config


def build(name: str, zoo: Path, out: Path, targets: list[str],
          timeout: float | None = None) -> tuple[int | None, float]:
    """`edgepipe build` (PTQ only) of one zoo model for the targets whose artifacts the agreement reads; returns
    its exit code (None: stopped after ``timeout`` s) and wall time (s).

    The command it runs, for one model: ``edgepipe build -c COPY/edgepipe.toml -o BUILDS/<model> --no-cache -q
    -t mobile-npu -t edge-box-npu ...`` where COPY is the zoo folder with ``[quantization] steps = ["ptq"]``.
    """
    builds = dict.fromkeys(BUILD_TARGET.get(t, t) for t in targets)
    if "mobile-npu" in builds:  # the float ONNX the Rockchip profiles read is the same export in every target
        builds.pop("edge-box-npu", None)
    config = ptq_config(zoo / name, out.parent / "_configs")
    command = [sys.executable, "-c", "import sys; from edgepipe.cli.app import main; sys.exit(main(sys.argv[1:]))",
               "build", "-c", str(config), "-o", str(out), "--no-cache", "-q",
               *[a for t in builds for a in ("-t", t)]]
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False, cwd=out.parent, env=env,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        log.info("build %s: stopped after %.0f s", name, time.perf_counter() - start)
        return None, time.perf_counter() - start
    log.info("build %s: exit %d in %.0f s %s", name, proc.returncode, time.perf_counter() - start,
             proc.stderr.strip()[-300:])
    return proc.returncode, time.perf_counter() - start


def measure(name: str, role: str, target: str, found: dict[tuple[str, str], Path]) -> Row:
    """The vendor compiler's placement against edgepipe's for one model and target."""
    profile = load_profile(target)
    wanted = profile.artifact
    path = found.get((wanted.format, wanted.precision))
    if path is None:
        return Row(name, role, target, "no artifact", detail=f"no {wanted.precision} {wanted.format} was built"
                   if found else "no build of this model (its build failed or was not run)", commit=_commit())
    graph = read_graph(path)
    report = check_graph(graph, profile)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="edgepipe-agreement-") as work:
        result, placements = placement_only(report, profile, path, Path(work), graph)
    row = Row(name, role, target, result.status if result else "no tool", nodes=report.nodes,
              seconds=time.perf_counter() - start, detail=(result.detail if result else "")[:300], commit=_commit(),
              placements=placements)
    blocked = "; ".join(b.named() for b in report.compile_blockers[:3])
    if result is not None and result.status == "ran" and not blocked:
        extra = result.extra
        row.compared, row.agree = result.compared, result.agree
        row.vendor_cpu, row.edgepipe_cpu, row.both_cpu = (int(extra.get(k, 0)) for k in
                                                          ("vendor_cpu", "edgepipe_cpu", "both_cpu"))
    elif blocked and result is not None and result.status == "compile_failed":
        # edgepipe said the compiler rejects this graph and it did: no placement is claimed on either side
        row.status, row.detail = "failure predicted", f"predicted ({blocked}); {row.detail}"[:300]
    else:
        row.compared = report.nodes  # a failed run, or a failure predicted for a graph that compiled: every
        if blocked:  # node disagrees, never dropped
            row.detail = f"edgepipe predicted a compile failure ({blocked}), but it {row.status}"[:300]
    return row


def placement_only(report: SupportReport, profile: TargetProfile, path: Path, work: Path,
                   graph: OpGraph) -> tuple[Verification | None, dict[str, str]]:
    """The vendor compile `edgepipe check --verify` runs, without the extras that do not change placement
    (RKNN's simulator accuracy analysis, QNN's HTP-vs-CPU output run): same adapter, same options. Also each
    node's placement on both sides (:attr:`Row.placements`; empty when the compile gave no placement)."""
    found = toolchain_for(profile)
    if found is None:
        return None, {}
    tool, options = found
    if isinstance(tool, Rknn):
        tool.accuracy = False
    if isinstance(tool, QnnHtp):
        tool.run_outputs = False
    result = tool.compile(path, graph, options, work)
    return compare(report, result), node_placements(report, result)


def node_placements(report: SupportReport, result: CompileResult) -> dict[str, str]:
    """Each node's placement by edgepipe then by the vendor ("AC": edgepipe accelerator, vendor CPU; "-" where a
    side does not name the node), the vendor's unmatched layers included; a compile that placed nothing gives
    edgepipe's side only ("A-", "C-"), so its nodes still count once per source op."""
    letter = {"accelerator": "A", "cpu": "C"}
    if result.status != "compiled":
        return {v.name: letter[v.placement] + "-" for v in report.node_verdicts}
    placed = {v.name: letter[v.placement] + letter.get(result.placement.get(v.name, ""), "-")
              for v in report.node_verdicts}
    for name, theirs in result.unmatched.items():
        placed[name if name not in placed else f"{name} (vendor)"] = "-" + letter[theirs]
    return placed


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    return proc.stdout.strip() or "unknown"
