"""Box F1 and mean average precision of candidate detections against reference detections (or labels).

A candidate box counts as found when it matches a reference box of its class at IoU ≥ ``iou``
(:func:`~edgepipe.metrics.task.boxes.match_flags`: greedy, best score first).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgepipe.metrics.task.boxes import Detections, match_flags
from edgepipe.metrics.task.score import REFERENCE, MatchCounts, TaskScore


def _check_batch(reference: Sequence[Detections], candidate: Sequence[Detections]) -> None:
    if len(reference) != len(candidate):
        raise ValueError(f"{len(reference)} reference samples but {len(candidate)} candidate samples")


def box_counts(reference: Sequence[Detections], candidate: Sequence[Detections], iou: float = 0.5) -> MatchCounts:
    """Boxes matched, reference boxes and candidate boxes, summed over the samples (one :class:`Detections` each)."""
    _check_batch(reference, candidate)
    total = MatchCounts(0, 0, 0)
    for ref, cand in zip(reference, candidate):
        total += MatchCounts(int(match_flags(ref, cand, iou).sum()), len(ref), len(cand))
    return total


def class_average_precisions(reference: Sequence[Detections], candidate: Sequence[Detections],
                             iou: float = 0.5) -> dict[int, float]:
    """Average precision of each class present in the reference, in [0, 1]: candidate boxes of the class from all
    samples ranked by score, precision made monotone from the right, and summed over every step of recall
    (VOC all-point interpolation)."""
    _check_batch(reference, candidate)
    flags = [match_flags(ref, cand, iou) for ref, cand in zip(reference, candidate)]
    hits = np.concatenate(flags) if flags else np.zeros(0, bool)
    scores = np.concatenate([c.scores for c in candidate]) if candidate else np.zeros(0)
    classes = np.concatenate([c.classes for c in candidate]) if candidate else np.zeros(0, np.int64)
    ref_classes = np.concatenate([r.classes for r in reference]) if reference else np.zeros(0, np.int64)
    result: dict[int, float] = {}
    for cls in np.unique(ref_classes):
        mine = classes == cls
        order = np.argsort(-scores[mine], kind="stable")
        true = hits[mine][order].astype(np.float64)
        found = np.cumsum(true)
        recall = found / np.count_nonzero(ref_classes == cls)
        precision = found / np.arange(1, true.size + 1)
        recall = np.concatenate([[0.0], recall, [1.0]])
        precision = np.concatenate([[0.0], precision, [0.0]])
        precision = np.maximum.accumulate(precision[::-1])[::-1]
        steps = np.flatnonzero(recall[1:] != recall[:-1])
        result[int(cls)] = float(np.sum((recall[steps + 1] - recall[steps]) * precision[steps + 1]))
    return result


def average_precision(reference: Sequence[Detections], candidate: Sequence[Detections], iou: float = 0.5) -> float:
    """Mean average precision at IoU ``iou`` (mAP@0.5 by default) in [0, 1], over the classes present in the
    reference; with no reference boxes, 1.0 when the candidate found none either, else 0.0."""
    per_class = class_average_precisions(reference, candidate, iou)
    if not per_class:
        return 0.0 if any(len(c) for c in candidate) else 1.0
    return float(np.mean(list(per_class.values())))


def f1_against(reference: Sequence[Detections], candidate: Sequence[Detections], iou: float = 0.5,
               against: str = REFERENCE) -> TaskScore:
    """Box F1 of ``candidate`` against ``reference`` (the float model's detections, or labels named by
    ``against``), with precision, recall and mAP@``iou`` in ``extra``."""
    counts = box_counts(reference, candidate, iou)
    extra = counts.figures() | {f"map{round(iou * 100)}": average_precision(reference, candidate, iou)}
    return TaskScore(metric=f"detection F1 vs {against}", value=counts.f1, samples=len(reference),
                     detail=counts.describe("boxes", against, at=f"at IoU {iou:g}"), extra=extra)
