"""Read the optional report sections (``support``, ``performance``, ``quantization``) when a build has them.

Those sections are added by per-target stages that may or may not be
registered; the gate, the HTML report and the JUnit file use them when present
and say "not checked" when absent. Every reader here takes a report as a plain
dict (``BuildReport.model_dump()``), so a section's exact model is not needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Keys that name where an op runs, in the order they are tried.
_PLACEMENT_KEYS = ("placement", "unit", "device", "runs_on", "placed_on")
_NAME_KEYS = ("name", "op", "node")


def as_dict(report: Any) -> dict[str, Any]:
    """A report as a plain dict, whether it is a pydantic model or already a dict."""
    return report if isinstance(report, dict) else report.model_dump(mode="json")


def _unit(value: Any) -> str | None:
    if isinstance(value, bool):
        return "accelerator" if value else "cpu"
    if not isinstance(value, str):
        return None
    return "cpu" if "cpu" in value.lower() or value.lower() in ("host", "fallback") else "accelerator"


def _placements_in(node: Any, found: dict[str, str]) -> None:
    """Collect ``op name → unit`` from every list of op records anywhere inside ``node``."""
    if isinstance(node, dict):
        name = next((node[k] for k in _NAME_KEYS if isinstance(node.get(k), str)), None)
        unit = next((_unit(node[k]) for k in _PLACEMENT_KEYS if k in node and _unit(node[k])), None)
        if name is not None and unit is not None:
            found[name] = unit
            return
        for value in node.values():
            _placements_in(value, found)
    elif isinstance(node, list):
        for value in node:
            _placements_in(value, found)


def placements(report: Any) -> dict[str, str] | None:
    """``op name → 'accelerator' | 'cpu'`` from the ``support`` section, else the performance estimate's delegate.

    ``None`` when the build has neither (no support check ran).
    """
    data = as_dict(report)
    for section in (data.get("support"), (data.get("performance") or {}).get("delegate")):
        if section:
            found: dict[str, str] = {}
            _placements_in(section, found)
            if found:
                return found
    return None


def default_mode(report: Any) -> dict[str, Any] | None:
    """The performance estimate in the target's default power mode, when the build has one."""
    performance = as_dict(report).get("performance")
    if not isinstance(performance, dict):
        return None
    modes = performance.get("modes") or []
    chosen = [m for m in modes if m.get("mode") == performance.get("default_mode")] or modes
    return chosen[0] if chosen else None


def estimated_latency_ms(report: Any) -> float | None:
    """The target's estimated single-stream latency (ms) in its default power mode."""
    mode = default_mode(report)
    return None if mode is None else mode.get("latency_ms")


def energy_mj(report: Any) -> float | None:
    """The target's estimated energy per inference (mJ) in its default power mode."""
    mode = default_mode(report)
    return None if mode is None else mode.get("energy_mj")


def deployed_latency_ms(report: Any) -> tuple[float, str] | None:
    """The latency to compare targets by (ms) and where it comes from.

    The target's estimate when the build has one, else the host median of the
    int8 TFLite artifact (the one edge runtimes deploy), else of any artifact.
    """
    estimate = estimated_latency_ms(report)
    if estimate is not None:
        return float(estimate), "estimate"
    measured = as_dict(report).get("latency_ms") or {}
    for key in ("model_int8.tflite", "model_int8.onnx", *measured):
        if key in measured:
            return float(measured[key]), f"host {key}"
    return None


def best_int8_accuracy(report: Any) -> float | None:
    """The best int8 accuracy across formats (0..1), else the float accuracy."""
    accuracy = as_dict(report).get("accuracy") or {}
    int8 = accuracy.get("int8") or {}
    return max(int8.values()) if int8 else accuracy.get("float")


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


def _from_records(records: list[Any]) -> LayerScores | None:
    sqnr = {f"{r.get('format', '')} {_short(r['layer'])}".strip(): float(r["isolated_sqnr_db"]) for r in records
            if isinstance(r, dict) and isinstance(r.get("layer"), str)
            and isinstance(r.get("isolated_sqnr_db"), int | float)}
    if sqnr:
        return LayerScores(sqnr, "SQNR with only this layer quantized (dB); lower = more sensitive", False)
    found = {}
    for item in records:
        if not isinstance(item, dict):
            continue
        name = next((item[k] for k in ("layer", "name", "op") if isinstance(item.get(k), str)), None)
        score = next((item[k] for k in ("sensitivity", "error", "mse", "score", "drop_points")
                      if isinstance(item.get(k), int | float)), None)
        if name is not None and score is not None:
            found[_short(name)] = float(score)
    return LayerScores(found, "sensitivity; higher = more sensitive", True) if found else None


def layer_sensitivity(report: Any) -> LayerScores | None:
    """Per-layer sensitivity from the ``quantization`` section, when the build recorded one.

    Read: the ladder's per-layer SQNR (``sensitivity`` records with ``isolated_sqnr_db``), or
    any ``layer → score`` mapping or list of ``{layer, score}`` records under a sensitivity key.
    """
    section = as_dict(report).get("quantization")
    if not isinstance(section, dict):
        return None
    for key in ("sensitivity", "layer_sensitivity", "per_layer", "layers"):
        value = section.get(key)
        if isinstance(value, dict) and value and all(isinstance(v, int | float) for v in value.values()):
            return LayerScores({_short(str(k)): float(v) for k, v in value.items()},
                               "sensitivity; higher = more sensitive", True)
        if isinstance(value, list) and value:
            scores = _from_records(value)
            if scores is not None:
                return scores
    return None
