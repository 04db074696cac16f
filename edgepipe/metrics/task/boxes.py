"""Boxes found in one sample, their overlap (IoU), per-class non-maximum suppression and greedy matching.

Boxes are ``[x1, y1, x2, y2]`` corners in pixels (or whatever unit the model's output uses).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

BoxFormat = Literal["xywh", "xyxy"]


@dataclass(frozen=True)
class Detections:
    """The boxes found in one sample: ``boxes`` ``[M, 4]`` corners in pixels, ``scores`` ``[M]`` in [0, 1],
    ``classes`` ``[M]`` class indices. Labels are detections with score 1."""

    boxes: np.ndarray
    scores: np.ndarray
    classes: np.ndarray

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    @staticmethod
    def of(boxes: Sequence[Sequence[float]] | np.ndarray, classes: Sequence[int] | np.ndarray | None = None,
           scores: Sequence[float] | np.ndarray | None = None) -> Detections:
        """Detections from corner boxes; class 0 and score 1 where not given (labels, single-class maps)."""
        array = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
        count = array.shape[0]
        return Detections(
            boxes=array,
            scores=np.ones(count) if scores is None else np.asarray(scores, dtype=np.float64).reshape(count),
            classes=np.zeros(count, np.int64) if classes is None else np.asarray(classes, np.int64).reshape(count))


def to_corners(boxes: np.ndarray, box_format: BoxFormat) -> np.ndarray:
    """``[..., 4]`` boxes as corners: centre-xywh ``[cx, cy, w, h]`` is converted, ``xyxy`` is kept."""
    boxes = boxes.astype(np.float64)
    if box_format == "xyxy":
        return boxes
    half = boxes[..., 2:4] / 2
    return np.concatenate([boxes[..., 0:2] - half, boxes[..., 0:2] + half], axis=-1)


def iou_matrix(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Intersection over union of every corner box in ``first`` ``[M, 4]`` with every one in ``second`` ``[K, 4]``:
    ``[M, K]`` in [0, 1]; 0 where both boxes have no area."""
    a = first[:, None, :]
    b = second[None, :, :]
    width = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    height = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = width * height
    area_a = np.clip(a[..., 2] - a[..., 0], 0, None) * np.clip(a[..., 3] - a[..., 1], 0, None)
    area_b = np.clip(b[..., 2] - b[..., 0], 0, None) * np.clip(b[..., 3] - b[..., 1], 0, None)
    union = area_a + area_b - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


def non_maximum_suppression(found: Detections, iou: float, max_detections: int) -> Detections:
    """Per class, keep the best-scoring box and drop every other box of its class overlapping it by IoU > ``iou``;
    repeat, best first, up to ``max_detections`` boxes in all."""
    order = np.argsort(-found.scores, kind="stable")
    boxes = found.boxes[order]
    classes = found.classes[order]
    # Shifting each class by more than the span of all boxes keeps classes from suppressing each other.
    span = float(np.abs(boxes).max()) * 2 + 1 if len(boxes) else 0.0
    shifted = boxes + (classes * span)[:, None]
    keep: list[int] = []
    alive = np.arange(len(order))
    while alive.size and len(keep) < max_detections:
        best, alive = alive[0], alive[1:]
        keep.append(int(best))
        if alive.size:
            alive = alive[iou_matrix(shifted[best : best + 1], shifted[alive])[0] <= iou]
    kept = order[np.asarray(keep, dtype=np.int64)]
    return Detections(found.boxes[kept], found.scores[kept], found.classes[kept])


def match_flags(reference: Detections, candidate: Detections, iou: float) -> np.ndarray:
    """For each candidate box, whether it matches a reference box: candidates best score first, each takes the
    unmatched reference box of its class it overlaps most, if that IoU is at least ``iou``. ``[M]`` booleans in
    the candidate's own order."""
    flags = np.zeros(len(candidate), dtype=bool)
    if not len(candidate) or not len(reference):
        return flags
    overlap = iou_matrix(candidate.boxes, reference.boxes)
    overlap[candidate.classes[:, None] != reference.classes[None, :]] = -1.0
    for index in np.argsort(-candidate.scores, kind="stable"):
        best = int(np.argmax(overlap[index]))
        if overlap[index, best] >= iou:
            flags[index] = True
            overlap[:, best] = -1.0
    return flags
