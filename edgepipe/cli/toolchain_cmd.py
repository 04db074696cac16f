"""``edgepipe toolchain list|install``: the vendor compilers edgepipe verifies placement against."""

from __future__ import annotations

import typer

toolchain_app = typer.Typer(help="List and install vendor toolchains (Vela, QNN emulator, RKNN).",
                            no_args_is_help=True)


@toolchain_app.command("list")
def list_toolchains() -> None:
    """One line per toolchain: installed or missing, version, environment, and the command that installs it."""
    from edgepipe.vendors.registry import TOOLCHAINS

    for name, factory in TOOLCHAINS.items():
        info = factory().info()
        state = f"installed {info.version}" if info.installed else "missing"
        typer.echo(f"{name:<6} {state:<18} env: {info.environment:<60} install: {info.install_command}")


@toolchain_app.command("install")
def install_toolchain(name: str = typer.Argument(..., help="Toolchain name, e.g. rknn.")) -> None:
    """Create the toolchain's own pinned environment (for tools whose pins clash with edgepipe's)."""
    from edgepipe.errors import UserError
    from edgepipe.vendors.registry import TOOLCHAINS

    if name not in TOOLCHAINS:
        raise UserError(f"unknown toolchain '{name}'", fix=f"Pick one of {', '.join(sorted(TOOLCHAINS))}")
    tool = TOOLCHAINS[name]()
    if not tool.available():
        typer.echo(f"installing {name} into {tool.environment()} (pinned; may take minutes) ...")
    seconds = tool.install()
    typer.echo(f"{name} {tool.version()} ready in {tool.environment()} ({seconds:.0f} s)")


def register(app: typer.Typer) -> None:
    app.add_typer(toolchain_app, name="toolchain")
