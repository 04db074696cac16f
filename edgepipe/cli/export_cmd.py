"""``edgepipe export`` and ``edgepipe quantize``: the artifacts alone, without evaluation or report."""

from __future__ import annotations

from pathlib import Path

import typer

from edgepipe.cli.options import CalibOpt, ConfigOpt, ModelOpt, QuietOpt, data_overrides


def _run(config: Path | None, model: Path | None, calib: Path | None, output: Path, quiet: bool,
         quantize: bool) -> None:
    from edgepipe.cli.progress import stage_progress
    from edgepipe.config import load_config
    from edgepipe.pipeline import run_artifacts_only

    overrides = data_overrides(model, calib, None)
    cfg = load_config(config, overrides)
    cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"evaluation": None})})
    if not quantize:
        cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"calibration": None})})
    from edgepipe.limits import use_limits

    with use_limits(cfg.limits.to_limits()), stage_progress(quiet) as listener:
        for path in run_artifacts_only(cfg, output, quantize=quantize, listener=listener):
            typer.echo(str(path))


def export(
    config: Path | None = ConfigOpt,
    model: Path | None = ModelOpt,
    output: Path = typer.Option(Path("build/export"), "--output", "-o", help="Folder for the artifacts."),
    quiet: bool = QuietOpt,
) -> None:
    """Export the model to float ONNX and float TFLite (batch 1)."""
    _run(config, model, None, output, quiet, quantize=False)


def quantize(
    config: Path | None = ConfigOpt,
    model: Path | None = ModelOpt,
    calib: Path | None = CalibOpt,
    output: Path = typer.Option(Path("build/quantize"), "--output", "-o", help="Folder for the artifacts."),
    quiet: bool = QuietOpt,
) -> None:
    """Export, then quantize to int8 (ONNX QDQ and full-integer TFLite) on the calibration data."""
    _run(config, model, calib, output, quiet, quantize=True)


def register(app: typer.Typer) -> None:
    app.command("export")(export)
    app.command("quantize")(quantize)
