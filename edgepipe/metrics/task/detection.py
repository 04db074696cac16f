"""Object detection: F1 and mAP@0.5 of the candidate's boxes against the float model's boxes, in [0, 1].

Against the float model, F1 is tolerant of scores that sit at the threshold (``score_margin``): a float box
must be found when it scores at least ``threshold + margin``, and may be matched by a candidate box scoring
``threshold - margin`` or more; the same the other way round. A score one rounding step either side of the
threshold then neither loses nor invents a box, while scores quantized to nothing lose every confident box.

Three kinds of head are read: YOLO-style (one ``[N, 4+C, A]`` or ``[N, A, 4+C]`` output, optionally with
objectness), SSD-style (decoded ``boxes [N, A, 4]`` beside ``scores [N, A, C]``) and anchor-free centre heat
maps (``[N, C, H, W]``, CenterNet-like: peaks matched within a radius in map pixels).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal, cast

import numpy as np

from edgepipe.metrics.task.boxes import BoxFormat, Detections, non_maximum_suppression, to_corners
from edgepipe.metrics.task.matching import average_precision, box_counts, f1_against
from edgepipe.metrics.task.score import CANDIDATE, REFERENCE, MatchCounts, TaskScore, like_reference

__all__ = ["Detections", "average_precision", "decode_ssd", "decode_yolo", "f1_against", "heatmap_peaks",
           "score_heatmap", "score_ssd", "score_yolo", "yolo_layout"]

Layout = Literal["auto", "channels-first", "anchors-first"]
#: The channel axis must be this many times shorter than the anchor axis to be told apart without a hint.
ANCHOR_RATIO = 4


def yolo_layout(shape: tuple[int, ...], objectness: bool = False) -> Literal["channels-first", "anchors-first"]:
    """``channels-first`` for ``[N, 4+C, A]``, ``anchors-first`` for ``[N, A, 4+C]``: the channel axis is the one
    with at least 4+C (C ≥ 1) entries that is :data:`ANCHOR_RATIO` times shorter than the other."""
    if len(shape) != 3:
        raise ValueError(f"a YOLO-style output is [N, 4+C, A] or [N, A, 4+C], not {list(shape)}")
    least = 6 if objectness else 5
    first, second = shape[1], shape[2]
    if least <= first and first * ANCHOR_RATIO <= second:
        return "channels-first"
    if least <= second and second * ANCHOR_RATIO <= first:
        return "anchors-first"
    raise ValueError(f"cannot tell the box/class axis of {list(shape)} from the anchor axis; set the layout")


def decode_yolo(output: np.ndarray, *, objectness: bool = False, box_format: BoxFormat = "xywh",
                layout: Layout = "auto", score_threshold: float = 0.25, nms_iou: float = 0.45,
                max_detections: int = 300) -> list[Detections]:
    """The detections of each sample of a YOLO-style output: rows ``[x, y, w, h, (obj,) cls…]`` (boxes in pixels,
    scores in [0, 1]), each anchor's best class with score ``cls·obj`` kept at ≥ ``score_threshold``, then
    per-class NMS at IoU > ``nms_iou``."""
    if layout == "auto":
        layout = yolo_layout(output.shape, objectness)
    rows = np.swapaxes(output, 1, 2) if layout == "channels-first" else output
    first_class = 5 if objectness else 4
    found = []
    for sample in rows.astype(np.float64):
        classes = sample[:, first_class:]
        if objectness:
            classes = classes * sample[:, 4:5]
        found.append(_threshold(to_corners(sample[:, :4], box_format), classes, score_threshold, nms_iou,
                                max_detections))
    return found


def decode_ssd(boxes: np.ndarray, scores: np.ndarray, *, background: int | None = None,
               box_format: BoxFormat = "xyxy", score_threshold: float = 0.25, nms_iou: float = 0.45,
               max_detections: int = 300) -> list[Detections]:
    """The detections of each sample of an SSD-style pair: decoded ``boxes [N, A, 4]`` and ``scores [N, A, C]``
    in [0, 1]; the ``background`` class is never a detection; then as :func:`decode_yolo`."""
    if boxes.ndim != 3 or boxes.shape[-1] != 4 or scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
        raise ValueError(f"SSD-style outputs are boxes [N, A, 4] and scores [N, A, C], not "
                         f"{list(boxes.shape)} and {list(scores.shape)}")
    scores = scores.astype(np.float64)
    if background is not None:
        scores = scores.copy()
        scores[..., background] = -np.inf
    return [_threshold(to_corners(b, box_format), s, score_threshold, nms_iou, max_detections)
            for b, s in zip(boxes, scores)]


def _threshold(corners: np.ndarray, class_scores: np.ndarray, score_threshold: float, nms_iou: float,
               max_detections: int) -> Detections:
    best = np.argmax(class_scores, axis=1)
    score = np.take_along_axis(class_scores, best[:, None], axis=1)[:, 0]
    keep = score >= score_threshold
    return non_maximum_suppression(Detections(corners[keep], score[keep], best[keep]), nms_iou, max_detections)


def score_detections(reference: Sequence[Detections], candidate: Sequence[Detections], *, match_iou: float = 0.5,
                     labels: Sequence[Detections] | None = None) -> TaskScore:
    """F1 of the candidate's boxes against the float model's (value), with mAP@``match_iou`` vs float in
    ``extra``; with ``labels``, also each model's F1 and mAP against the labels."""
    score = f1_against(reference, candidate, match_iou, against=REFERENCE)
    return _with_labels(score, list(reference), list(candidate), labels, match_iou)


