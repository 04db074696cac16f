"""An output judged part by part: channels of very different ranges are checked apart, not flattened together.

A YOLO-style head ``[N, 4+C, A]`` concatenates box coordinates (hundreds of pixels) and class
probabilities (0..1). Flattened, the boxes dominate cosine and SQNR, so a quantization that rounds
every probability to zero still scores a cosine of 0.999. Here each output's **feature axis** is the
axis (other than the sample axis, at most :data:`MAX_CHANNELS` long) along which the channels' ranges
differ most. Channels whose reference range is below ``1/SMALL_RANGE_RATIO`` of the output's largest
(but not negligible, :data:`DEAD_RANGE_RATIO`) form a part of their own: at a shared scale they get
fewer than ~16 of int8's 255 levels. Each part gets its own SQNR and cosine. The worst single channel
among those of a significant range is reported too (per-channel figures of an almost-zero channel say
nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgepipe.metrics.similarity import cosine, sqnr_db

#: Longest axis treated as a feature axis (longer ones are positions: anchors, time steps, pixels).
MAX_CHANNELS = 4096
#: A channel whose range is this many times below the output's largest is a small-range channel.
SMALL_RANGE_RATIO = 8.0
#: A channel whose range is this many times below the output's largest carries nothing (a class never seen,
#: a dead filter): it is left out of every part.
DEAD_RANGE_RATIO = 1e4


@dataclass(frozen=True)
class PartAgreement:
    """One part of an output (a set of channels along ``axis``) and how the candidate agrees with it there."""

    part: str
    axis: int
    channels: int
    sqnr_db: float
    cosine: float


def channel_ranges(reference: np.ndarray, axis: int) -> np.ndarray:
    """Per channel along ``axis``: the largest absolute reference value over every other axis."""
    moved = np.moveaxis(np.abs(reference.astype(np.float64)), axis, 0)
    return moved.reshape(moved.shape[0], -1).max(axis=1)


def live_channels(ranges: np.ndarray) -> np.ndarray:
    """Which channels carry something: a range within :data:`DEAD_RANGE_RATIO` of the largest."""
    return ranges * DEAD_RANGE_RATIO >= ranges.max() if ranges.max() > 0 else np.zeros(len(ranges), bool)


def feature_axis(reference: np.ndarray) -> int | None:
    """The axis (not 0, the samples) of 2..:data:`MAX_CHANNELS` channels whose ranges differ most (largest over
    smallest live range); None for an output without one (one value per sample, or only very long axes)."""
    best, best_spread = None, 0.0
    for axis in range(1, reference.ndim):
        if not 2 <= reference.shape[axis] <= MAX_CHANNELS:
            continue
        ranges = channel_ranges(reference, axis)
        live = ranges[live_channels(ranges)]
        spread = float(live.max() / live.min()) if len(live) else 0.0
        if best is None or spread > best_spread:
            best, best_spread = axis, spread
    return best


def describe_channels(indices: np.ndarray) -> str:
    """``channels 4–83`` (runs of consecutive indices joined, at most four runs shown)."""
    runs: list[tuple[int, int]] = []
    for index in sorted(int(i) for i in indices):
        if runs and index == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    shown = [f"{a}" if a == b else f"{a}–{b}" for a, b in runs[:4]]
    more = f" (+{len(runs) - 4} more runs)" if len(runs) > 4 else ""
    return ("channel " if len(indices) == 1 else "channels ") + ", ".join(shown) + more


def _agreement(reference: np.ndarray, candidate: np.ndarray, axis: int, indices: np.ndarray) -> PartAgreement:
    ref, cand = np.take(reference, indices, axis=axis), np.take(candidate, indices, axis=axis)
    return PartAgreement(describe_channels(indices), axis, len(indices), round(sqnr_db(ref, cand), 3),
                         round(cosine(ref, cand), 6))


def split_parts(reference: np.ndarray, candidate: np.ndarray) -> list[PartAgreement]:
    """The small-range and the large-range channels of the output as two parts, each with its own SQNR and
    cosine; empty when every channel has a range within :data:`SMALL_RANGE_RATIO` of the largest (one part,
    judged as the whole output)."""
    axis = feature_axis(reference)
    if axis is None:
        return []
    ranges = channel_ranges(reference, axis)
    small = (ranges * SMALL_RANGE_RATIO < ranges.max()) & live_channels(ranges)
    if not small.any():
        return []
    large = ranges * SMALL_RANGE_RATIO >= ranges.max()
    return [_agreement(reference, candidate, axis, np.flatnonzero(large)),
            _agreement(reference, candidate, axis, np.flatnonzero(small))]


def has_small_range_channels(reference: np.ndarray) -> bool:
    """Whether the output has channels whose range is far below its largest (:func:`split_parts` finds parts)."""
    axis = feature_axis(reference)
    if axis is None:
        return False
    ranges = channel_ranges(reference, axis)
    return bool(((ranges * SMALL_RANGE_RATIO < ranges.max()) & live_channels(ranges)).any())


def worst_channel(reference: np.ndarray, candidate: np.ndarray) -> PartAgreement | None:
    """The channel of significant range (within :data:`SMALL_RANGE_RATIO` of the largest of its part) with the
    lowest SQNR; None when the output has no feature axis."""
    axis = feature_axis(reference)
    if axis is None:
        return None
    ranges = channel_ranges(reference, axis)
    small = ranges * SMALL_RANGE_RATIO < ranges.max()
    live = live_channels(ranges)
    worst = None
    for group in (np.flatnonzero(~small & live), np.flatnonzero(small & live)):
        if not len(group):
            continue
        significant = group[ranges[group] * SMALL_RANGE_RATIO >= ranges[group].max()]
        for index in significant:
            found = _agreement(reference, candidate, axis, np.array([index]))
            if worst is None or found.sqnr_db < worst.sqnr_db:
                worst = found
    return worst
