"""``edgepipe init MODEL``: write a commented edgepipe.toml from the model's inputs, for the user to edit."""

from __future__ import annotations

from pathlib import Path

import typer

from edgepipe.cli.options import EPILOG
from edgepipe.errors import ConfigError
from edgepipe.init_config import describe_inputs, render_config


def init(
    model: Path = typer.Argument(..., help="The model: .onnx, .tflite, .keras or a SavedModel folder."),
    output: Path = typer.Option(Path("edgepipe.toml"), "--output", "-o", help="Config file to write."),
) -> None:
    """Write a starting edgepipe.toml for MODEL: its inputs, the dynamic dimensions to fix, the data it wants.

    Refuses to overwrite an existing file.
    """
    if output.exists():
        raise ConfigError("already exists; edgepipe init never overwrites a config", path=output,
                          fix="Remove it, or give --output another path")
    text = render_config(model, output, describe_inputs(model))
    try:
        with output.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise ConfigError("already exists; edgepipe init never overwrites a config", path=output,
                          fix="Remove it, or give --output another path") from None
    except OSError as exc:
        raise ConfigError(f"cannot write the config ({exc.strerror})", path=output,
                          fix="Give --output a writable path") from None
    typer.echo(f"wrote {output}: edit it, then run `edgepipe build --config {output}`")


def register(app: typer.Typer) -> None:
    app.command("init", epilog=EPILOG)(init)
