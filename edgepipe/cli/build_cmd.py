"""``edgepipe build``: the whole pipeline, for one target, several, or all of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from edgepipe.cli.gate_cmd import BaselineOpt, JsonOpt, JunitOpt, gate_document, publish
from edgepipe.cli.options import (
    EPILOG,
    CalibOpt,
    ConfigOpt,
    EvalOpt,
    ModelOpt,
    QuietOpt,
    TargetsDirOpt,
    data_overrides,
)
from edgepipe.errors import ConfigError, ExitCode, GateFailed

if TYPE_CHECKING:
    from edgepipe.config import BuildConfig
    from edgepipe.gate import GateResult
    from edgepipe.pipeline import BuildResult


def _targets(target: list[str] | None, all_targets: bool) -> list[str] | None:
    if not all_targets:
        return target or None
    if target:
        raise ConfigError("give --target or --all-targets, not both", fix="Drop one of them")
    from edgepipe.targets import available_targets

    return available_targets()


def _cache(cfg: BuildConfig, no_cache: bool) -> Any:
    if no_cache or not cfg.cache.enabled:
        return None
    from edgepipe.cache import BuildCache, cache_folder

    return BuildCache(cache_folder(cfg))


def _markdown(result: BuildResult) -> list[str]:
    """What goes to the step summary: the summary when there are several targets, then each report.md."""
    from edgepipe.report.summary import SUMMARY_MD
    from edgepipe.report.writer import REPORT_MD

    summary = (result.root / SUMMARY_MD).read_text(encoding="utf-8").split("## Baseline comparison")[0]
    parts = [summary.rstrip("\n") + "\n"] if len(result.reports) > 1 else []  # publish() adds the diff once
    return parts + [(folder / REPORT_MD).read_text(encoding="utf-8") for folder in result.folders.values()]


def _echo_result(result: BuildResult, gate: GateResult | None, *, err: bool) -> None:
    from edgepipe.gate import render_diff_text

    for name, report in result.reports.items():
        cached = " (from cache)" if result.cached.get(name) else ""
        typer.echo(f"{name}: {report.verdict.upper()} — {report.verdict_reason}{cached}", err=err)
        typer.echo(f"  outputs: {result.folders[name]}", err=err)
    if len(result.reports) > 1:
        typer.echo(f"summary: {result.root / 'summary.md'}", err=err)
    if gate is not None:
        typer.echo(render_diff_text(gate), nl=False, err=err)


def _document(result: BuildResult) -> dict[str, Any]:
    assert result.summary is not None
    gate = result.gate
    return {"verdict": result.summary.verdict if gate is None or gate.passed else "fail",
            "exit_code": int(ExitCode.OK if result.passed else ExitCode.GATE_FAILED),
            "root": str(result.root), "outputs": {n: str(p) for n, p in result.folders.items()},
            "summary": result.summary.model_dump(mode="json"), "gate": gate_document(gate)}


def _gate_message(result: BuildResult, baseline: Path | None) -> str:
    """Why the build exits 2: the targets that failed or are not proven, or the baseline's regressions."""
    blocked = [f"{name} {report.verdict}" for name, report in result.reports.items() if report.verdict != "pass"]
    if blocked:
        return "gate: " + ", ".join(blocked)
    assert result.gate is not None
    return f"{len(result.gate.regressions)} regression(s) against the baseline {baseline}"


def build(
    config: Path | None = ConfigOpt,
    model: Path | None = ModelOpt,
    calib: Path | None = CalibOpt,
    evaluation: Path | None = EvalOpt,
    target: list[str] | None = typer.Option(None, "--target", "-t", help="Target profile (repeatable)."),
    all_targets: bool = typer.Option(False, "--all-targets", help="Every profile `edgepipe targets list` shows."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Output root (default: build)."),
    threshold: float | None = typer.Option(None, "--threshold", help="Max int8 top-1 drop (points)."),
    baseline: Path | None = BaselineOpt,
    junit: Path | None = JunitOpt,
    no_cache: bool = typer.Option(False, "--no-cache", help="Build everything; neither read nor fill the cache."),
    quiet: bool = QuietOpt,
    json_out: bool = JsonOpt,
    targets_dir: Path | None = TargetsDirOpt,
) -> None:
    """Export, quantize, evaluate and time a model; write build/<model>/<target>/ with report.json and report.md,
    and build/<model>/summary.{json,md} and report.html across the targets.

    With no config and no options it builds the bundled reference model for host-cpu. An unchanged target is
    restored from the build cache. A target passes only with its int8 artifact, its accuracy met on evaluation
    data and its profile's compatibility requirements held; otherwise it fails or is "not proven" (exit 2).
    A third-party tool that fails (quantizer, converter, runtime) is reported with a next step and the build
    goes on. With --baseline, exit code 2 also on any regression against the baseline. With --json, one JSON
    document on stdout whatever the exit code.
    """
    from edgepipe.cli.progress import stage_progress
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_build

    overrides = data_overrides(model, calib, evaluation)
    overrides.update(targets=_targets(target, all_targets), output=output,
                     accuracy={"max_drop_points": threshold}, gate={"baseline": baseline})
    overrides.update(targets_dir=targets_dir)
    cfg = load_config(config, overrides)
    from edgepipe.limits import use_limits

    with use_limits(cfg.limits.to_limits()), stage_progress(quiet or json_out) as listener:
        result = run_build(cfg, listener, cache=_cache(cfg, no_cache))  # the baseline gate runs in the library
    publish(result.reports, cfg.gate, gate=result.gate, junit=junit, markdown=_markdown(result))
    if json_out:
        typer.echo(json.dumps(_document(result), indent=2, ensure_ascii=False))
    if not (json_out and quiet):
        _echo_result(result, result.gate, err=json_out)
    if not result.passed:
        raise GateFailed(_gate_message(result, cfg.gate.baseline))


def register(app: typer.Typer) -> None:
    app.command("build", epilog=EPILOG)(build)
