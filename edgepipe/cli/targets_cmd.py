"""``edgepipe targets``: the target profiles edgepipe knows."""

from __future__ import annotations

from pathlib import Path

import typer

from edgepipe.cli.options import TargetsDirOpt
from edgepipe.config import PROJECT_ROOT
from edgepipe.support.docs import render_target_doc, write_docs
from edgepipe.targets import available_targets, load_profile, use_profile_dirs

#: Where `edgepipe targets docs` writes by default (checked in; a test fails when stale).
DOCS_FOLDER = PROJECT_ROOT / "docs" / "targets"

targets_app = typer.Typer(help="List and show target profiles.", no_args_is_help=True)


@targets_app.command("list")
def list_targets(targets_dir: Path | None = TargetsDirOpt) -> None:
    """One line per target profile: name, device class, description."""
    with use_profile_dirs([targets_dir]):
        for name in available_targets():
            profile = load_profile(name)
            typer.echo(f"{name:<16} {profile.device_class:<4} {profile.description}")


@targets_app.command("show")
def show_target(name: str = typer.Argument(..., help="Target name."),
                ops: bool = typer.Option(False, "--ops", help="The supported-ops document instead of JSON."),
                targets_dir: Path | None = TargetsDirOpt) -> None:
    """The resolved profile (inherit applied) as JSON, or with --ops its supported operators and constraints."""
    with use_profile_dirs([targets_dir]):
        profile = load_profile(name, allow_abstract=True)
    if ops:
        typer.echo(render_target_doc(profile), nl=False)
        return
    typer.echo(profile.model_dump_json(indent=2))


@targets_app.command("docs")
def write_target_docs(
    output: Path = typer.Option(DOCS_FOLDER, "--output", "-o", help="Folder for the generated documents."),
) -> None:
    """Write each target's supported-ops document (from the constraint docstrings) into docs/targets/."""
    written = write_docs(output, [load_profile(n) for n in available_targets()])
    typer.echo(f"wrote {len(written)} files to {output}")


def register(app: typer.Typer) -> None:
    app.add_typer(targets_app, name="targets")
