"""The fleet baseline: a saved ``fleet.json``, and the diff of a run against it (exit 2 on any regression).

A cell regresses when its verdict goes from pass to anything else (an
unfinished cell included), its best int8 top-1 falls by more than
``gate.fidelity_points``, its lowest int8 cosine falls by more than
``gate.cosine``, or (``gate.cpu_ops``) an op type has more nodes on the CPU
than in the baseline. Cells only in the run are new; cells only in the
baseline are listed as missing (not regressions: the fleet file changed).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from edgepipe.errors import UserError
from edgepipe.figures import num
from edgepipe.fleet.cells import FleetCell
from edgepipe.fleet.report import FleetReport
from edgepipe.fleet.spec import FleetGate
from edgepipe.report.files import Record
from edgepipe.user_files import write_user_file


class CellRegression(Record):
    model: str
    target: str
    check: str = Field(description="'verdict', 'int8 top-1', 'int8 cosine' or 'cpu ops'.")
    baseline: str
    current: str
    tolerance: str


class FleetDiff(Record):
    """A run compared with its baseline."""

    baseline: str = Field(description="The baseline file.")
    compared: int = Field(description="Cells in both.")
    regressions: list[CellRegression]
    new: list[str] = Field(description="'model/target' cells the baseline lacks.")
    missing: list[str] = Field(description="'model/target' cells the run lacks.")

    @property
    def passed(self) -> bool:
        return not self.regressions


def load_fleet_baseline(path: Path) -> FleetReport:
    """A baseline written by ``edgepipe fleet ... --write-baseline`` (a ``fleet.json``)."""
    try:
        return FleetReport.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise UserError("fleet baseline not found", path=path,
                        fix="Write one with `edgepipe fleet FLEET.toml --write-baseline PATH`") from None
    except ValidationError as exc:
        raise UserError(f"not a fleet baseline ({exc.errors()[0]['msg']})", path=path,
                        fix="Give a fleet.json or a file written by --write-baseline") from None


def write_fleet_baseline(report: FleetReport, path: Path) -> Path:
    """Save ``report`` as the baseline (the whole fleet.json: every figure a later diff needs)."""
    return write_user_file(path, report.model_dump_json(indent=2) + "\n", what="fleet baseline",
                           fix="Give --write-baseline a writable path", overwrite=True)


def _cell_regressions(old: FleetCell, new: FleetCell, gate: FleetGate) -> list[CellRegression]:
    found: list[CellRegression] = []

    def add(check: str, baseline: str, current: str, tolerance: str) -> None:
        found.append(CellRegression(model=new.model, target=new.target, check=check, baseline=baseline,
                                    current=current, tolerance=tolerance))

    if old.verdict == "pass" and not new.passed:
        add("verdict", "pass", f"{new.verdict} ({new.status}): {new.reason}", "no change")
    of, nf = old.fidelity, new.fidelity
    if of and nf and of.int8_top1 is not None and nf.int8_top1 is not None:
        if 100 * (of.int8_top1 - nf.int8_top1) > gate.fidelity_points:
            add("int8 top-1", num(100 * of.int8_top1, ".2f") + "%", num(100 * nf.int8_top1, ".2f") + "%",
                f"-{gate.fidelity_points} points")
    if of and nf and of.min_cosine is not None and nf.min_cosine is not None:
        if of.min_cosine - nf.min_cosine > gate.cosine:
            add("int8 cosine", num(of.min_cosine, ".4f"), num(nf.min_cosine, ".4f"), f"-{gate.cosine}")
    if gate.cpu_ops and old.cpu_ops is not None and new.cpu_ops is not None:
        grown = {op: n for op, n in new.cpu_ops.items() if n > old.cpu_ops.get(op, 0)}
        if grown:
            add("cpu ops", ", ".join(f"{op}×{old.cpu_ops.get(op, 0)}" for op in grown),
                ", ".join(f"{op}×{n}" for op, n in grown.items()), "no new CPU nodes")
    return found


def diff_fleet(report: FleetReport, baseline: FleetReport, gate: FleetGate, source: Path) -> FleetDiff:
    """Compare every cell of ``report`` with the same (model, target) cell of ``baseline``."""
    old = {c.key: c for c in baseline.cells}
    new = {c.key: c for c in report.cells}
    regressions = [r for key in new if key in old for r in _cell_regressions(old[key], new[key], gate)]
    return FleetDiff(baseline=str(source), compared=len(new.keys() & old.keys()), regressions=regressions,
                     new=[f"{m}/{t}" for m, t in new if (m, t) not in old],
                     missing=[f"{m}/{t}" for m, t in old if (m, t) not in new])


def render_diff_markdown(diff: FleetDiff) -> str:
    """The diff as a Markdown section (appended to fleet.md)."""
    icon = "❌" if diff.regressions else "✅"
    lines = ["## Baseline comparison", "",
             f"{icon} {len(diff.regressions)} regression(s) in {diff.compared} cell(s) compared with "
             f"`{diff.baseline}`", ""]
    if diff.regressions:
        lines += ["| model | target | check | baseline | current | tolerance |", "|---|---|---|---|---|---|"]
        lines += [f"| {r.model} | {r.target} | {r.check} | {r.baseline} | {r.current.replace('|', '/')} | "
                  f"{r.tolerance} |" for r in diff.regressions]
        lines.append("")
    if diff.new:
        lines += [f"New cells (no baseline): {', '.join(diff.new)}", ""]
    if diff.missing:
        lines += [f"Missing cells (in the baseline, not in this run): {', '.join(diff.missing)}", ""]
    return "\n".join(lines)
