"""``edgepipe schema``: print the JSON Schema of report.json (or summary.json)."""

from __future__ import annotations

import json

import typer


def schema(
    summary: bool = typer.Option(False, "--summary", help="The schema of summary.json instead of report.json."),
) -> None:
    """Print the JSON Schema (draft 2020-12) of report.json, generated from edgepipe's own report model."""
    from edgepipe.report.json_schema import report_json_schema

    typer.echo(json.dumps(report_json_schema("summary" if summary else "report"), indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)
