"""``edgepipe check MODEL --target X``: which nodes run on the target's accelerator, and why the others do not."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from edgepipe.support.report import SupportReport


def _write(report_dir: Path, stem: str, support: SupportReport) -> tuple[Path, Path]:
    """``<stem>.json`` and ``<stem>.md`` in ``report_dir``."""
    from edgepipe.support.render import render_support_markdown

    report_dir.mkdir(parents=True, exist_ok=True)
    json_path = report_dir / f"{stem}.json"
    md_path = report_dir / f"{stem}.md"
    json_path.write_text(support.model_dump_json(indent=2), encoding="utf-8")
    md_path.write_text("\n".join([f"# edgepipe check: {support.artifact}", "",
                                  *render_support_markdown(support)]), encoding="utf-8")
    return json_path, md_path


def check(
    model: Path = typer.Argument(..., help="An .onnx or .tflite model (usually a build's int8 artifact)."),
    target: list[str] = typer.Option(..., "--target", "-t", help="Target profile (repeatable)."),
    verify: bool = typer.Option(False, "--verify", help="Also run the vendor toolchain and report agreement."),
    output: Path = typer.Option(Path("build/check"), "--output", "-o", help="Folder for the JSON and Markdown."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report instead of the table."),
) -> None:
    """Place every node of MODEL on each target's accelerator or its CPU, with the failing constraint and values.

    Writes <output>/<model>-<target>.json and .md. With --verify, compiles MODEL with the target's vendor
    toolchain (Vela for ethos-u*, the QNN HTP emulator for mobile-npu, rknn-toolkit2 for rk3588/rk3576/
    edge-box-npu: `edgepipe toolchain install rknn`) and compares its placement op by op; a missing tool is
    reported with its install command, a graph the compiler rejects as "compile_failed".
    """
    from edgepipe.support import check_graph, read_graph
    from edgepipe.support.render import render_table
    from edgepipe.targets import load_profile

    profiles = [load_profile(name) for name in dict.fromkeys(target)]
    graph = read_graph(model)
    for profile in profiles:
        report = check_graph(graph, profile)
        if verify:
            from edgepipe.vendors import verify_report

            with tempfile.TemporaryDirectory(prefix="edgepipe-verify-") as work:
                report.verification = verify_report(report, profile, model, Path(work))
        json_path, md_path = _write(output, f"{model.stem}-{profile.name}", report)
        if json_out:
            typer.echo(json.dumps(json.loads(report.model_dump_json()), indent=2))
        else:
            typer.echo(render_table(report))
            typer.echo(f"  reports: {json_path}, {md_path}")


def register(app: typer.Typer) -> None:
    app.command("check")(check)
