"""Agreement of edgepipe's per-op placement with the vendor compilers, on real third-party models.

    python benchmarks/agreement.py --builds DIR [--zoo /work/zoo] [--build] [--docs] [--models a,b]
    python benchmarks/agreement.py --render --docs     # docs/results.md again from the recorded rows, nothing measured

Models and their role (tuning: looked at while fixing profiles; held_out: not) come from
benchmarks/agreement_models.toml. Each model's artifacts are the ones `edgepipe build` writes (int8 TFLite for
ethos-u*, QDQ int8 ONNX for mobile-npu, float ONNX for the Rockchip profiles); --build runs that build first.
Every target's vendor compiler runs through the same adapter `edgepipe check --verify` and `build` use.

Per target and role it reports: models, per-op agreement, CPU-op recall (share of the ops the vendor leaves on
the CPU that edgepipe also puts there) and precision (share of edgepipe's CPU ops the vendor leaves there too),
compile failures and tool failures. Nothing is dropped: the nodes of a model whose compile or tool run failed
(or that has no artifact) count as compared and disagreeing; nodes either side cannot match by name count as
disagreements. A compile failure edgepipe predicted (the profile's compile_blockers name a node of the graph)
is counted in its own column ("failure predicted"), with no ops compared: neither side claims a placement; a
predicted failure of a graph that compiled is a disagreement on every node.
The raw rows go to benchmarks/results/agreement.json (with the date they were written); with --docs
docs/results.md is rendered again from the result files (benchmarks/results_page.py). One run per model and
target (the tools are deterministic).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
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
START, END = "<!-- agreement:start -->", "<!-- agreement:end -->"
FIRST = ("<!-- agreement-first:start -->", "<!-- agreement-first:end -->")
#: First recorded runs of models while they were held out (kept when a model later becomes a tuning model).
FIRST_RUNS = ROOT / "benchmarks" / "results" / "agreement_first_run.json"
#: The rows of the last run (every listed model and target), which docs/results.md's in-sample tables come from.
ROWS = ROOT / "benchmarks" / "results" / "agreement.json"
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


def totals(rows: list[Row]) -> dict[str, float]:
    """Sums and ratios over ``rows`` (one target, one role)."""
    def count(status: str) -> int:
        return sum(1 for r in rows if r.status == status)

    compared, agree = sum(r.compared for r in rows), sum(r.agree for r in rows)
    vendor_cpu, edgepipe_cpu = sum(r.vendor_cpu for r in rows), sum(r.edgepipe_cpu for r in rows)
    both = sum(r.both_cpu for r in rows)
    return {"models": len(rows), "ran": count("ran"), "compile_failed": count("compile_failed"),
            "predicted": count("failure predicted"),
            "tool_failed": count("failed"), "not_installed": count("not installed"),
            "no_artifact": count("no artifact"), "compared": compared, "agree": agree,
            "agreement": agree / compared if compared else float("nan"),
            "cpu_recall": both / vendor_cpu if vendor_cpu else float("nan"),
            "cpu_precision": both / edgepipe_cpu if edgepipe_cpu else float("nan"),
            "vendor_cpu": vendor_cpu, "edgepipe_cpu": edgepipe_cpu}


def _pct(value: float) -> str:
    return "–" if value != value else f"{100 * value:.2f} %"


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    return proc.stdout.strip() or "unknown"


def tables(rows: list[Row], versions: dict[str, str], markers: tuple[str, str] = (START, END),
           note: str = "") -> str:
    """The tables of ``rows`` as Markdown between ``markers`` (printed by every run)."""
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [markers[0], f"Written by `python benchmarks/agreement.py --docs` on {when} at commit {_commit()}; "
             f"machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}, shared 2-core "
             f"host; one run per model and target (the compilers are deterministic). Tools: "
             f"{', '.join(f'{k} {v}' for k, v in versions.items())}.{_measured_at(rows)}{note}",
             "", "| target | role | models | compiled | compile failed | failure predicted | tool failed | no artifact "
             "| ops compared | agreement | CPU-op recall | CPU-op precision |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for target in TARGETS:
        for role in ("held_out", "tuning"):
            t = totals([r for r in rows if r.target == target and r.role == role])
            if not t["models"]:
                continue
            lines.append(f"| {target} | {role} | {t['models']} | {t['ran']} | {t['compile_failed']} | "
                         f"{t['predicted']} | "
                         f"{t['tool_failed'] + t['not_installed']} | {t['no_artifact']} | {t['compared']} | "
                         f"**{_pct(t['agreement'])}** | {_pct(t['cpu_recall'])} ({t['vendor_cpu']} vendor CPU ops) | "
                         f"{_pct(t['cpu_precision'])} ({t['edgepipe_cpu']} edgepipe CPU ops) |")
    lines += ["", "| model | role | target | status | ops | agree | vendor CPU | edgepipe CPU | both CPU | detail |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        detail = r.detail.replace("|", "/").replace("\n", " ")[:140]
        lines.append(f"| {r.model} | {r.role} | {r.target} | {r.status} | {r.compared} | {r.agree} | "
                     f"{r.vendor_cpu} | {r.edgepipe_cpu} | {r.both_cpu} | {detail} |")
    return "\n".join([*lines, markers[1]])


def _measured_at(rows: list[Row]) -> str:
    """Which commits measured ``rows``, when they are not all this one (tables rendered from recorded rows)."""
    counts = Counter(row.commit or "an earlier commit (not recorded in the row)" for row in rows)
    if set(counts) <= {_commit()}:
        return ""
    return " Rows measured at " + ", ".join(f"{commit}: {n}" for commit, n in counts.items()) + "."


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _written(path: Path) -> str | None:
    """The date a result file records it was written (None: an older file, which recorded none)."""
    return json.loads(path.read_text(encoding="utf-8")).get("written") if path.exists() else None


def role_of(entry: dict[str, object], target: str) -> str:
    """A listed model's role on ``target``: "tuning" where its disagreements were looked at (``tuned_on``), else
    its ``role``; read from agreement_models.toml on every run, so a reused row takes the model's role of now."""
    return "tuning" if target in entry.get("tuned_on", []) else str(entry["role"])  # type: ignore[operator]


