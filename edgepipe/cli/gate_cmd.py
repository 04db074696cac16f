"""``edgepipe gate REPORT --baseline BASELINE``: compare a finished build with its baseline (exit 2 on a regression).

Also home of what ``build`` and ``gate`` both hand to CI: the diff table, the
JUnit file, the step summary and the ``--json`` document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from edgepipe.cli.options import EPILOG, ConfigOpt
from edgepipe.config import GateConfig, load_config
from edgepipe.errors import GateFailed, ProfileError
from edgepipe.gate import GateResult, compare, load_baseline, load_reports, render_diff_markdown, render_diff_text
from edgepipe.gate.junit import write_junit
from edgepipe.report.schema import BuildReport
from edgepipe.report.writer import append_step_summary
from edgepipe.targets import load_profile

BaselineOpt = typer.Option(None, "--baseline", "-b",
                           help="Baseline to compare with: baseline.json, summary.json, report.json or build folder.")
JunitOpt = typer.Option(None, "--junit", help="Write a JUnit XML file: one test case per target × check.")
JsonOpt = typer.Option(False, "--json", help="Machine output: one JSON document on stdout, nothing else.")


def _device_classes(targets: list[str]) -> dict[str, str]:
    classes: dict[str, str] = {}
    for name in targets:
        try:
            classes[name] = load_profile(name).device_class
        except ProfileError:  # a report from a profile this checkout lacks: op support is judged without it
            continue
    return classes


def publish(reports: dict[str, BuildReport], tolerances: GateConfig, *, gate: GateResult | None,
            junit: Path | None, markdown: list[str]) -> None:
    """Write the JUnit file (when asked) and append ``markdown`` and the gate's diff to the step summary."""
    if junit is not None:
        write_junit(list(reports.values()), junit, tolerances, gate, _device_classes(list(reports)))
    sections = [*markdown, *([render_diff_markdown(gate)] if gate is not None else [])]
    if sections:
        append_step_summary("\n".join(sections))


def gate_document(gate: GateResult | None) -> dict[str, Any] | None:
    """The gate's findings for ``--json``."""
    if gate is None:
        return None
    return {"passed": gate.passed, "compared": gate.compared, "without_baseline": gate.without_baseline,
            "findings": [vars(f) for f in gate.findings]}


def gate(
    report: Path = typer.Argument(..., help="The build to check: build/<model>, summary.json or report.json."),
    baseline: Path = typer.Option(..., "--baseline", "-b", help="baseline.json (or another build's reports)."),
    config: Path | None = ConfigOpt,
    junit: Path | None = JunitOpt,
    json_out: bool = JsonOpt,
) -> None:
    """Compare REPORT with BASELINE per target: accuracy, int8 drop, latency, op placement, size.

    Tolerances come from the [gate] table of the config. Exit code 2 on a regression, with a diff table.
    """
    tolerances = load_config(config).gate
    current = load_reports(report)
    result = compare(current, load_baseline(baseline), tolerances)
    publish(current, tolerances, gate=result, junit=junit, markdown=[])
    if json_out:
        typer.echo(json.dumps(gate_document(result), indent=2, ensure_ascii=False))
    else:
        typer.echo(render_diff_text(result), nl=False)
    if not result.passed:
        raise GateFailed(f"{len(result.regressions)} regression(s) against {baseline}")


def register(app: typer.Typer) -> None:
    app.command("gate", epilog=EPILOG)(gate)
