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
    from edgepipe.stage_log import StageLog

    overrides = data_overrides(model, calib, None)
    cfg = load_config(config, overrides)
    # calibration data stays for export too: onnx2tf needs it to convert an ONNX input to TFLite
    cfg = cfg.model_copy(update={"data": cfg.data.model_copy(update={"evaluation": None})})
    from edgepipe.limits import use_limits

    with use_limits(cfg.limits.to_limits()), stage_progress(quiet) as listener:
        stages = StageLog(listener)
        for path in run_artifacts_only(cfg, output, quantize=quantize, stages=stages):
            typer.echo(str(path))
    for record in stages.records:  # an artifact not written is never silent, whatever the terminal
        if record.status != "ran":
            typer.echo(f"{record.name}: {record.status} ({record.detail})", err=True)


def export(
    config: Path | None = ConfigOpt,
    model: Path | None = ModelOpt,
    calib: Path | None = CalibOpt,
    output: Path = typer.Option(Path("build/export"), "--output", "-o", help="Folder for the artifacts."),
    quiet: bool = QuietOpt,
) -> None:
    """Export the model to float ONNX and float TFLite (batch size 1); an ONNX model needs calibration data for its
    TFLite (onnx2tf reads it)."""
    _run(config, model, calib, output, quiet, quantize=False)


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
