"""``edgepipe baseline update``: make a build's reports the baseline later builds are gated against."""

from __future__ import annotations

from pathlib import Path

import typer

baseline_app = typer.Typer(help="Write and inspect regression baselines.", no_args_is_help=True)


@baseline_app.command("update")
def update(
    report: Path = typer.Argument(..., help="The build to take: build/<model>, summary.json or report.json."),
    output: Path = typer.Option(Path("baseline.json"), "--output", "-o", help="Baseline file to write."),
    replace: bool = typer.Option(False, "--replace",
                                 help="Drop targets the new build lacks (default: keep them, for CI matrices)."),
) -> None:
    """Write REPORT's targets into the baseline file (other targets already there are kept)."""
    from edgepipe.gate import load_reports, write_baseline

    reports = load_reports(report)
    merged = write_baseline(reports, output, replace=replace)
    typer.echo(f"{output}: baseline for {', '.join(merged)} (updated: {', '.join(reports)})")


@baseline_app.command("show")
def show(baseline: Path = typer.Argument(Path("baseline.json"), help="Baseline file.")) -> None:
    """One line per target in the baseline: verdict, int8 accuracy, model hash."""
    from edgepipe.gate import load_baseline
    from edgepipe.report import extract

    for name, report in load_baseline(baseline).items():
        accuracy = extract.best_int8_accuracy(report)
        shown = "–" if accuracy is None else f"{100 * accuracy:.2f}%"
        sha = str((report.get("model") or {}).get("sha256", ""))[:12]
        typer.echo(f"{name:<16} {report.get('verdict', '?'):<4} int8 {shown:<7} model {sha}")


def register(app: typer.Typer) -> None:
    app.add_typer(baseline_app, name="baseline")
