"""The fleet report's baseline diff, Markdown and self-contained HTML, on reports built from typed cells."""

from __future__ import annotations

import json
import re
from pathlib import Path

from edgepipe.cli import main
from edgepipe.fleet.baseline import diff_fleet, load_fleet_baseline, write_fleet_baseline
from edgepipe.fleet.cells import Fidelity, FleetCell, unfinished_cells
from edgepipe.fleet.render_html import render_fleet_html
from edgepipe.fleet.render_md import render_fleet_markdown
from edgepipe.fleet.report import FleetReport
from edgepipe.fleet.spec import FleetGate


def _cell(model: str, target: str, *, verdict: str = "pass", top1: float | None = 0.98,
          cosine: float | None = None, cpu: dict[str, int] | None = None) -> FleetCell:
    return FleetCell(model=model, target=target, status="built", verdict=verdict, reason="r",
                     report=f"{model}/{model}/{target}/report.md",
                     fidelity=Fidelity(int8_top1=top1, drop_points=0.0 if top1 else None, min_cosine=cosine),
                     cpu_ops=cpu if cpu is not None else {}, partitions=1, latency_ms_estimate=0.5,
                     energy_mj_estimate=0.01, estimate_error="cost-model: unvalidated", size_bytes=1000,
                     artifact="model_int8.tflite")


def _report(cells: list[FleetCell]) -> FleetReport:
    return FleetReport(fleet_file="f.toml", executor="process", workers=2, wall_seconds=1.0,
                       models=list(dict.fromkeys(c.model for c in cells)),
                       targets=list(dict.fromkeys(c.target for c in cells)), cells=cells, jobs=[],
                       verdict="pass" if all(c.passed for c in cells) else "fail")


BASE = [_cell("a", "host-cpu"), _cell("a", "ethos-u55", cpu={"Softmax": 1}),
        _cell("vad", "host-cpu", top1=None, cosine=0.999), _cell("gone", "host-cpu")]


def test_no_change_is_no_regression() -> None:
    diff = diff_fleet(_report(BASE[:3]), _report(BASE), FleetGate(), Path("b.json"))
    assert diff.passed and diff.compared == 3 and diff.missing == ["gone/host-cpu"] and diff.new == []


def test_each_regression_is_found() -> None:
    now = [_cell("a", "host-cpu", verdict="fail", top1=0.90),  # verdict pass→fail and top-1 -8 points
           _cell("a", "ethos-u55", cpu={"Softmax": 2, "Pad": 1}, top1=0.976),  # within 0.5 points; CPU ops grew
           _cell("vad", "host-cpu", top1=None, cosine=0.98),  # cosine -0.019 > 0.005
           *unfinished_cells("new", ["host-cpu"], "crashed", "worker died")]
    diff = diff_fleet(_report(now), _report(BASE), FleetGate(), Path("b.json"))
    found = {(r.model, r.target, r.check) for r in diff.regressions}
    assert found == {("a", "host-cpu", "verdict"), ("a", "host-cpu", "int8 top-1"), ("a", "ethos-u55", "cpu ops"),
                     ("vad", "host-cpu", "int8 cosine")}
    cpu = next(r for r in diff.regressions if r.check == "cpu ops")
    assert cpu.baseline == "Softmax×1, Pad×0" and cpu.current == "Softmax×2, Pad×1"
    assert diff.new == ["new/host-cpu"] and not diff.passed
    loose = FleetGate(fidelity_points=10, cosine=0.05, cpu_ops=False)
    assert {r.check for r in diff_fleet(_report(now), _report(BASE), loose, Path("b")).regressions} == {"verdict"}


def test_an_unfinished_cell_regresses_a_passing_one() -> None:
    now = unfinished_cells("a", ["host-cpu"], "error", "corrupt model")
    diff = diff_fleet(_report(now), _report(BASE[:1]), FleetGate(), Path("b.json"))
    assert [(r.check, r.current) for r in diff.regressions] == [("verdict", "error (error): corrupt model")]


def test_baseline_round_trip_and_bad_baseline(tmp_path: Path) -> None:
    report = _report(BASE)
    path = write_fleet_baseline(report, tmp_path / "FLEET_BASELINE.json")
    assert load_fleet_baseline(path) == report
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cells": []}))
    toml = tmp_path / "fleet.toml"
    toml.write_text('targets = ["host-cpu"]\n[[models]]\nname = "x"\n')
    assert main(["fleet", str(toml), "--baseline", str(bad), "-q"]) == 1  # refused before any job runs


def test_markdown_and_html() -> None:
    report = _report([*BASE, *unfinished_cells("broken", ["host-cpu"], "error", "bad | file")])
    markdown = render_fleet_markdown(report)
    assert "| a | ✅ pass | ✅ pass |" in markdown and "**estimates**" in markdown
    assert "[ethos-u55](a/a/ethos-u55/report.md)" in markdown and "Softmax×1" in markdown
    assert "cosine 0.9990" in markdown and "bad / file" in markdown
    html = render_fleet_html(report)
    assert html.count('href="a/a/ethos-u55/report.md"') == 2  # the matrix cell and the table row
    assert "function sortBy" in html and "function filterRows" in html and "<option value=\"error\">" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)  # self-contained: nothing from the network
    assert html.count("<tr class=") == len(report.cells)
