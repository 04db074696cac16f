"""The quantization ladder's section of ``report.md``: the decision trail and the ten most sensitive layers."""

from __future__ import annotations

from collections.abc import Mapping

from edgepipe.figures import num
from edgepipe.quantize.report import QuantizationReport, StepOutcome

_STATUS = {"met": "✅ met", "missed": "❌ missed", "skipped": "– skipped"}
_LETTER = {"ptq": "a", "calibration": "b", "equalize": "c", "nncf": "d", "mixed": "e", "qat": "f"}


def _letter(step: str) -> str:
    return _LETTER.get(step, "+")


def _selection(step: StepOutcome) -> str:
    cells = []
    for fmt, sel in step.selection.items():
        text = f"{fmt} cos {sel.min_cosine:.4f}, {sel.min_sqnr_db:.1f} dB"
        cells.append(text + (f", drop {sel.drop_points:+.2f}" if sel.drop_points is not None else ""))
    return "; ".join(cells) or "–"


def _cells(values: Mapping[str, object], fmt: str) -> str:
    return ", ".join(f"{k} {fmt.format(v)}" for k, v in values.items()) or "–"


def _step_row(step: StepOutcome) -> str:
    kept = ", ".join(f"{fmt}: {len(layers)}" for fmt, layers in step.kept_layers.items() if layers) or "–"
    accuracy = _cells({k: 100 * v for k, v in step.accuracy.items()}, "{:.2f}%")
    note = "; ".join(p for p in (step.why if step.step != "ptq" else "", step.note, step.cost) if p)
    return (f"| ({_letter(step.step)}) {step.title} | {_STATUS[step.status]} | {_cells(step.recipe, '{}')} | "
            f"{_selection(step)} | {accuracy} | {_cells(step.drop_points, '{:+.2f}')} | "
            f"{_cells(step.size_bytes, '{:,}')} | {kept} | "
            f"{step.seconds:.1f} | {note} |")


def render_quantization(report: QuantizationReport) -> list[str]:
    """Markdown lines: which step the ladder stopped at (or what it tried), every step, the worst layers."""
    goal = (f"top-1 changes within {report.threshold_points:g} points" if report.metric == "top1"
            else "every label-free threshold")
    if report.met:
        headline = f"Stopped at step ({_letter(report.final_step or 'ptq')}) **{report.final_step}**: {goal} " \
                   "on the selection split."
    else:
        tried = ", ".join(s.step for s in report.steps if s.status != "skipped")
        headline = (f"No step met {goal} on the selection split (tried: {tried}); kept the best attempt "
                    f"({report.final_step}). Still sensitive: {', '.join(report.still_sensitive) or '–'}.")
    lines = ["## Quantization ladder", "", headline, "",
             f"Decisions read only the {report.decided_on or 'selection split'}; the evaluation split judges "
             "the kept result.", "", f"Allowed precisions: {', '.join(report.allowed_precisions)}.", ""]
    lines += [f"- preparation: {note}" for note in report.preparation] + ([""] if report.preparation else [])
    if report.unfinished:
        lines += [f"Time budget spent ({num(report.seconds, '.0f')} s of {num(report.time_budget_s, 'g')} s, "
                  "quantization.time_budget_s): the kept result is the best of what ran; not done:", ""]
        lines += [f"- {line}" for line in report.unfinished] + [""]
    lines += ["| step | outcome | setting | selection split | evaluation accuracy | evaluation drop (points) "
              "| size (bytes) | layers kept higher | time (s) | note |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [_step_row(step) for step in report.steps]
    kept = [(fmt, k) for s in report.steps if s.step == report.final_step for fmt, ks in s.kept_layers.items()
            for k in ks]
    if kept:
        lines += ["", "Layers kept above int8: " + ", ".join(f"{fmt} `{k.layer}` ({k.precision})" for fmt, k in kept)
                  + "."]
    worst = report.worst_layers(10)
    if worst:
        lines += ["", f"### Most sensitive layers (ten worst; all in report.json) — {report.sensitivity_recipe}", "",
                  "| format | layer | op | isolated SQNR (dB) | isolated cosine | accumulated SQNR (dB) "
                  "| accumulated cosine |", "|---|---|---|---|---|---|---|"]
        for row in worst:
            lines.append(f"| {row.format} | `{row.layer[:60]}` | {row.op} | {num(row.isolated_sqnr_db)} | "
                         f"{num(row.isolated_cosine, '.4f')} | {num(row.accumulated_sqnr_db)} | "
                         f"{num(row.accumulated_cosine, '.4f')} |")
    lines.append("")
    return lines


