"""``edgepipe build``: the whole pipeline."""

from __future__ import annotations

from pathlib import Path

import typer

from edgepipe.cli.options import CalibOpt, ConfigOpt, EvalOpt, ModelOpt, QuietOpt, data_overrides
from edgepipe.errors import GateFailed


def build(
    config: Path | None = ConfigOpt,
    model: Path | None = ModelOpt,
    calib: Path | None = CalibOpt,
    evaluation: Path | None = EvalOpt,
    target: list[str] | None = typer.Option(None, "--target", "-t", help="Target profile (repeatable)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Output root (default: build)."),
    threshold: float | None = typer.Option(None, "--threshold", help="Max int8 top-1 drop (points)."),
    quiet: bool = QuietOpt,
) -> None:
    """Export, quantize, evaluate and time a model; write build/<model>/<target>/ with report.json and report.md.

    With no config and no options it builds the bundled reference model for host-cpu.
    """
    from edgepipe.cli.progress import stage_progress
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_build

    overrides = data_overrides(model, calib, evaluation)
    overrides.update(targets=target or None, output=output, accuracy={"max_drop_points": threshold})
    cfg = load_config(config, overrides)
    with stage_progress(quiet) as listener:
        result = run_build(cfg, listener)
    for name, report in result.reports.items():
        typer.echo(f"{name}: {report.verdict.upper()} — {report.verdict_reason}")
        typer.echo(f"  outputs: {result.folders[name]}")
    if not result.passed:
        raise GateFailed("accuracy gate failed")


def register(app: typer.Typer) -> None:
    from edgepipe.cli.app import EPILOG

    app.command("build", epilog=EPILOG)(build)
