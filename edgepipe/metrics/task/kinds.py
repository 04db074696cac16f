"""Guess which task an output serves from its shape and its values on the reference (float) run.

The guess names a key of :data:`edgepipe.metrics.task.TASK_METRICS` and the keyword arguments its scoring
function needs; it is conservative: an output it cannot place is ``unknown`` (the caller then judges it by
cosine and SQNR per channel). The output's name is a hint, never required.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

Kind = Literal["classification", "detection-yolo", "detection-ssd", "detection-heatmap", "text-detection", "ctc",
               "segmentation", "keypoints", "unknown"]
Param = bool | int | float | str

#: The anchor axis of a YOLO-style output is at least this many times the box/class axis.
YOLO_ANCHOR_RATIO = 8
#: The box channels of a YOLO-style output span at least this many times the range of its scores.
YOLO_RANGE_RATIO = 8.0
#: The share of CTC steps the blank class wins on the reference run (CTC emits blank between characters).
CTC_BLANK_SHARE = 0.3
COCO_CLASSES = 80

_HINTS = {
    "classification": r"logit|prob|softmax|class|cls|label|score",
    "ctc": r"ctc|rec|ocr|char|text",
    "text-detection": r"text|db|det|shrink",
    "keypoints": r"landmark|keypoint|kpt|kps|pose|joint|lmk|point",
    "segmentation": r"seg|mask|semantic|parsing|matting",
    "detection-heatmap": r"heat|hm|cent",
    "regression": r"regress|box|coord|offset|delta|anchor|loc",
}


@dataclass(frozen=True)
class KindGuess:
    """What an output is taken to be: its ``kind``, the keyword arguments of the kind's scoring function
    (``params``), how sure the guess is (``confidence`` in [0, 1]) and the one-line ``reason``."""

    kind: Kind
    confidence: float
    reason: str
    params: dict[str, Param] = field(default_factory=dict)


def _hinted(kind: str, name: str) -> bool:
    return bool(name) and re.search(_HINTS[kind], name, re.IGNORECASE) is not None


def _distribution_axis(values: np.ndarray, axes: tuple[int, ...]) -> int | None:
    """The first of ``axes`` along which every slice is a probability distribution (non-negative, sums to 1)."""
    if values.min() < 0:
        return None
    for axis in axes:
        if values.shape[axis] >= 2 and np.allclose(values.sum(axis=axis), 1.0, atol=1e-3):
            return axis
    return None


def _probabilities(values: np.ndarray) -> bool:
    return bool(values.size) and float(values.min()) >= 0.0 and float(values.max()) <= 1.0


def _guess_2d(values: np.ndarray, name: str) -> KindGuess:
    classes = values.shape[1]
    if classes >= 2 and _distribution_axis(values, (1,)) is not None:
        return KindGuess("classification", 0.9, f"[N, {classes}] rows are probability distributions",
                         {"class_axis": -1})
    if classes >= 2 and _hinted("classification", name):
        return KindGuess("classification", 0.7, f"[N, {classes}] named like class scores ({name})", {"class_axis": -1})
    fits = [d for d in (2, 3) if classes % d == 0 and classes // d >= 2]
    if _hinted("keypoints", name) and len(fits) == 1:
        return KindGuess("keypoints", 0.7, f"[N, {classes}] named like keypoints ({name}), {fits[0]} values a point",
                         {"dims": fits[0]})
    return KindGuess("unknown", 0.0, f"[N, {classes}] is neither softmax rows nor named like class scores or "
                     "keypoints (logits, an embedding or a regression)")


def _guess_yolo(values: np.ndarray) -> KindGuess | None:
    """A YOLO-style ``[N, 4+C (+1), A]`` / ``[N, A, 4+C (+1)]``: box channels in pixels beside scores in [0, 1]."""
    short, long = sorted(values.shape[1:])
    if short < 5 or long < YOLO_ANCHOR_RATIO * short:
        return None
    layout = "channels-first" if values.shape[1] == short else "anchors-first"
    rows = np.swapaxes(values, 1, 2) if layout == "channels-first" else values
    boxes, scores = rows[..., :4], rows[..., 4:]
    box_range = float(np.percentile(np.abs(boxes), 99))
    if not _probabilities(scores) or box_range < YOLO_RANGE_RATIO * max(float(scores.max()), 1e-6):
        return None
    if short - 4 == COCO_CLASSES or short - 5 == COCO_CLASSES:
        objectness, why = short - 5 == COCO_CLASSES, f"{short} channels = 4 box + {short - 4} COCO-sized scores"
    else:
        objectness, why = layout == "anchors-first", f"{layout} layout (YOLOv5/v7 carry objectness, v8+ not)"
    corners = np.mean((rows[..., 2] >= rows[..., 0]) & (rows[..., 3] >= rows[..., 1]))
    box_format = "xyxy" if corners >= 0.99 else "xywh"
    reason = (f"{list(values.shape)}: 4 box channels up to {box_range:.0f} beside scores in [0, 1]; "
              f"objectness {'yes' if objectness else 'no'} from {why}; {box_format} boxes")
    return KindGuess("detection-yolo", 0.8, reason,
                     {"layout": layout, "objectness": objectness, "box_format": box_format})


def _guess_sequence(values: np.ndarray, name: str) -> KindGuess | None:
    """Per-step class scores ``[N, T, C]`` / ``[N, C, T]``: CTC when one class (the blank) wins many steps and the
    scores are distributions, or named so, or logits whose blank wins half the steps of ≥ 10 classes (unless named
    like box regressors, whose largest coordinate wins every step too)."""
    axis = _distribution_axis(values, (2, 1))
    distributions = axis is not None
    axis = 2 if axis is None else axis
    steps, classes = values.shape[3 - axis], values.shape[axis]
    if steps < 8:
        return None
    counts = np.bincount(np.argmax(values, axis=axis).ravel(), minlength=classes)
    share = counts.max() / counts.sum()
    class_axis = -1 if axis == 2 else 1
    logits_ctc = _hinted("ctc", name) or (share >= 2 * CTC_BLANK_SHARE and classes >= 10
                                          and not _hinted("regression", name))  # a dominant box coordinate
    if share >= CTC_BLANK_SHARE and (distributions or logits_ctc):
        blank = int(np.argmax(counts))
        reason = f"{steps} steps of {classes} classes, class {blank} wins {share:.0%} of them (the CTC blank)"
        return KindGuess("ctc", 0.8 if distributions else 0.6, reason, {"blank": blank, "class_axis": class_axis})
    if distributions:
        return KindGuess("classification", 0.6, f"{steps} positions of {classes}-class distributions without a "
                         "dominant blank: judged per position", {"class_axis": class_axis})
    return None


def _guess_3d(values: np.ndarray, name: str) -> KindGuess:
    guess = _guess_yolo(values) or _guess_sequence(values, name)
    if guess is not None:
        return guess
    if values.shape[2] in (2, 3) and values.shape[1] >= 2 and _hinted("keypoints", name):
        return KindGuess("keypoints", 0.8, f"[N, {values.shape[1]}, {values.shape[2]}] named like keypoints "
                         f"({name})", {"dims": values.shape[2]})
    return KindGuess("unknown", 0.0, f"{list(values.shape)} is not a YOLO head, CTC scores or named keypoints")


def _guess_4d(values: np.ndarray, name: str) -> KindGuess:
    shape = list(values.shape)
    single = 1 if shape[1] == 1 else (3 if shape[3] == 1 else None)
    if single is not None and _probabilities(values) and min(s for i, s in enumerate(shape[1:], 1) if i != single) >= 8:
        if _hinted("text-detection", name):
            return KindGuess("text-detection", 0.8, f"{shape} probability map named like text detection ({name})")
        return KindGuess("segmentation", 0.6, f"{shape} one-channel probability map: judged as a binary mask",
                         {"class_axis": single if single == 1 else -1, "threshold": 0.5})
    axis = _distribution_axis(values, (1, 3))
    if axis is not None:
        return KindGuess("segmentation", 0.9, f"{shape} per-pixel class distributions on axis {axis}",
                         {"class_axis": 1 if axis == 1 else -1})
    channels_first = shape[1] <= min(shape[2], shape[3])
    class_axis = 1 if channels_first else -1
    if _hinted("detection-heatmap", name) and _probabilities(values):
        return KindGuess("detection-heatmap", 0.7, f"{shape} maps in [0, 1] named like centre heat maps ({name})",
                         {"class_axis": class_axis})
    if _hinted("segmentation", name) and values.shape[class_axis] >= 2:
        return KindGuess("segmentation", 0.6, f"{shape} named like segmentation ({name}): argmax per pixel",
                         {"class_axis": class_axis})
    return KindGuess("unknown", 0.0, f"{shape} is neither a probability map nor per-pixel class distributions "
                     "(feature maps or logits; name them to say)")


def guess_kind(reference: np.ndarray, name: str = "") -> KindGuess:
    """The task kind of one output from its sample-major ``(N, …)`` values on the reference run, with the scoring
    parameters it implies; ``unknown`` when the shape and values do not single one out."""
    values = np.asarray(reference, dtype=np.float64)
    if not values.size or not np.all(np.isfinite(values)):
        return KindGuess("unknown", 0.0, f"{list(values.shape)} is empty or not finite")
    if values.ndim == 2:
        return _guess_2d(values, name)
    if values.ndim == 3:
        return _guess_3d(values, name)
    if values.ndim == 4:
        return _guess_4d(values, name)
    return KindGuess("unknown", 0.0, f"{values.ndim}-D output {list(values.shape)}")


def guess_from_shape(shape: tuple[int | None, ...], name: str = "") -> KindGuess:
    """The task kind an output's declared shape (batch first) suggests before any data ran, for ``edgepipe init``'s
    proposal; :func:`guess_kind` on the float outputs decides in the build."""
    dims = [d for d in shape[1:]]
    if any(d is None for d in dims):
        return KindGuess("unknown", 0.0, f"{list(shape)} has dynamic dimensions")
    sizes = [int(d) for d in dims if d is not None]
    if len(sizes) == 1 and sizes[0] >= 2:
        return KindGuess("classification", 0.5, f"[N, {sizes[0]}]: one score per class")
    if len(sizes) == 2 and min(sizes) >= 5 and max(sizes) >= YOLO_ANCHOR_RATIO * min(sizes):
        layout = "channels-first" if sizes[0] < sizes[1] else "anchors-first"
        return KindGuess("detection-yolo", 0.5, f"{list(shape)}: {min(sizes)} box and class channels for "
                         f"{max(sizes)} anchors", {"layout": layout})
    if len(sizes) == 3 and 1 in (sizes[0], sizes[2]) and min(s for s in sizes if s != 1) >= 8:
        kind: Kind = "text-detection" if _hinted("text-detection", name) else "segmentation"
        return KindGuess(kind, 0.4, f"{list(shape)}: one map of the input's size")
    return KindGuess("unknown", 0.0, f"{list(shape)}: no task the shape alone names")