#: How far either side of the score threshold a box may score and still match (see the module docstring).
SCORE_MARGIN = 0.05


def tolerant_f1(decode: Callable[[object, float], list[Detections]], reference: object, candidate: object, *,
                score_threshold: float, score_margin: float, match_iou: float) -> TaskScore:
    """Detection F1 vs float with the threshold margin: recall over float boxes scoring ≥ threshold + margin,
    precision over candidate boxes scoring ≥ threshold + margin, each matched among the other side's boxes
    scoring ≥ threshold − margin; mAP@``match_iou`` at the plain threshold in ``extra``."""
    high, low = score_threshold + score_margin, max(score_threshold - score_margin, 0.0)
    ref_sure, cand_sure = decode(reference, high), decode(candidate, high)
    found = box_counts(ref_sure, decode(candidate, low), match_iou)
    backed = box_counts(decode(reference, low), cand_sure, match_iou)
    counts = MatchCounts(0, found.reference, backed.candidate)
    recall, precision = found.matched / max(found.reference, 1), backed.matched / max(backed.candidate, 1)
    if not found.reference and not backed.candidate:
        value = 1.0
    elif not found.reference or not backed.candidate:
        value = 0.0
    else:
        value = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    plain = f1_against(decode(reference, score_threshold), decode(candidate, score_threshold), match_iou)
    detail = (f"F1 {value:.2f} at IoU {match_iou:g}: {found.matched} of {counts.reference} {REFERENCE} boxes scoring "
              f">= {high:g} found, {backed.matched} of {counts.candidate} {CANDIDATE} boxes scoring >= {high:g} "
              f"backed (either side counted down to {low:g})")
    extra = {**plain.extra, "precision": precision, "recall": recall, "f1_at_threshold": plain.value}
    return TaskScore(f"detection F1 vs {REFERENCE}", value, plain.samples, detail, extra)


def score_yolo(reference: np.ndarray, candidate: np.ndarray, *, objectness: bool = False,
               box_format: BoxFormat = "xywh", layout: Layout = "auto", score_threshold: float = 0.25,
               score_margin: float = SCORE_MARGIN, nms_iou: float = 0.45, max_detections: int = 300,
               match_iou: float = 0.5, labels: Sequence[Detections] | None = None) -> TaskScore:
    """Detection F1 vs float of a YOLO-style output (see :func:`decode_yolo` and :func:`tolerant_f1`); with
    ``labels``, each model's F1 and mAP against them in ``extra``."""
    if layout == "auto":
        layout = yolo_layout(reference.shape, objectness)
    candidate = like_reference(reference, candidate)

    def decode(output: object, threshold: float) -> list[Detections]:
        return decode_yolo(output, objectness=objectness, box_format=box_format,  # type: ignore[arg-type]
                           layout=layout, score_threshold=threshold, nms_iou=nms_iou, max_detections=max_detections)

    score = tolerant_f1(decode, reference, candidate, score_threshold=score_threshold, score_margin=score_margin,
                        match_iou=match_iou)
    return _with_labels(score, decode(reference, score_threshold), decode(candidate, score_threshold), labels,
                        match_iou)


