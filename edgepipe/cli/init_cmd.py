"""``edgepipe init MODEL``: write a commented edgepipe.toml from the model's inputs and outputs, for the user to
edit."""

from __future__ import annotations

from pathlib import Path

import typer

from edgepipe.cli.init_config import describe_inputs, describe_outputs, render_config
from edgepipe.cli.options import EPILOG
from edgepipe.user_files import refuse_existing, write_user_file

_FIX = "Remove it, or give --output another path"


def init(
    model: Path = typer.Argument(..., help="The model: .onnx, .tflite, .keras or a SavedModel folder."),
    output: Path = typer.Option(Path("edgepipe.toml"), "--output", "-o", help="Config file to write."),
) -> None:
    """Write a starting edgepipe.toml for MODEL: its inputs, the dynamic dimensions to fix, the data it wants.

    Refuses to overwrite an existing file.
    """
    refuse_existing(output, "config", _FIX)  # before reading the model: a refusal costs nothing
    inputs = describe_inputs(model)
    text = render_config(model, output, inputs, describe_outputs(model, inputs))
    write_user_file(output, text, what="config", fix=_FIX, overwrite=False)
    typer.echo(f"wrote {output}: edit it, then run `edgepipe build --config {output}`")


def register(app: typer.Typer) -> None:
    app.command("init", epilog=EPILOG)(init)
