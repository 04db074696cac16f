"""The report's plots as SVG text (matplotlib, no pyplot state, no timestamps: same data → same bytes)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Fixed salt for matplotlib's SVG element ids, so the same plot always gives the same bytes.
_SVG_SALT = "edgepipe"


@dataclass(frozen=True)
class TargetPoint:
    """One target in the accuracy/latency/energy plot."""

    target: str
    accuracy_pct: float
    latency_ms: float
    energy_mj: float | None


def pareto_front(points: list[TargetPoint]) -> list[TargetPoint]:
    """The points no other point beats on both latency (lower) and accuracy (higher), by latency."""
    front = [p for p in points
             if not any(q.latency_ms <= p.latency_ms and q.accuracy_pct >= p.accuracy_pct
                        and (q.latency_ms, q.accuracy_pct) != (p.latency_ms, p.accuracy_pct) for q in points)]
    return sorted(front, key=lambda p: p.latency_ms)


def _svg(figure: Figure) -> str:
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": _SVG_SALT, "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog and DOCTYPE: it is inlined in HTML


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def pareto_svg(points: list[TargetPoint]) -> str:
    """Accuracy (%) against latency (ms) per target, energy (mJ) as colour, the Pareto front as a line."""
    figure = _figure(6.4, 4.0)
    axes = figure.add_subplot()
    energies = [p.energy_mj for p in points]
    known = [e for e in energies if e is not None]
    have_energy = len(known) == len(energies)
    colour: dict[str, Any] = {"color": "tab:blue"}
    if have_energy:
        from matplotlib.colors import LogNorm

        wide = min(known) > 0 and max(known) > 20 * min(known)
        colour = {"c": energies, "cmap": "viridis", **({"norm": LogNorm()} if wide else {})}
    scatter = axes.scatter([p.latency_ms for p in points], [p.accuracy_pct for p in points], s=90,
                           edgecolors="black", zorder=3, **colour)
    for point in points:
        axes.annotate(point.target, (point.latency_ms, point.accuracy_pct), textcoords="offset points",
                      xytext=(6, 6), fontsize=8)
    front = pareto_front(points)
    axes.step([p.latency_ms for p in front], [p.accuracy_pct for p in front], where="post", color="tab:red",
              linewidth=1.5, label="Pareto front", zorder=2)
    if have_energy:
        figure.colorbar(scatter, ax=axes, label="energy per inference (mJ)")
    latencies = [p.latency_ms for p in points]
    if min(latencies) > 0 and max(latencies) > 20 * min(latencies):
        axes.set_xscale("log")
    axes.set_xlabel("latency (ms)")
    axes.set_ylabel("int8 accuracy (%)")
    axes.grid(True, alpha=0.3)
    axes.legend(loc="lower right", fontsize=8)
    return _svg(figure)


def sensitivity_svg(title: str, scores: dict[str, float], label: str) -> str:
    """One bar per layer, most sensitive first; ``label`` names the unit (the quantization stage's)."""
    names = list(scores)
    figure = _figure(6.4, max(2.0, 0.3 * len(names) + 1.0))
    axes = figure.add_subplot()
    axes.barh(names, [scores[n] for n in names], color="tab:orange")
    axes.invert_yaxis()
    axes.set_xlabel(label)
    if title:
        axes.set_title(title, fontsize=10)
    axes.tick_params(axis="y", labelsize=7)
    return _svg(figure)


def placement_svg(counts: dict[str, tuple[int, int]]) -> str:
    """Per target, how many ops run on the accelerator and how many fall back to the CPU."""
    targets = list(counts)
    accelerator = [counts[t][0] for t in targets]
    cpu = [counts[t][1] for t in targets]
    figure = _figure(6.4, max(2.0, 0.45 * len(targets) + 1.0))
    axes = figure.add_subplot()
    axes.barh(targets, accelerator, color="tab:green", label="accelerator")
    axes.barh(targets, cpu, left=accelerator, color="tab:gray", label="CPU fallback")
    axes.invert_yaxis()
    axes.set_xlabel("ops")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return _svg(figure)
