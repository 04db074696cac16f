"""Options shared by several commands, and turning them into config overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

ConfigOpt = typer.Option(None, "--config", "-c",
                         help="Build spec (edgepipe.toml); default: ./edgepipe.toml if present.")
ModelOpt = typer.Option(None, "--model", "-m", help="Model: .keras or Keras .h5, SavedModel folder, .onnx or .tflite.")
CalibOpt = typer.Option(None, "--calib", help="Calibration inputs (.npz).")
EvalOpt = typer.Option(None, "--eval", help="Evaluation inputs with integer `labels` (.npz).")
QuietOpt = typer.Option(False, "--quiet", "-q", help="No progress display.")
TargetsDirOpt = typer.Option(None, "--targets-dir",
                             help="Folder of your own target profiles, searched before the built-in ones.")

#: The exit-code line every command's help ends with (the codes themselves: edgepipe.errors.ExitCode).
EPILOG = ("Exit codes: 0 success · 1 user error: bad input or config, or a missing optional toolchain (the "
          "message names the pip install) · 2 gate: accuracy gate failed, a target failed or is not proven, or a "
          "baseline regression · 3 internal error: a bug in edgepipe (third-party tool failures are reported, "
          "never exit 3) · 130 interrupted. With --json, every exit prints one JSON document.")


def data_overrides(model: Path | None, calib: Path | None, evaluation: Path | None) -> dict[str, Any]:
    """CLI values in the config's shape (``None`` = not given)."""
    return {"model": model, "data": {"calibration": calib, "evaluation": evaluation}}
