"""The ``report.md`` section of the label-free comparison (records: :mod:`edgepipe.metrics.records`)."""

from __future__ import annotations

from edgepipe.figures import num
from edgepipe.metrics.records import ComparisonInfo, LabelFreeInfo, OutputAgreementInfo, PartInfo, TaskInfo

__all__ = ["ComparisonInfo", "LabelFreeInfo", "OutputAgreementInfo", "render_label_free"]

#: How report.md names the arithmetic an int8 artifact was judged on.
ARITHMETIC = {"exact integer": "exact integer semantics (what NPUs compute)",
              "host runtime": "this machine's ONNX Runtime, default options (what host-cpu runs)"}


def _part(part: PartInfo | None) -> str:
    return "–" if part is None else f"{part.part}: {part.sqnr_db:.1f} dB"


def _worst_part(out: OutputAgreementInfo) -> str:
    worst = min(out.parts, key=lambda p: p.sqnr_db, default=None)
    return _part(worst)


def _task_rows(info: LabelFreeInfo) -> list[str]:
    tasks: list[tuple[ComparisonInfo, TaskInfo]] = [(c, t) for c in info.comparisons for t in c.tasks]
    if not tasks:
        return []
    lines = ["", "Task-level checks against the float model:", "",
             "| artifact | task | outputs | score | needs | detail |", "|---|---|---|---|---|---|"]
    for comp, task in tasks:
        lines.append(f"| {comp.artifact} | {task.kind} | {', '.join(task.outputs)} | {task.metric} {task.value:.3f} | "
                     f"≥ {task.min_score:g} | {task.detail.replace('|', '/')} |")
    lines.append(f"\nWhy these tasks: {'; '.join(dict.fromkeys(t.chosen for _, t in tasks))}.")
    return lines


def render_label_free(info: LabelFreeInfo) -> list[str]:
    """The ``report.md`` section: one row per compared artifact and output, each output's worst part and
    channel, and the task-level checks."""
    gate = "gates the verdict" if info.gated else "informational (labels gate the verdict)"
    lines = [f"## Label-free agreement with float ({info.samples} {info.data} samples, {gate})", "",
             "| artifact | vs | run on | output | cosine | SQNR (dB) | worst part | worst channel | max abs error | "
             "top-1 agr. |", "|---|---|---|---|---|---|---|---|---|---|"]
    for comp in info.comparisons:
        for out in comp.outputs:
            lines.append(f"| {comp.artifact} | {comp.reference} | {comp.arithmetic} | {out.output} | "
                         f"{out.cosine:.4f} | {out.sqnr_db:.1f} | {_worst_part(out)} | {_part(out.worst_channel)} | "
                         f"{out.max_abs_error:.4g} | {num(out.top1_agreement, '.3f')} |")
    lines += _task_rows(info)
    shown = dict.fromkeys(c.arithmetic for c in info.comparisons)
    lines += ["", "Int8 artifacts ran on " + "; ".join(f"{a}: {ARITHMETIC[a]}" for a in shown) + "."]
    lines += [f"- {line}" for line in info.failures]
    return [*lines, ""]
