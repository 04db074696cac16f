"""Build PaddleOCR-family zoo models for a target with legalization off and on; write the placement and verdicts.

Each model is prepared from the zoo (tests/realmodels/zoo.py) and built twice by ``edgepipe build`` in its own
subprocess: once with ``[legalize] enabled = false`` (the model's own ops) and once as configured (legalized).
Per build the JSON keeps, for the deployed int8 artifact, the nodes on the CPU by op, the accelerator partitions,
the compatibility outcome, the verdict, the vendor tool's agreement with edgepipe's placement (the QNN HTP
emulator for mobile-npu, where ``onnxruntime-qnn`` is installed) and the rewrites kept.

    nice -n 10 python benchmarks/legalize_reach.py --work /tmp/reach
    python benchmarks/legalize_reach.py --models ppocr_v4_cls --target mobile-npu --steps ptq
    python benchmarks/legalize_reach.py render    # docs/reference/legalization.md again from the committed JSON
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.provenance import Provenance, now  # noqa: E402
from edgepipe import __version__  # noqa: E402
from edgepipe.report.schema import BuildReport  # noqa: E402
from tests.realmodels import zoo  # noqa: E402

RESULT = ROOT / "benchmarks" / "results" / "legalize_reach.json"
DOC = ROOT / "docs" / "reference" / "legalization.md"
MODELS = ("ppocr_v4_cls", "ppocr_v2_cls", "ppocr_v4_det", "ppocr_v5_det", "ppocr_v4_rec", "ppocr_v5_rec")


def _build(config: Path, target: str, out: Path, timeout: float) -> dict[str, Any]:
    """One ``edgepipe build`` of ``config`` for ``target``: exit code, seconds, and what its report says."""
    exe = Path(sys.executable).with_name("edgepipe")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    start = time.perf_counter()
    try:
        proc = subprocess.run([str(exe), "build", "-c", str(config), "-t", target, "-o", str(out), "--no-cache",
                               "-q"], capture_output=True, text=True, timeout=timeout, env=env)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        code = None
    seconds = round(time.perf_counter() - start, 1)
    reports = sorted(out.glob(f"*/{target}/report.json"))
    if not reports:
        return {"exit": code, "seconds": seconds, "report": None}
    return {"exit": code, "seconds": seconds, **_summary(BuildReport.model_validate_json(reports[0].read_text()))}


def _summary(report: BuildReport) -> dict[str, Any]:
    """What one target's report says about placement, compatibility, the vendor check and the verdict."""
    support = report.support
    compatibility = next((e for e in report.evidence if e.requirement == "compatibility"), None)
    vendor = [v for v in support.verification] if support is not None else []
    legalization = report.legalization
    return {
        "verdict": report.verdict, "verdict_reason": report.verdict_reason,
        "compatibility": None if compatibility is None else {"outcome": compatibility.outcome,
                                                             "detail": compatibility.detail},
        "artifact": None if support is None else support.artifact,
        "nodes": None if support is None else support.nodes,
        "cpu_nodes": None if support is None else support.nodes - support.accelerator_nodes,
        "cpu_ops": None if support is None else dict(sorted(support.cpu_ops.items())),
        "partitions": None if support is None else support.partitions,
        "mac_share": None if support is None else round(support.mac_share, 4),
        "vendor": [{"tool": v.tool, "status": v.status, "compared": v.compared, "agree": v.agree,
                    "edgepipe_only": v.edgepipe_only, "vendor_only": v.vendor_only} for v in vendor],
        "rewrites_kept": [] if legalization is None else [
            {"name": r.name, "nodes": r.nodes, "max_relative_error": r.max_relative_error}
            for r in legalization.kept],
        "float_placement": None if legalization is None else {
            "before": legalization.before.model_dump(), "after": legalization.after.model_dump()},
    }


