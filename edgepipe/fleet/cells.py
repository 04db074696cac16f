"""One cell of the fleet matrix (a model on a target), read from its typed ``BuildReport``.

A cell says the verdict, int8 fidelity (best top-1 and worst drop with labels,
lowest cosine without), what falls back to the CPU, the accelerator partitions,
the target's latency and energy *estimates* (with the estimator's known error),
and the deployed int8 artifact's size. Cells whose build did not finish (bad
input, crashed worker, a bug) carry the reason instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from edgepipe.report import BuildReport
from edgepipe.report.files import Record

#: How a cell came to be: built now, restored from the build cache, or not finished (and why).
CellStatus = Literal["built", "restored", "error", "crashed", "bug"]
#: The int8 artifacts a device deploys, in the order a cell's size is taken from.
DEPLOYED = ("model_int8.tflite", "model_int8.onnx")


class Fidelity(Record):
    """How close int8 stays to float on this cell's evaluation data."""

    int8_top1: float | None = Field(None, description="Best int8 top-1 across formats (0..1); labelled data.")
    drop_points: float | None = Field(None, description="Largest float→int8 top-1 drop, percentage points.")
    min_cosine: float | None = Field(None, description="Lowest cosine of any int8 output vs float (label-free).")


class FleetCell(Record):
    """One model on one target."""

    model: str = Field(description="The fleet's row name.")
    target: str
    status: CellStatus
    verdict: str = Field(description="The report's verdict ('pass', 'fail', ...), or 'error' when none was made.")
    reason: str = Field(description="The verdict's reason, or why the cell did not finish.")
    report: str | None = Field(None, description="The target's report.md, relative to fleet.json.")
    fidelity: Fidelity | None = None
    cpu_ops: dict[str, int] | None = Field(None, description="Op type → nodes left on the CPU; None: not checked.")
    accelerator_mac_share: float | None = Field(None, description="Share of MACs on the accelerator (0..1).")
    partitions: int | None = Field(None, description="Accelerator subgraphs.")
    latency_ms_estimate: float | None = Field(None, description="Estimated latency on the target (ms), default mode.")
    energy_mj_estimate: float | None = Field(None, description="Estimated energy per inference (mJ), default mode.")
    estimate_error: str | None = Field(None, description="The estimator and its known error, e.g. '±25%, ...'.")
    size_bytes: int | None = Field(None, description="Size of the deployed int8 artifact (bytes).")
    artifact: str | None = Field(None, description="Which artifact size_bytes is of.")

    @property
    def key(self) -> tuple[str, str]:
        return self.model, self.target

    @property
    def passed(self) -> bool:
        return self.verdict == "pass" and self.status in ("built", "restored")


def _fidelity(report: BuildReport) -> Fidelity | None:
    accuracy = report.accuracy
    if accuracy is None:
        return None
    cosines = [o.cosine for c in (accuracy.label_free.comparisons if accuracy.label_free else ())
               if "int8" in c.artifact for o in c.outputs]
    return Fidelity(int8_top1=max(accuracy.int8.values()) if accuracy.int8 else None,
                    drop_points=max(accuracy.drop_points.values()) if accuracy.drop_points else None,
                    min_cosine=min(cosines) if cosines else None)


def _deployed(report: BuildReport) -> tuple[str, int] | tuple[None, None]:
    sizes = {a.path: a.size_bytes for a in report.artifacts}
    for name in DEPLOYED:
        if name in sizes:
            return name, sizes[name]
    int8 = [a for a in report.artifacts if a.precision != "fp32"]
    return (int8[0].path, int8[0].size_bytes) if int8 else (None, None)


def cell_from_report(model: str, report: BuildReport, report_path: Path | None, cached: bool) -> FleetCell:
    """The cell of ``report`` (``report_path``: its report.md relative to the fleet output)."""
    support, performance = report.support, report.performance
    mode = None
    if performance is not None:
        mode = next((m for m in performance.modes if m.mode == performance.default_mode),
                    performance.modes[0] if performance.modes else None)
    artifact, size = _deployed(report)
    return FleetCell(
        model=model, target=report.target, status="restored" if cached else "built", verdict=report.verdict,
        reason=report.verdict_reason, report=None if report_path is None else report_path.as_posix(),
        fidelity=_fidelity(report), cpu_ops=dict(support.cpu_ops) if support else None,
        accelerator_mac_share=support.mac_share if support else None,
        partitions=support.partitions if support else None,
        latency_ms_estimate=mode.latency_ms if mode else None, energy_mj_estimate=mode.energy_mj if mode else None,
        estimate_error=f"{performance.estimator}: {performance.error}" if performance else None,
        size_bytes=size, artifact=artifact)


def unfinished_cells(model: str, targets: list[str], status: CellStatus, reason: str) -> list[FleetCell]:
    """Cells of a job that made no report: a bad input (``error``), a lost worker (``crashed``) or a ``bug``."""
    return [FleetCell(model=model, target=t, status=status, verdict="error", reason=reason) for t in targets]
