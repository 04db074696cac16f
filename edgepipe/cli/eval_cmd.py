"""``edgepipe eval``: top-1 accuracy of a deployable model (.onnx / .tflite) on labelled data."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from edgepipe.cli.options import EvalOpt


def evaluate(
    model: Path = typer.Argument(..., help="An .onnx or .tflite model."),
    evaluation: Path | None = EvalOpt,
) -> None:
    """Print the top-1 accuracy of MODEL on the evaluation data (JSON on stdout)."""
    from edgepipe.config import DEFAULT_DATA
    from edgepipe.data.dataset import load_dataset
    from edgepipe.errors import ModelLoadError
    from edgepipe.load import load_model
    from edgepipe.metrics.accuracy import evaluate_top1

    source = load_model(model)
    if source.format not in ("onnx", "tflite"):
        raise ModelLoadError("eval takes a deployable model", path=model,
                             fix="Give an .onnx or .tflite file (edgepipe export makes them)")
    data = load_dataset(evaluation or DEFAULT_DATA / "evaluation.npz", source.signature, role="evaluation",
                        need_labels=True)
    top1 = evaluate_top1(model, data)
    typer.echo(json.dumps({"model": str(model), "metric": "top1", "value": top1, "samples": len(data)}))


def register(app: typer.Typer) -> None:
    app.command("eval")(evaluate)