def _with_steps(config: Path, steps: list[str] | None, legalize: bool) -> Path:
    """A copy of ``config`` beside it with the ladder steps and the legalization switch set."""
    text = config.read_text(encoding="utf-8")
    if steps is not None and "[quantization]" not in text:
        text += f"\n[quantization]\nsteps = {json.dumps(steps)}\n"
    if not legalize:
        text += "\n[legalize]\nenabled = false\n"
    path = config.with_name(f"edgepipe-{'on' if legalize else 'off'}.toml")
    path.write_text(text, encoding="utf-8")
    return path


def _placement(build: dict[str, Any]) -> str:
    if "verdict" not in build:
        return f"no report (exit {build.get('exit')})"
    ops = ", ".join(f"{op} x{n}" for op, n in sorted(build.get("cpu_ops", {}).items())) or "none"
    return (f"{build['verdict'].upper()}: {build.get('cpu_nodes')} CPU op(s) ({ops}), "
            f"{build.get('partitions')} partition(s)")


def _vendor(build: dict[str, Any]) -> str:
    checks = [v for v in build.get("vendor", []) if v.get("status") == "ran"]
    return "; ".join(f"{v['agree']}/{v['compared']} nodes agree ({v['tool']})" for v in checks) or "not run"


def render(record: dict[str, Any]) -> str:
    """The reference page of a legalize_reach result file."""
    provenance = record["provenance"]
    lines = ["# Legalization on real models", "",
             "<!-- generated by benchmarks/legalize_reach.py render from benchmarks/results/legalize_reach.json; "
             "do not edit -->", "",
             f"Each model is built for `{record['target']}` twice, with `[legalize] enabled = false` and as "
             f"configured (ladder steps: {', '.join(record.get('steps') or ['the model config'])}); the placement "
             "is that of the deployed int8 artifact, checked by the vendor tool where it is installed. Measured at "
             f"commit `{provenance['commit']}`{' (with uncommitted changes)' if provenance['dirty'] else ''}, "
             f"{provenance['started']} to {provenance['finished']}, on {provenance['cpu']} "
             f"({provenance['cpus']} CPUs).", "",
             "| model | without legalization | legalized | rewrites kept | vendor check (legalized) |",
             "|---|---|---|---|---|"]
    for row in record["rows"]:
        kept = ", ".join(f"{r['name']} x{r['nodes']}" for r in row["after"].get("rewrites_kept", [])) or "none"
        lines.append(f"| {row['model']} | {_placement(row['before'])} | {_placement(row['after'])} | {kept} | "
                     f"{_vendor(row['after'])} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    if (argv or sys.argv[1:])[:1] == ["render"]:
        DOC.write_text(render(json.loads(RESULT.read_text(encoding="utf-8"))), encoding="utf-8")
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=sorted(zoo.BY_NAME))
    parser.add_argument("--target", default="mobile-npu")
    parser.add_argument("--work", type=Path, default=Path("/tmp/legalize-reach"))
    parser.add_argument("--steps", nargs="+", default=None, help="ladder steps (default: the zoo config's)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per build")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    started, rows = now(), []
    for name in args.models:
        config = zoo.prepare(zoo.BY_NAME[name], args.work / "models")
        row: dict[str, Any] = {"model": name, "covers": zoo.BY_NAME[name].covers}
        for label, legalize in (("before", False), ("after", True)):
            row[label] = _build(_with_steps(config, args.steps, legalize), args.target,
                                args.work / "out" / label / name, args.timeout)
            print(f"{name} {label}: {row[label].get('verdict')} cpu {row[label].get('cpu_nodes')} partitions "
                  f"{row[label].get('partitions')} ({row[label]['seconds']} s)", file=sys.stderr)
        rows.append(row)
    provenance = Provenance.here(started)
    document = {"provenance": provenance.as_dict(), "runs": 1,
                "command": "python benchmarks/legalize_reach.py " + " ".join(argv or sys.argv[1:]),
                "edgepipe": __version__, "target": args.target, "steps": args.steps,
                "rows": [row | {"commit": provenance.commit} for row in rows]}
    args.out.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    if args.out == RESULT:
        DOC.write_text(render(document), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
