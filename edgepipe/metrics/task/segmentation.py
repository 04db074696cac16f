"""Semantic segmentation: mean IoU of the candidate's per-pixel classes with the float model's, in [0, 1].

Each pixel's class is the argmax over the class axis (a one-channel map is thresholded into two classes);
IoU is counted per class over all pixels of all samples and averaged over the classes present in either map.
"""

from __future__ import annotations

import numpy as np

from edgepipe.metrics.task.score import CANDIDATE, REFERENCE, TaskScore, like_reference


def class_map(output: np.ndarray, *, class_axis: int = 1, threshold: float = 0.5) -> np.ndarray:
    """``[N, H, W]`` class indices of ``[N, C, H, W]`` scores (``class_axis`` -1 for ``[N, H, W, C]``): the argmax,
    or for one channel 1 where the score is ≥ ``threshold`` and 0 elsewhere."""
    if output.ndim != 4:
        raise ValueError(f"a segmentation output is [N, C, H, W] or [N, H, W, C], not {list(output.shape)}")
    scores = np.moveaxis(output, class_axis, 1)
    if scores.shape[1] == 1:
        return (scores[:, 0] >= threshold).astype(np.int64)
    return np.argmax(scores, axis=1)


def class_ious(reference: np.ndarray, candidate: np.ndarray) -> dict[int, float]:
    """IoU of each class present in either of two class maps of one shape: pixels both call the class over
    pixels either calls it."""
    if reference.shape != candidate.shape:
        raise ValueError(f"class maps {list(reference.shape)} and {list(candidate.shape)} differ")
    result = {}
    for cls in np.union1d(np.unique(reference), np.unique(candidate)):
        ref, cand = reference == cls, candidate == cls
        result[int(cls)] = float(np.count_nonzero(ref & cand) / np.count_nonzero(ref | cand))
    return result


def mean_iou(reference: np.ndarray, candidate: np.ndarray) -> float:
    """Mean of :func:`class_ious`; 1.0 for two empty maps."""
    ious = class_ious(reference, candidate)
    return float(np.mean(list(ious.values()))) if ious else 1.0


def score_segmentation(reference: np.ndarray, candidate: np.ndarray, *, class_axis: int = 1,
                       threshold: float = 0.5, labels: np.ndarray | None = None) -> TaskScore:
    """mIoU of the candidate's class map against the float model's (value), with pixel agreement in ``extra``;
    with ``labels`` (``[N, H, W]`` class indices), also each model's mIoU against them."""
    ref = class_map(reference, class_axis=class_axis, threshold=threshold)
    cand = class_map(like_reference(reference, candidate), class_axis=class_axis, threshold=threshold)
    ious = class_ious(ref, cand)
    value = float(np.mean(list(ious.values()))) if ious else 1.0
    extra = {"pixel_agreement": float(np.mean(ref == cand)) if ref.size else 1.0,
             "worst_class_iou": min(ious.values(), default=1.0)}
    if labels is not None:
        truth = np.asarray(labels).reshape(ref.shape)
        extra[f"{REFERENCE}_miou_vs_labels"] = mean_iou(truth, ref)
        extra[f"{CANDIDATE}_miou_vs_labels"] = mean_iou(truth, cand)
    worst = min(ious, key=lambda c: ious[c]) if ious else None
    detail = (f"mIoU {value:.3f} over {len(ious)} classes, {extra['pixel_agreement']:.1%} of pixels agree"
              + (f", class {worst} worst at IoU {ious[worst]:.2f}" if worst is not None else ""))
    return TaskScore(metric=f"segmentation mIoU vs {REFERENCE}", value=value, samples=len(ref), detail=detail,
                     extra=extra)
