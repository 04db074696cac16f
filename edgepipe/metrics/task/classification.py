"""Classification: share of samples (or positions) whose float top-1 class is the candidate's top-1, in [0, 1].

Also the share whose float top-1 is among the candidate's top 5, and each model's top-1 accuracy when labels
are given. Ties go to the lower class index, as ``argmax`` does.
"""

from __future__ import annotations

import numpy as np

from edgepipe.metrics.task.score import CANDIDATE, REFERENCE, TaskScore, like_reference


def _rows(output: np.ndarray, class_axis: int) -> np.ndarray:
    """``[rows, C]`` scores: every sample (and position) one row."""
    if output.ndim < 2 or output.shape[class_axis] < 2:
        raise ValueError(f"class scores need at least 2 classes on axis {class_axis}, not {list(output.shape)}")
    scores = np.moveaxis(output, class_axis, -1)
    return scores.reshape(-1, scores.shape[-1])


def top_k_agreement(reference: np.ndarray, candidate: np.ndarray, k: int) -> float:
    """Share of ``[rows, C]`` rows whose reference top-1 class is among the candidate's ``k`` best (all rows
    when ``k`` ≥ C)."""
    top1 = np.argmax(reference, axis=1)
    order = np.argsort(-candidate, axis=1, kind="stable")[:, :k]
    return float(np.mean(np.any(order == top1[:, None], axis=1))) if len(top1) else 1.0


def score_classification(reference: np.ndarray, candidate: np.ndarray, *, class_axis: int = -1,
                         labels: np.ndarray | None = None) -> TaskScore:
    """Top-1 agreement of the candidate with the float model (value); top-5 agreement in ``extra``, and with
    ``labels`` (class indices, one per sample or position) each model's top-1 accuracy."""
    ref = _rows(reference, class_axis)
    cand = _rows(like_reference(reference, candidate), class_axis)
    top1 = top_k_agreement(ref, cand, 1)
    top5 = top_k_agreement(ref, cand, 5)
    extra = {"top5_agreement": top5}
    if labels is not None:
        truth = np.asarray(labels).reshape(-1)
        if truth.size != len(ref):
            raise ValueError(f"{truth.size} labels for {len(ref)} samples/positions")
        extra[f"{REFERENCE}_accuracy"] = float(np.mean(np.argmax(ref, axis=1) == truth))
        extra[f"{CANDIDATE}_accuracy"] = float(np.mean(np.argmax(cand, axis=1) == truth))
    unit = "samples" if len(ref) == len(reference) else "positions"
    detail = f"top-1 agreement {top1:.3f}, top-5 {top5:.3f} over {len(ref)} {unit} ({ref.shape[1]} classes)"
    if labels is not None:
        detail += (f"; accuracy {REFERENCE} {extra[f'{REFERENCE}_accuracy']:.3f}, "
                   f"{CANDIDATE} {extra[f'{CANDIDATE}_accuracy']:.3f}")
    return TaskScore(metric="top-1 agreement", value=top1, samples=len(reference), detail=detail, extra=extra)
