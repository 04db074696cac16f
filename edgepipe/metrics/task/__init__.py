"""Task-level fidelity: does the candidate (int8) model still do the float model's job?

One module per task, each scoring function ``(reference, candidate, **params) -> TaskScore``; :func:`guess_kind`
names the kind of an output and the parameters to pass. Adding a task is one module and one line below.
"""

from __future__ import annotations

from collections.abc import Callable

from edgepipe.metrics.task.boxes import Detections
from edgepipe.metrics.task.classification import score_classification
from edgepipe.metrics.task.ctc import score_ctc
from edgepipe.metrics.task.detection import score_heatmap, score_ssd, score_yolo
from edgepipe.metrics.task.keypoints import score_keypoints
from edgepipe.metrics.task.kinds import KindGuess, guess_kind
from edgepipe.metrics.task.matching import average_precision, f1_against
from edgepipe.metrics.task.score import TaskScore
from edgepipe.metrics.task.segmentation import score_segmentation
from edgepipe.metrics.task.text_detection import score_text_boxes

TASK_METRICS: dict[str, Callable[..., TaskScore]] = {
    "classification": score_classification,
    "detection-yolo": score_yolo,
    "detection-ssd": score_ssd,
    "detection-heatmap": score_heatmap,
    "text-detection": score_text_boxes,
    "ctc": score_ctc,
    "segmentation": score_segmentation,
    "keypoints": score_keypoints,
}

__all__ = ["TASK_METRICS", "Detections", "KindGuess", "TaskScore", "average_precision", "f1_against", "guess_kind"]
