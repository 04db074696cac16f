"""Stage 4, evaluate: accuracy of an artifact on the evaluation split, with a real runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from edgepipe.data.dataset import Dataset
from edgepipe.runtimes import open_runner


def predict_logits(path: Path, dataset: Dataset) -> np.ndarray:
    """The first output of the model at ``path`` for every sample, stacked: ``(N, *output_shape)``."""
    with open_runner(path, reference_int8=True) as runner:  # judged on exact int8 semantics
        return np.concatenate([runner.infer(sample)[0] for sample in dataset.samples()])


def top1_accuracy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Share (0..1) of samples whose highest score is the label."""
    return float(np.mean(logits.reshape(len(labels), -1).argmax(axis=1) == labels))


def evaluate_top1(path: Path, dataset: Dataset) -> float:
    """Top-1 accuracy (0..1) of the model at ``path`` on a labelled ``dataset``."""
    if dataset.labels is None:
        raise ValueError(f"{dataset.path} has no labels")
    return top1_accuracy(predict_logits(path, dataset), dataset.labels)
