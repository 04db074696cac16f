"""``edgepipe fleet FLEET.toml``: many models × many targets, in parallel, with one compatibility report.

Exit codes as ``build``: 0 every cell passed; 2 a cell failed its gate or did
not finish (bad model, lost worker), or a regression against ``--baseline``;
1 a user error in the fleet file, a model's config or an option; 3 a bug in
edgepipe (in any cell: its traceback is printed); 130 interrupted (Ctrl-C or
SIGTERM: the workers are stopped, no fleet report is written). With --json,
stdout holds one JSON document whatever the exit code; progress goes to stderr.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from edgepipe.cli.fleet_progress import fleet_progress
from edgepipe.cli.options import EPILOG, QuietOpt
from edgepipe.errors import ConfigError, ExitCode, GateFailed

if TYPE_CHECKING:
    from edgepipe.fleet.job import JobOutcome
    from edgepipe.fleet.run import Executor, FleetRun

EXECUTORS = ("process", "ray", "serial")
JsonOpt = typer.Option(False, "--json", help="Machine output: one JSON document on stdout, nothing else.")


def _executor(kind: str, workers: int | None, address: str | None, output: Path, retries: int) -> Executor:
    if kind not in EXECUTORS:
        raise ConfigError(f"unknown executor '{kind}'", fix=f"Use one of: {', '.join(EXECUTORS)}")
    if address is not None and kind != "ray":
        raise ConfigError("--address is for --executor ray", fix="Add --executor ray or drop --address")
    from edgepipe.fleet.executors import LocalPoolExecutor, SerialExecutor, default_workers

    if kind == "serial":
        return SerialExecutor()
    if kind == "process":
        return LocalPoolExecutor(workers=workers or default_workers())
    if importlib.util.find_spec("ray") is None:
        raise ConfigError("--executor ray needs Ray, which is not installed", fix="pip install 'edgepipe[ray]'")
    from edgepipe.fleet.ray_executor import RayExecutor

    return RayExecutor(output=output, workers=workers, address=address, retries=retries)


def _echo(run: FleetRun, *, err: bool) -> None:
    report = run.report
    done = sum(c.status in ("built", "restored") for c in report.cells)
    typer.echo(f"fleet: {report.verdict.upper()} — {len(report.cells)} cells ({len(report.models)} models × "
               f"{len(report.targets)} targets), {done} finished, {report.cache_hits} from the build cache, "
               f"{report.wall_seconds:.1f} s", err=err)
    for cell in report.cells:
        if not cell.passed:
            typer.echo(f"  {cell.model} × {cell.target}: {cell.verdict} ({cell.status}) — "
                       f"{' '.join(cell.reason.split())[:200]}", err=err)
    if run.diff is not None:
        typer.echo(f"baseline: {len(run.diff.regressions)} regression(s) in {run.diff.compared} cells", err=err)
        for r in run.diff.regressions:
            typer.echo(f"  {r.model} × {r.target}: {r.check} {r.baseline} → {r.current}", err=err)
    typer.echo(f"  report: {run.files[-1]}", err=err)


def exit_code(run: FleetRun) -> ExitCode:
    """3 when a cell hit a bug in edgepipe, else 2 when a cell failed or regressed, else 0."""
    if run.report.has_bug:
        return ExitCode.INTERNAL_ERROR
    failed = run.report.verdict != "pass" or (run.diff is not None and not run.diff.passed)
    return ExitCode.GATE_FAILED if failed else ExitCode.OK


def _document(run: FleetRun) -> dict[str, Any]:
    code = exit_code(run)
    return {"verdict": "pass" if code == ExitCode.OK else "fail", "exit_code": int(code),
            "files": [str(p) for p in run.files],
            "fleet": run.report.model_dump(mode="json"),
            "baseline": None if run.diff is None else run.diff.model_dump(mode="json")}


def fleet(
    fleet_file: Path | None = typer.Argument(None, help="The fleet file (FLEET.toml): models and targets."),
    executor: str = typer.Option("process", "--executor", "-e", help="process (default) | ray | serial."),
    address: str | None = typer.Option(None, "--address",
                                       help="Ray cluster: auto | ray://host:port (default: a local instance)."),
    workers: int | None = typer.Option(None, "--workers", "-j", min=1, help="Parallel jobs (default: CPUs)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Fleet output folder (overrides the file)."),
    cache: Path | None = typer.Option(None, "--cache", help="Build cache all workers see (overrides the file)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Build every cell; neither read nor fill the cache."),
    retries: int = typer.Option(1, "--retries", min=0, help="Ray: retries of a job whose worker died."),
    baseline: Path | None = typer.Option(None, "--baseline", "-b", help="FLEET_BASELINE.json: exit 2 on regression."),
    write_baseline: Path | None = typer.Option(None, "--write-baseline", help="Write this run as the baseline."),
    schema: bool = typer.Option(False, "--schema", help="Print the JSON Schema of fleet.json and exit."),
    quiet: bool = QuietOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Build every model of FLEET.toml for every target (jobs: model × group of targets sharing quantization)
    on a process pool or Ray, through the shared build cache; write fleet.json, fleet.md and fleet.html."""
    if schema:
        from edgepipe.fleet.report import FleetReport

        typer.echo(json.dumps(FleetReport.model_json_schema(), indent=2))
        return
    if fleet_file is None:
        raise ConfigError("missing FLEET.toml", fix="Give the fleet file: edgepipe fleet FLEET.toml")
    from edgepipe.fleet.baseline import write_fleet_baseline
    from edgepipe.fleet.run import run_fleet
    from edgepipe.fleet.spec import load_fleet

    spec = load_fleet(fleet_file)
    spec = spec.model_copy(update={k: v for k, v in {"output": output, "cache": cache, "workers": workers}.items()
                                   if v is not None})
    runner = _executor(executor, spec.workers, address, spec.output, retries)
    bugs: list[JobOutcome] = []
    with fleet_progress(quiet) as (on_plan, show):
        def on_done(outcome: JobOutcome) -> None:
            show(outcome)
            if outcome.traceback:
                bugs.append(outcome)

        run = run_fleet(spec, fleet_file, runner, on_plan=on_plan, on_done=on_done, use_cache=not no_cache,
                        baseline=baseline)
    if write_baseline is not None:
        write_fleet_baseline(run.report, write_baseline)
    if json_out:
        typer.echo(json.dumps(_document(run), indent=2, ensure_ascii=False))
    if not (json_out and quiet):
        _echo(run, err=json_out)
    for outcome in bugs:
        typer.echo(f"{outcome.job_id}: {outcome.traceback}", err=True)
    if run.report.has_bug:  # exit 3; the JSON document above already says so (one document per run)
        count = sum(c.status == "bug" for c in run.report.cells)
        typer.echo(f"edgepipe: error: {count} cell(s) hit an internal error in edgepipe (reasons above"
                   f"{', tracebacks too' if bugs else ''}); the other cells finished", err=True)
        raise typer.Exit(int(ExitCode.INTERNAL_ERROR))
    if run.report.verdict != "pass":
        raise GateFailed("fleet verdict: fail")
    if run.diff is not None and not run.diff.passed:
        raise GateFailed(f"{len(run.diff.regressions)} regression(s) against the fleet baseline {baseline}")


def register(app: typer.Typer) -> None:
    app.command("fleet", epilog=EPILOG)(fleet)