def score_ssd(reference: tuple[np.ndarray, np.ndarray], candidate: tuple[np.ndarray, np.ndarray], *,
              background: int | None = None, box_format: BoxFormat = "xyxy", score_threshold: float = 0.25,
              score_margin: float = SCORE_MARGIN, nms_iou: float = 0.45, max_detections: int = 300,
              match_iou: float = 0.5, labels: Sequence[Detections] | None = None) -> TaskScore:
    """Detection F1 vs float of SSD-style ``(boxes, scores)`` pairs (see :func:`decode_ssd`)."""

    def decode(pair: object, threshold: float) -> list[Detections]:
        boxes, scores = cast(tuple[np.ndarray, np.ndarray], pair)
        return decode_ssd(boxes, scores, background=background, box_format=box_format, score_threshold=threshold,
                          nms_iou=nms_iou, max_detections=max_detections)

    score = tolerant_f1(decode, reference, candidate, score_threshold=score_threshold, score_margin=score_margin,
                        match_iou=match_iou)
    return _with_labels(score, decode(reference, score_threshold), decode(candidate, score_threshold), labels,
                        match_iou)


def _with_labels(score: TaskScore, reference: list[Detections], candidate: list[Detections],
                 labels: Sequence[Detections] | None, match_iou: float) -> TaskScore:
    if labels is None:
        return score
    tag = f"map{round(match_iou * 100)}"
    extra = dict(score.extra)
    for name, found in ((REFERENCE, reference), (CANDIDATE, candidate)):
        extra[f"{name}_f1_vs_labels"] = box_counts(labels, found, match_iou).f1
        extra[f"{name}_{tag}_vs_labels"] = average_precision(labels, found, match_iou)
    return TaskScore(score.metric, score.value, score.samples, score.detail, extra)


@dataclass(frozen=True)
class Peaks:
    """The peaks of one sample's centre heat map: ``points [M, 2]`` as (row, column) in map pixels, ``scores [M]``
    and ``classes [M]`` (the heat-map channel)."""

    points: np.ndarray
    scores: np.ndarray
    classes: np.ndarray


def heatmap_peaks(heatmap: np.ndarray, *, threshold: float = 0.3, max_peaks: int = 100,
                  class_axis: int = 1) -> list[Peaks]:
    """The peaks of each sample of ``[N, C, H, W]`` centre maps (``class_axis`` -1 for ``[N, H, W, C]``): values
    ≥ ``threshold`` that equal the maximum of their 3×3 neighbourhood (a max-pool), the ``max_peaks`` highest."""
    if heatmap.ndim != 4:
        raise ValueError(f"a centre heat map is [N, C, H, W] or [N, H, W, C], not {list(heatmap.shape)}")
    maps = np.moveaxis(heatmap, class_axis, 1).astype(np.float64)
    padded = np.pad(maps, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    height, width = maps.shape[2:]
    pooled = np.max([padded[:, :, dy : dy + height, dx : dx + width] for dy in range(3) for dx in range(3)], axis=0)
    found = []
    for sample, peak in zip(maps, (maps == pooled) & (maps >= threshold)):
        cls, rows, cols = np.nonzero(peak)
        scores = sample[cls, rows, cols]
        top = np.argsort(-scores, kind="stable")[:max_peaks]
        found.append(Peaks(np.stack([rows, cols], axis=1)[top].astype(np.float64), scores[top], cls[top]))
    return found


def _point_matches(reference: Peaks, candidate: Peaks, radius: float) -> int:
    """Candidate peaks, best first, each taking the nearest unmatched reference peak of its class within
    ``radius`` map pixels; the number matched."""
    if not len(reference.scores) or not len(candidate.scores):
        return 0
    distance = np.linalg.norm(candidate.points[:, None, :] - reference.points[None, :, :], axis=2)
    distance[candidate.classes[:, None] != reference.classes[None, :]] = np.inf
    matched = 0
    for index in np.argsort(-candidate.scores, kind="stable"):
        nearest = int(np.argmin(distance[index]))
        if distance[index, nearest] <= radius:
            matched += 1
            distance[:, nearest] = np.inf
    return matched


def score_heatmap(reference: np.ndarray, candidate: np.ndarray, *, threshold: float = 0.3, radius: float = 2.0,
                  max_peaks: int = 100, class_axis: int = 1) -> TaskScore:
    """F1 of the candidate's centre-map peaks against the float model's, a peak found when one of its class lies
    within ``radius`` map pixels (see :func:`heatmap_peaks`)."""
    peaks = partial(heatmap_peaks, threshold=threshold, max_peaks=max_peaks, class_axis=class_axis)
    ref_peaks = peaks(reference)
    cand_peaks = peaks(like_reference(reference, candidate))
    counts = MatchCounts(0, 0, 0)
    for ref, cand in zip(ref_peaks, cand_peaks):
        counts += MatchCounts(_point_matches(ref, cand, radius), len(ref.scores), len(cand.scores))
    return TaskScore(metric=f"centre-peak F1 vs {REFERENCE}", value=counts.f1, samples=len(ref_peaks),
                     detail=counts.describe("peaks", at=f"within {radius:g} px"), extra=counts.figures())
