"""Text detection (DB-style probability maps): F1 of the candidate's text boxes against the float model's, in [0, 1].

Each map is binarized, split into connected regions, and each region's bounding box (in map pixels) is a
detection scored by the region's mean probability; boxes match at IoU ≥ 0.5.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from edgepipe.metrics.task.boxes import Detections
from edgepipe.metrics.task.matching import box_counts
from edgepipe.metrics.task.score import REFERENCE, TaskScore, like_reference

Connectivity = Literal[4, 8]
_NEIGHBOURS = {4: ((0, 1), (1, 0)), 8: ((0, 1), (1, 0), (1, 1), (1, -1))}


def label_regions(mask: np.ndarray, connectivity: Connectivity = 8) -> np.ndarray:
    """Connected regions of a boolean ``[H, W]`` mask: ``[H, W]`` ints, 0 for background and 1… for the regions
    in order of their first pixel (row-major). Pixels touch through edges (4) or edges and corners (8)."""
    height, width = mask.shape
    flat = np.flatnonzero(mask)
    index = np.full(mask.size, -1, dtype=np.int64)
    index[flat] = np.arange(flat.size)
    grid = index.reshape(height, width)
    first, second = [], []
    for dy, dx in _NEIGHBOURS[connectivity]:
        here = grid[: height - dy, max(0, -dx) : width - max(0, dx)]
        there = grid[dy:, max(0, dx) : width - max(0, -dx)]
        both = (here >= 0) & (there >= 0)
        first.append(here[both])
        second.append(there[both])
    u, v = np.concatenate(first), np.concatenate(second)
    # Each pixel points at the smallest pixel index known to share its region; pointer jumping spreads it fast.
    root = np.arange(flat.size)
    while True:
        lowest = np.minimum(root[u], root[v])
        updated = root.copy()
        for ends in (u, v, root[u], root[v]):
            np.minimum.at(updated, ends, lowest)
        updated = updated[updated]
        if np.array_equal(updated, root):
            break
        root = updated
    labels = np.zeros(mask.size, dtype=np.int64)
    labels[flat] = np.unique(root, return_inverse=True)[1] + 1
    return labels.reshape(height, width)


def text_boxes(probability: np.ndarray, *, threshold: float = 0.3, min_area: float = 16.0,
               connectivity: Connectivity = 8) -> Detections:
    """The text boxes of one ``[H, W]`` probability map: regions of pixels ≥ ``threshold``, each one's bounding
    box ``[x1, y1, x2, y2]`` in map pixels (a one-pixel region is 1×1) with at least ``min_area`` px², scored
    by the region's mean probability."""
    labels = label_regions(probability >= threshold, connectivity)
    count = int(labels.max())
    rows, cols = np.nonzero(labels)
    region = labels[rows, cols] - 1
    corners = np.stack([np.full(count, np.inf), np.full(count, np.inf), np.full(count, -np.inf),
                        np.full(count, -np.inf)], axis=1)
    np.minimum.at(corners[:, 0], region, cols)
    np.minimum.at(corners[:, 1], region, rows)
    np.maximum.at(corners[:, 2], region, cols + 1)
    np.maximum.at(corners[:, 3], region, rows + 1)
    pixels = np.bincount(region, minlength=count)
    scores = np.bincount(region, weights=probability[rows, cols].astype(np.float64), minlength=count) / np.maximum(
        pixels, 1)
    keep = (corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1]) >= min_area
    return Detections.of(corners[keep], scores=scores[keep])


def _maps(output: np.ndarray) -> np.ndarray:
    """``[N, H, W]`` maps from ``[N, 1, H, W]``, ``[N, H, W, 1]`` or ``[N, H, W]``."""
    if output.ndim == 4 and output.shape[1] == 1:
        return output[:, 0]
    if output.ndim == 4 and output.shape[3] == 1:
        return output[..., 0]
    if output.ndim == 3:
        return output
    raise ValueError(f"a text probability map is [N, 1, H, W] or [N, H, W, 1], not {list(output.shape)}")


def score_text_boxes(reference: np.ndarray, candidate: np.ndarray, *, threshold: float = 0.3,
                     min_area: float = 16.0, connectivity: Connectivity = 8, match_iou: float = 0.5) -> TaskScore:
    """Box F1 of the candidate's text regions against the float model's (see :func:`text_boxes`)."""
    ref_maps = _maps(reference)
    cand_maps = _maps(like_reference(reference, candidate))
    boxes = [[text_boxes(m, threshold=threshold, min_area=min_area, connectivity=connectivity) for m in maps]
             for maps in (ref_maps, cand_maps)]
    counts = box_counts(boxes[0], boxes[1], match_iou)
    return TaskScore(metric=f"text-box F1 vs {REFERENCE}", value=counts.f1, samples=len(ref_maps),
                     detail=counts.describe("text boxes", at=f"at IoU {match_iou:g}"), extra=counts.figures())
