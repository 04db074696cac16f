"""Keypoints (landmarks, pose): PCK@0.05 of the candidate's points against the float model's, in [0, 1].

A point's error is its distance to the float model's point over the object's size (the diagonal of the box
around the float model's points, or a given normaliser); PCK is the share of points with error ≤ 0.05 and
NME the mean error, as a fraction of the size.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from edgepipe.metrics.task.score import REFERENCE, TaskScore, like_reference

PointDims = Literal[2, 3]


def as_points(output: np.ndarray, dims: PointDims | None = None) -> np.ndarray:
    """``[N, K, 2]`` (x, y) of ``[N, K, 2|3]`` or flattened ``[N, K·2|3]`` coordinates; a third value per point
    (visibility, confidence or depth) is dropped. ``dims`` says 2 or 3 values per point where the flat size
    divides by both."""
    if output.ndim == 3 and output.shape[2] in (2, 3) and dims in (None, output.shape[2]):
        return output[..., :2].astype(np.float64)
    if output.ndim == 2:
        size = output.shape[1]
        if dims is None:
            fits = [d for d in (2, 3) if size % d == 0]
            if len(fits) != 1:
                raise ValueError(f"cannot tell 2 or 3 values per point in {list(output.shape)}; set dims")
            dims = 2 if fits[0] == 2 else 3
        if size % dims:
            raise ValueError(f"{size} values do not split into points of {dims}")
        return output.reshape(output.shape[0], -1, dims)[..., :2].astype(np.float64)
    raise ValueError(f"keypoints are [N, K, 2|3] or [N, K·2|3], not {list(output.shape)}")


def object_sizes(points: np.ndarray) -> np.ndarray:
    """``[N]`` diagonals of the boxes around each sample's ``[K, 2]`` points, in the points' unit (pixels)."""
    span = points.max(axis=1) - points.min(axis=1)
    return np.hypot(span[:, 0], span[:, 1])


def normalised_errors(reference: np.ndarray, candidate: np.ndarray,
                      normaliser: float | np.ndarray | None = None) -> np.ndarray:
    """``[N, K]`` distances between ``[N, K, 2]`` points over each sample's size: ``normaliser`` (one value or
    ``[N]``, in the points' unit) or else :func:`object_sizes` of the reference."""
    size = object_sizes(reference) if normaliser is None else np.broadcast_to(
        np.asarray(normaliser, dtype=np.float64), reference.shape[:1])
    if np.any(size <= 0):
        raise ValueError("an object size is 0 (all its reference points coincide); give a normaliser")
    return np.linalg.norm(candidate - reference, axis=2) / size[:, None]


def score_keypoints(reference: np.ndarray, candidate: np.ndarray, *, dims: PointDims | None = None,
                    normaliser: float | np.ndarray | None = None, pck_threshold: float = 0.05) -> TaskScore:
    """PCK@``pck_threshold`` of the candidate's points against the float model's (value), with NME (a fraction of
    the object size) in ``extra``."""
    ref = as_points(reference, dims)
    cand = as_points(like_reference(reference, candidate), dims)
    errors = normalised_errors(ref, cand, normaliser)
    pck = float(np.mean(errors <= pck_threshold)) if errors.size else 1.0
    nme = float(np.mean(errors)) if errors.size else 0.0
    size = "given size" if normaliser is not None else "box diagonal"
    detail = (f"PCK@{pck_threshold:g} {pck:.3f}, NME {nme:.4f} of the {size} "
              f"({errors.size} points in {len(ref)} samples)")
    return TaskScore(metric=f"PCK@{pck_threshold:g} vs {REFERENCE}", value=pck, samples=len(ref), detail=detail,
                     extra={"nme": nme, "max_error": float(errors.max()) if errors.size else 0.0})
