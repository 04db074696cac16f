"""Synthetic model outputs for the task-metric tests, and the int8 quantization they go through on a device."""

from __future__ import annotations

import numpy as np


def yolo_output(rng: np.random.Generator, *, samples: int = 8, classes: int = 3, anchors: int = 2100,
                image: float = 320.0, objects: int = 4, anchors_per_object: int = 6) -> np.ndarray:
    """A YOLO-style ``[N, 4+C, A]`` output: centre-xywh boxes in pixels (0…``image``), class probabilities in
    [0, 1]; background anchors score ≤ 0.15, each object is seen by a few jittered anchors scoring 0.5…0.95."""
    out = np.zeros((samples, 4 + classes, anchors))
    for sample in out:
        sample[0:2] = rng.uniform(0, image, (2, anchors))
        sample[2:4] = rng.uniform(0.03, 0.3, (2, anchors)) * image
        sample[4:] = rng.uniform(0, 0.15, (classes, anchors))
        chosen = rng.choice(anchors, (objects, anchors_per_object), replace=False)
        for slots in chosen:
            centre = rng.uniform(0.15, 0.85, 2) * image
            size = rng.uniform(0.1, 0.35, 2) * image
            cls = rng.integers(classes)
            sample[0:2, slots] = centre[:, None] + rng.uniform(-0.01, 0.01, (2, slots.size)) * image
            sample[2:4, slots] = size[:, None] * rng.uniform(0.97, 1.03, (2, slots.size))
            sample[4 + cls, slots] = rng.uniform(0.5, 0.95) - 0.04 * np.arange(slots.size)
    return out


def fake_quantize(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``values`` through symmetric int8 and back: one scale ``max|x| / 127`` for the tensor, or one per index
    of ``axis`` (per channel); rounded to the nearest step and clipped to [−127, 127]."""
    reduce = None if axis is None else tuple(i for i in range(values.ndim) if i != axis % values.ndim)
    scale = np.max(np.abs(values), axis=reduce, keepdims=axis is not None) / 127
    scale = np.where(scale == 0, 1.0, scale)
    return np.clip(np.round(values / scale), -127, 127) * scale
