"""The ``report.md`` section of the label-free comparison (records: :mod:`edgepipe.metrics.records`)."""

from __future__ import annotations

from edgepipe.figures import num
from edgepipe.metrics.records import ComparisonInfo, LabelFreeInfo, OutputAgreementInfo

__all__ = ["ComparisonInfo", "LabelFreeInfo", "OutputAgreementInfo", "render_label_free"]


def render_label_free(info: LabelFreeInfo) -> list[str]:
    """The ``report.md`` section: one row per compared artifact and output."""
    gate = "gates the verdict" if info.gated else "informational (labels gate the verdict)"
    lines = [f"## Label-free agreement with float ({info.samples} {info.data} samples, {gate})", "",
             "| artifact | vs | output | cosine | SQNR (dB) | max abs error | top-1 agr. | top-5 agr. |",
             "|---|---|---|---|---|---|---|---|"]
    for comp in info.comparisons:
        for out in comp.outputs:
            lines.append(f"| {comp.artifact} | {comp.reference} | {out.output} | {out.cosine:.4f} | "
                         f"{out.sqnr_db:.1f} | {out.max_abs_error:.4g} | {num(out.top1_agreement, '.3f')} | "
                         f"{num(out.top5_agreement, '.3f')} |")
    lines += [f"- {line}" for line in info.failures]
    return [*lines, ""]
