"""The typed result every task metric returns, the precision/recall/F1 of a one-to-one matching, and the shape
check every metric makes before comparing two outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: How details name the two models compared: the reference (float) and the candidate (quantized).
REFERENCE = "float"
CANDIDATE = "int8"


@dataclass(frozen=True)
class TaskScore:
    """How well a candidate model still does one task, judged against the reference model (or labels).

    ``value`` is in [0, 1], higher is better; ``detail`` is the one line a user reads, e.g.
    ``F1 0.53 at IoU 0.5 (72 float boxes, 35 int8)``; ``extra`` holds the other figures
    (precision, recall, mAP@0.5, …), each in [0, 1] unless its name gives a unit.
    """

    metric: str
    value: float
    samples: int
    detail: str
    extra: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class MatchCounts:
    """A one-to-one matching of candidate items (boxes, peaks) to reference items, counted over a batch."""

    matched: int
    reference: int
    candidate: int

    @property
    def precision(self) -> float:
        """Share of candidate items matched; 1.0 when the candidate found nothing (it claimed nothing wrong)."""
        return self.matched / self.candidate if self.candidate else 1.0

    @property
    def recall(self) -> float:
        """Share of reference items matched; 1.0 when the reference has nothing to find."""
        return self.matched / self.reference if self.reference else 1.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall: 1.0 when neither side has items, 0.0 when only one has."""
        if not self.reference and not self.candidate:
            return 1.0
        return 2 * self.matched / (self.reference + self.candidate)

    def describe(self, what: str, against: str = REFERENCE, at: str = "") -> str:
        """One line, e.g. ``F1 0.40 at IoU 0.5 (3 float boxes, 2 int8)``, saying so when both sides are empty."""
        if not self.reference and not self.candidate:
            return f"F1 1.00: no {against} {what} and no {CANDIDATE} {what} (nothing to find, nothing found)"
        where = f" {at}" if at else ""
        return f"F1 {self.f1:.2f}{where} ({self.reference} {against} {what}, {self.candidate} {CANDIDATE})"

    def figures(self) -> dict[str, float]:
        """Precision, recall and the counts, for :attr:`TaskScore.extra`."""
        return {"precision": self.precision, "recall": self.recall, "matched": float(self.matched),
                f"{REFERENCE}_count": float(self.reference), f"{CANDIDATE}_count": float(self.candidate)}

    def __add__(self, other: MatchCounts) -> MatchCounts:
        return MatchCounts(self.matched + other.matched, self.reference + other.reference,
                           self.candidate + other.candidate)


def like_reference(reference: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """``candidate`` in ``reference``'s shape when the two differ at most by axes of size 1 (``[1, 84, 8400]`` and
    ``[84, 8400]``); a ``ValueError`` otherwise, since reshaping a transposed layout would scramble it."""
    if candidate.shape != reference.shape:
        if [s for s in candidate.shape if s != 1] != [s for s in reference.shape if s != 1]:
            raise ValueError(f"{CANDIDATE} output {list(candidate.shape)} is not laid out like the {REFERENCE} "
                             f"output {list(reference.shape)}")
        candidate = candidate.reshape(reference.shape)
    return candidate
