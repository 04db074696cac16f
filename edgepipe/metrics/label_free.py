"""Per-output agreement between a reference (float) model and a candidate (int8 or converted) model.

No labels needed: both models run on the same inputs and their outputs are compared.
Every metric is over all samples of one output, flattened (so a one-value output such as
a voice-activity probability still gets a meaningful cosine):

- ``cosine``: cosine similarity of the two output vectors (1 = same direction);
- ``sqnr_db``: signal-to-quantization-noise ratio, ``10·log10(Σref² / Σ(ref−cand)²)`` in dB,
  capped at :data:`SQNR_CAP_DB` when the outputs are identical;
- ``max_abs_error``: the largest absolute difference, in the output's own unit;
- ``parts``: an output whose channels span very different ranges (a detector's boxes beside its scores) is
  also judged part by part (:mod:`edgepipe.metrics.parts`), so the large channels cannot hide the small ones;
- ``top1_agreement`` / ``top5_agreement``, for class-score outputs only (:func:`output_kind`):
  share of samples (of positions, for a per-position score such as an OCR recognizer's
  ``(N, T, classes)``) whose reference top-1 class is the candidate's top-1 / among its top 5.
  Regression outputs (landmarks, boxes, maps, embeddings) have no top-1: cosine, SQNR and max
  error judge them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from edgepipe.metrics.parts import PartAgreement, split_parts, worst_channel
from edgepipe.metrics.similarity import cosine, sqnr_db

OutputKind = Literal["class-scores", "regression"]
_CLASS_NAME = re.compile(r"logit|prob|softmax|class|cls|label|score", re.IGNORECASE)


@dataclass(frozen=True)
class OutputAgreement:
    """How one candidate output agrees with the reference output over all samples."""

    output: str
    cosine: float
    sqnr_db: float
    max_abs_error: float
    top1_agreement: float | None = None
    top5_agreement: float | None = None
    kind: OutputKind = "regression"
    #: The output's parts of very different ranges, each judged apart (empty: judged whole).
    parts: tuple[PartAgreement, ...] = ()
    #: The channel of significant range with the lowest SQNR (None: the output has no feature axis).
    worst_channel: PartAgreement | None = None


@dataclass(frozen=True)
class Thresholds:
    """The label-free gate: ``None`` leaves a metric ungated."""

    min_cosine: float | None = 0.99
    min_sqnr_db: float | None = 15.0
    min_part_sqnr_db: float | None = 10.0
    min_top1_agreement: float | None = None
    max_abs_error: float | None = None

    def describe(self) -> str:
        """The thresholds in force, e.g. ``cosine >= 0.99, SQNR >= 20 dB``."""
        parts = [f"cosine >= {self.min_cosine:g}" if self.min_cosine is not None else "",
                 f"SQNR >= {self.min_sqnr_db:g} dB" if self.min_sqnr_db is not None else "",
                 f"SQNR of each part >= {self.min_part_sqnr_db:g} dB" if self.min_part_sqnr_db is not None else "",
                 f"top-1 agreement >= {self.min_top1_agreement:g}" if self.min_top1_agreement is not None else "",
                 f"max abs error <= {self.max_abs_error:g}" if self.max_abs_error is not None else ""]
        return ", ".join(p for p in parts if p) or "no threshold"

    def with_margin(self) -> Thresholds:
        """These thresholds with half the error they allow: cosine and top-1 shortfalls halved, SQNR + 3 dB (half
        the noise power), max error halved. What a choice made on a small split must reach so that the result
        still meets the real thresholds on data it was not chosen on."""
        return Thresholds(
            min_cosine=None if self.min_cosine is None else 1 - (1 - self.min_cosine) / 2,
            min_sqnr_db=None if self.min_sqnr_db is None else self.min_sqnr_db + 10 * math.log10(2),
            min_part_sqnr_db=None if self.min_part_sqnr_db is None else self.min_part_sqnr_db + 10 * math.log10(2),
            min_top1_agreement=None if self.min_top1_agreement is None else 1 - (1 - self.min_top1_agreement) / 2,
            max_abs_error=None if self.max_abs_error is None else self.max_abs_error / 2)

    def failures(self, agreement: OutputAgreement) -> list[str]:
        """One line per threshold ``agreement`` misses, naming the output, the value and the limit."""
        out = []
        name = agreement.output
        if self.min_cosine is not None and agreement.cosine < self.min_cosine:
            out.append(f"{name}: cosine {agreement.cosine:.4f} < {self.min_cosine:.4g}")
        if self.min_sqnr_db is not None and agreement.sqnr_db < self.min_sqnr_db:
            out.append(f"{name}: SQNR {agreement.sqnr_db:.1f} dB < {self.min_sqnr_db:.4g} dB")
        if self.min_part_sqnr_db is not None:
            out += [f"{name} {part.part}: SQNR {part.sqnr_db:.1f} dB < {self.min_part_sqnr_db:.4g} dB"
                    for part in agreement.parts if part.sqnr_db < self.min_part_sqnr_db]
        if (self.min_top1_agreement is not None and agreement.top1_agreement is not None
                and agreement.top1_agreement < self.min_top1_agreement):
            out.append(f"{name}: top-1 agreement {agreement.top1_agreement:.3f} < {self.min_top1_agreement:g}")
        if self.max_abs_error is not None and agreement.max_abs_error > self.max_abs_error:
            out.append(f"{name}: max abs error {agreement.max_abs_error:.4g} > {self.max_abs_error:g}")
        return out


def output_kind(name: str, reference: np.ndarray) -> OutputKind:
    """``class-scores`` when the last axis holds at least 2 classes and the output is named like scores
    (logits, prob, softmax, class, cls, label, score) or every row is a probability distribution; else
    ``regression``. ``reference`` is sample-major, ``(N, …, classes)``.
    """
    if reference.ndim < 2 or reference.shape[-1] < 2 or not reference.size:
        return "regression"
    if _CLASS_NAME.search(name):
        return "class-scores"
    rows = reference.reshape(-1, reference.shape[-1]).astype(np.float64)
    distribution = rows.min() >= 0.0 and np.allclose(rows.sum(axis=1), 1.0, atol=1e-3)
    return "class-scores" if distribution else "regression"


def topk_agreement(reference: np.ndarray, candidate: np.ndarray, k: int) -> float | None:
    """Share of rows (samples, or positions) whose reference top-1 class is among the candidate's top ``k``.

    Both arrays are ``(…, classes)``; ``None`` when there are fewer than ``k`` classes.
    """
    if reference.ndim < 2 or reference.shape != candidate.shape or reference.shape[-1] < max(k, 2):
        return None
    ref = reference.reshape(-1, reference.shape[-1])
    cand = candidate.reshape(-1, candidate.shape[-1])
    top1 = ref.argmax(axis=1)
    topk = np.argsort(-cand, axis=1)[:, :k]
    return float(np.mean((topk == top1[:, None]).any(axis=1)))


def compare_outputs(name: str, reference: np.ndarray, candidate: np.ndarray) -> OutputAgreement:
    """The agreement of ``candidate`` with ``reference``, both sample-major ``(N, …)`` with equal sizes."""
    if reference.size != candidate.size:
        raise ValueError(f"output {name}: {reference.shape} and {candidate.shape} differ in size")
    cand = candidate.reshape(reference.shape)
    kind = output_kind(name, reference)
    classes = kind == "class-scores"
    return OutputAgreement(
        output=name, cosine=round(cosine(reference, cand), 6), sqnr_db=round(sqnr_db(reference, cand), 3),
        max_abs_error=float(np.max(np.abs(reference.astype(np.float64) - cand))) if reference.size else 0.0,
        top1_agreement=topk_agreement(reference, cand, 1) if classes else None,
        top5_agreement=topk_agreement(reference, cand, 5) if classes else None, kind=kind,
        # class scores of rare classes are small by nature: their task check is top-1 agreement, not parts
        parts=() if classes else tuple(split_parts(reference, cand)), worst_channel=worst_channel(reference, cand))


def match_outputs(reference: Sequence[tuple[str, int]], candidate: Sequence[tuple[str, int]]) -> list[tuple[int, int]]:
    """Pairs ``(reference index, candidate index)`` of outputs given as ``(name, size)``.

    By name when every reference name is among the candidate's; else by position when the
    sizes agree; else each reference output with the one candidate output of its size, and outputs
    that share a size with others in the order both models declare them (a voice-activity detector's two [1, 51, 1]
    scores, renamed by onnx2tf, beside a constant it left out). Outputs that cannot be paired are
    left out.
    """
    cand_names = {name: i for i, (name, _) in enumerate(candidate)}
    if all(name in cand_names for name, _ in reference):
        return [(i, cand_names[name]) for i, (name, _) in enumerate(reference)]
    if len(reference) == len(candidate) and all(r[1] == c[1] for r, c in zip(reference, candidate)):
        return [(i, i) for i in range(len(reference))]
    pairs, shared = [], []
    reference_sizes = [size for _, size in reference]
    for i, (_, size) in enumerate(reference):
        same = [j for j, (_, other) in enumerate(candidate) if other == size]
        if len(same) == 1 and reference_sizes.count(size) == 1:
            pairs.append((i, same[0]))
        elif same:
            shared.append(i)
    used = {j for _, j in pairs}
    for i in shared:
        j = next((j for j, (_, other) in enumerate(candidate) if other == reference[i][1] and j not in used), None)
        if j is not None:
            pairs.append((i, j))
            used.add(j)
    return sorted(pairs)