#: Row statuses in which no vendor tool ran on the model: a later row that ran is its first run.
NOT_RUN = ("no artifact", "not installed", "no tool")


def record_first_runs(files: list[Path]) -> list[Row]:
    """Merge the rows of ``files`` (runs of models while still held out, before anyone looked at their
    disagreements) into FIRST_RUNS; a (model, target) already recorded keeps its first row, unless no vendor tool
    ran in it (:data:`NOT_RUN`: no artifact was built) and the new row is the tool's first run on the model."""
    kept = [Row(**r) for r in json.loads(FIRST_RUNS.read_text(encoding="utf-8"))["rows"]] if FIRST_RUNS.exists() else []
    where = {(r.model, r.target): i for i, r in enumerate(kept)}
    for path in files:
        for raw in json.loads(path.read_text(encoding="utf-8"))["rows"]:
            row = Row(**raw)
            key = (row.model, row.target)
            if row.role != "held_out":
                continue
            if key not in where:
                where[key] = len(kept)
                kept.append(row)
            elif kept[where[key]].status in NOT_RUN and row.status not in NOT_RUN:
                kept[where[key]] = row
    if files:
        FIRST_RUNS.write_text(json.dumps({"written": _now(), "rows": [asdict(r) for r in kept]}, indent=1),
                              encoding="utf-8")
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", type=Path, help="One build folder per model: BUILDS/<model> (to measure).")
    parser.add_argument("--zoo", type=Path, default=Path("/work/zoo"), help="Prepared zoo models.")
    parser.add_argument("--heldout", type=Path, default=Path("/tmp/heldout/m"),
                        help="Prepared non-zoo models (source = \"heldout\": `python -m tests.realmodels.heldout "
                             "prepare DIR --small`).")
    parser.add_argument("--build", action="store_true", help="Build models that have no build folder yet.")
    parser.add_argument("--docs", action="store_true", help="Render docs/results.md from the result files.")
    parser.add_argument("--models", default="", help="Comma-separated subset of the listed models.")
    parser.add_argument("--targets", default=",".join(TARGETS))
    parser.add_argument("--reuse", action="store_true",
                        help="Keep the rows of benchmarks/results/agreement.json; measure only the missing ones.")
    parser.add_argument("--out", type=Path, default=ROWS,
                        help="Where the raw rows go (and where --reuse reads them).")
    parser.add_argument("--render", action="store_true",
                        help="Measure nothing: the tables (and with --docs, docs/results.md) from --out's rows.")
    parser.add_argument("--first-runs", type=Path, nargs="*", default=[],
                        help="Result files of held-out models' first runs to record in agreement_first_run.json.")
    args = parser.parse_args()
    if args.builds is None and not args.render:
        parser.error("--builds is required unless --render")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    listed = tomllib.loads((ROOT / "benchmarks" / "agreement_models.toml").read_text(encoding="utf-8"))["models"]
    wanted = [m for m in args.models.split(",") if m] or list(listed)
    chosen = args.targets.split(",")
    out = args.out
    recorded = (args.reuse or args.render) and out.exists()
    previous = json.loads(out.read_text(encoding="utf-8"))["rows"] if recorded else []
    kept = [Row(**{**r, "role": role_of(listed[r["model"]], r["target"])}) for r in previous if r["model"] in listed]
    done = {(r.model, r.target) for r in kept if r.status != "no artifact" or args.render}
    rows: list[Row] = [r for r in kept if (r.model, r.target) in done and r.model in wanted]
    for name in [] if args.render else wanted:
        folder, targets = args.builds / name, [t for t in listed[name]["targets"] if t in chosen]
        if args.build and not folder.exists():
            folder.parent.mkdir(parents=True, exist_ok=True)
            build(name, args.heldout if listed[name].get("source") == "heldout" else args.zoo, folder, targets)
        for target in [t for t in targets if (name, t) not in done]:
            found = artifacts(folder, BUILD_TARGET.get(target, target)) if folder.exists() else {}
            row = measure(name, role_of(listed[name], target), target, found)
            log.info("%-20s %-10s %-15s %5d/%-5d %s", name, target, row.status, row.agree, row.compared,
                     row.detail[:120])
            rows.append(row)
    versions = {}
    for target in chosen:
        found_tool = toolchain_for(load_profile(target))
        if found_tool:
            versions[found_tool[0].name] = found_tool[0].version() or "not installed"
    out.parent.mkdir(parents=True, exist_ok=True)
    written = _written(out) if args.render else _now()
    out.write_text(json.dumps({"versions": versions, "written": written, "rows": [asdict(r) for r in rows]},
                              indent=1), encoding="utf-8")
    print(tables(rows, versions))  # noqa: T201 - a benchmark script's report
    if args.docs:
        record_first_runs(args.first_runs)
        subprocess.run([sys.executable, str(ROOT / "benchmarks" / "results_page.py")], check=True)


if __name__ == "__main__":
    main()
