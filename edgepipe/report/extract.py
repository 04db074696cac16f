"""Read the optional report sections (``support``, ``performance``, ``quantization``) through the typed model.

Those sections are added by per-target stages that may or may not be registered;
the gate, the HTML report and the JUnit file use them when present and say "not
checked" when absent. Every reader takes a :class:`~edgepipe.report.BuildReport`;
a report still held as plain data (a baseline file) is validated into one first
(:func:`as_report`), so no reader guesses a field from its name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from edgepipe.perf.report import ModeEstimate
from edgepipe.report.schema import BuildReport

#: The artifacts whose host latency stands for a target without an estimate, in order: what edge runtimes deploy.
DEPLOYED_ORDER = ("model_int8.tflite", "model_int8.onnx")


def as_report(report: BuildReport | Mapping[str, Any]) -> BuildReport:
    """``report`` as the typed model (plain data, e.g. from a baseline file, is validated).

    A baseline written by an older edgepipe may hold optional sections in a shape this one no longer reads, or
    sections it retired: those are left out (so nothing is compared on them) rather than failing the gate.
    Required fields that do not validate still raise.
    """
    if isinstance(report, BuildReport):
        return report
    try:
        return BuildReport.model_validate(report)
    except ValidationError as exc:
        fields = BuildReport.model_fields
        bad = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
        droppable = {name for name, field in fields.items() if not field.is_required()} | (set(report) - set(fields))
        if not bad <= droppable:
            raise
        return BuildReport.model_validate({k: v for k, v in report.items() if k in fields and k not in bad})


def as_dict(report: BuildReport | Mapping[str, Any]) -> dict[str, Any]:
    """``report`` as JSON-shaped data (what a baseline file holds), for readers that compare raw values."""
    return dict(report) if isinstance(report, Mapping) else report.model_dump(mode="json")


def placements(report: BuildReport | Mapping[str, Any]) -> dict[str, str] | None:
    """``op name → 'accelerator' | 'cpu'`` from the ``support`` section, else the performance estimate's delegate.

    ``None`` when the build has neither (no support check ran).
    """
    typed = as_report(report)
    if typed.support is not None and typed.support.node_verdicts:
        return {node.name: node.placement for node in typed.support.node_verdicts}
    delegate = typed.performance.delegate if typed.performance is not None else None
    if delegate is not None and delegate.ops:
        return {op.name: op.unit for op in delegate.ops}
    return None


def default_mode(report: BuildReport | Mapping[str, Any]) -> ModeEstimate | None:
    """The performance estimate in the target's default power mode, when the build has one."""
    performance = as_report(report).performance
    if performance is None or not performance.modes:
        return None
    return next((m for m in performance.modes if m.mode == performance.default_mode), performance.modes[0])


def estimated_latency_ms(report: BuildReport | Mapping[str, Any]) -> float | None:
    """The target's estimated single-stream latency (ms) in its default power mode."""
    mode = default_mode(report)
    return None if mode is None else mode.latency_ms


def energy_mj(report: BuildReport | Mapping[str, Any]) -> float | None:
    """The target's estimated energy per inference (mJ) in its default power mode (always a model estimate)."""
    mode = default_mode(report)
    return None if mode is None else mode.energy_mj


def deployed_latency_ms(report: BuildReport | Mapping[str, Any]) -> tuple[float, str] | None:
    """The latency to compare targets by (ms) and what it is.

    The target's estimate when the build has one (labelled with its kind: vendor or model
    estimate), else the host median of the int8 TFLite artifact (the one edge runtimes
    deploy), else of any artifact (measured).
    """
    typed = as_report(report)
    mode = default_mode(typed)
    if mode is not None:
        return float(mode.latency_ms), mode.kind
    measured = typed.latency_ms
    for key in (*DEPLOYED_ORDER, *measured):
        if key in measured:
            return float(measured[key]), f"measured: host {key}"
    return None


def best_int8_accuracy(report: BuildReport | Mapping[str, Any]) -> float | None:
    """The best int8 accuracy across formats (0..1), else the float accuracy."""
    accuracy = as_report(report).accuracy
    if accuracy is None:
        return None
    return max(accuracy.int8.values()) if accuracy.int8 else accuracy.float


@dataclass(frozen=True)
class LayerScores:
    """One number per quantized layer and what it means (``label`` names the unit and its direction)."""

    values: dict[str, float]
    label: str
    higher_is_worse: bool


def _short(layer: str, limit: int = 40) -> str:
    """A layer name short enough for a plot axis: TFLite's fused names keep their last part."""
    name = layer.split(";")[-1]
    return name if len(name) <= limit else "…" + name[-(limit - 1):]


def layer_sensitivity(report: BuildReport | Mapping[str, Any]) -> LayerScores | None:
    """Per-layer sensitivity from the ``quantization`` section: each layer's SQNR (dB) with only that layer
    quantized, when the build recorded one."""
    quantization = as_report(report).quantization
    if quantization is None:
        return None
    sqnr = {f"{r.format} {_short(r.layer)}": float(r.isolated_sqnr_db) for r in quantization.sensitivity
            if r.isolated_sqnr_db is not None}
    if not sqnr:
        return None
    return LayerScores(sqnr, "SQNR with only this layer quantized (dB); lower = more sensitive", False)
