"""``edgepipe targets``: the target profiles edgepipe knows."""

from __future__ import annotations

import typer

targets_app = typer.Typer(help="List and show target profiles.", no_args_is_help=True)


@targets_app.command("list")
def list_targets() -> None:
    """One line per target profile: name, device class, description."""
    from edgepipe.targets import available_targets, load_profile

    for name in available_targets():
        profile = load_profile(name)
        typer.echo(f"{name:<16} {profile.device_class:<4} {profile.description}")


@targets_app.command("show")
def show_target(name: str = typer.Argument(..., help="Target name.")) -> None:
    """The resolved profile (inherit applied) as JSON."""
    from edgepipe.targets import load_profile

    typer.echo(load_profile(name).model_dump_json(indent=2))


def register(app: typer.Typer) -> None:
    app.add_typer(targets_app, name="targets")
