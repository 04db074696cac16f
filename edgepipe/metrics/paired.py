"""Paired statistics of an int8 accuracy drop: a 95% confidence interval, and whether the data can resolve it.

The float and the int8 model are scored on the *same* samples, so their difference is
paired: only the discordant samples (right in float and wrong in int8, or the reverse)
move the drop. The interval is a **paired percentile bootstrap**: resample the sample
indices with replacement (:data:`RESAMPLES` times, fixed :data:`SEED`, so the same
inputs always give the same interval), recompute ``float − int8`` on each resample,
and take the 2.5th and 97.5th percentiles. It needs no distributional assumption and
handles any mix of discordant pairs; with no discordant pair at all it collapses to
``[0, 0]``, which is why :func:`resolution_warnings` also checks what *one* sample is
worth against the threshold. All drops are in percentage points (100 × share).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgepipe.artifacts import Artifact

#: Bootstrap resamples; 2,000 puts the Monte-Carlo error of a 95% percentile bound well under one sample.
RESAMPLES = 2000
#: Fixed seed: a report is a function of its inputs.
SEED = 0
#: Confidence level of every interval.
CONFIDENCE = 0.95
#: Warn when one sample flipping moves the drop by more than this share of the threshold.
MAX_FLIP_SHARE = 0.5


@dataclass(frozen=True)
class PairedDrop:
    """Float − int8 top-1 accuracy on the same samples, percentage points, with its 95% interval."""

    drop_points: float
    low_points: float
    high_points: float
    samples: int
    float_only: int  # right in float, wrong in int8
    int8_only: int  # wrong in float, right in int8

    @property
    def half_width_points(self) -> float:
        return (self.high_points - self.low_points) / 2


def paired_drop(float_correct: np.ndarray, int8_correct: np.ndarray) -> PairedDrop:
    """The paired drop (points) and its bootstrap 95% interval from per-sample correctness (bool arrays)."""
    ref = np.asarray(float_correct, dtype=bool)
    cand = np.asarray(int8_correct, dtype=bool)
    if ref.shape != cand.shape or ref.ndim != 1 or ref.size == 0:
        raise ValueError(f"paired correctness must be two 1-D arrays of one length, got {ref.shape} and {cand.shape}")
    n = ref.size
    float_only, int8_only = int((ref & ~cand).sum()), int((cand & ~ref).sum())
    # Resampling n indices only changes how many of each kind of pair is drawn: the bootstrap counts are
    # multinomial over (float only, int8 only, concordant), which is exact and costs O(RESAMPLES), not O(n).
    counts = np.random.default_rng(SEED).multinomial(n, [float_only / n, int8_only / n,
                                                         1 - (float_only + int8_only) / n], size=RESAMPLES)
    drops = 100.0 * (counts[:, 0] - counts[:, 1]) / n
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(drops, [tail, 100 - tail])
    return PairedDrop(drop_points=100.0 * (float_only - int8_only) / n, low_points=float(low),
                      high_points=float(high), samples=n, float_only=float_only, int8_only=int8_only)


def one_sample_points(samples: int) -> float:
    """What one sample flipping moves an accuracy by, in percentage points."""
    return 100.0 / samples if samples else float("inf")


def resolution_warnings(samples: int, threshold_points: float, drops: dict[str, PairedDrop]) -> list[str]:
    """Why this evaluation set cannot tell a drop within ``threshold_points`` from one beyond it, if it cannot.

    Two checks: one sample is worth more than :data:`MAX_FLIP_SHARE` of the threshold (the gate then turns on a
    single image), and per format, the 95% interval's half-width exceeds the threshold, or the interval
    straddles it (the verdict could go either way on another draw of the same size).
    """
    warnings = []
    step = one_sample_points(samples)
    if threshold_points > 0 and step > MAX_FLIP_SHARE * threshold_points:
        warnings.append(f"one sample of {samples} is {step:.2f} points, more than {MAX_FLIP_SHARE:.0%} of the "
                        f"{threshold_points:g}-point threshold: the gate turns on single samples; "
                        f"evaluate on at least {int(np.ceil(100 / (MAX_FLIP_SHARE * threshold_points)))} samples")
    for fmt, drop in drops.items():
        if drop.half_width_points > threshold_points:
            warnings.append(f"{fmt}: the 95% interval of the drop [{drop.low_points:+.2f}, {drop.high_points:+.2f}] "
                            f"is wider (±{drop.half_width_points:.2f}) than the {threshold_points:g}-point threshold")
        elif drop.low_points <= threshold_points < drop.high_points:
            warnings.append(f"{fmt}: the 95% interval of the drop [{drop.low_points:+.2f}, {drop.high_points:+.2f}] "
                            f"contains the {threshold_points:g}-point threshold: not resolved either way")
    return warnings


def drops_by_format(artifacts: list[Artifact], correct: dict[str, np.ndarray]) -> dict[str, PairedDrop]:
    """The paired drop of each non-float artifact, by format, against the float artifact of the same format
    (else the float ONNX, else the first float artifact) — the pairing the top-1 drop in the report uses.
    ``correct`` maps artifact key → per-sample correctness (bool array, one entry per evaluation sample)."""
    floats = {a.format: a.key for a in artifacts if a.precision == "fp32"}
    reference = floats.get("onnx", next(iter(floats.values()), None))
    drops: dict[str, PairedDrop] = {}
    for artifact in artifacts:
        ref = floats.get(artifact.format, reference)
        if artifact.precision != "fp32" and ref is not None:
            drops[artifact.format] = paired_drop(correct[ref], correct[artifact.key])
    return drops
