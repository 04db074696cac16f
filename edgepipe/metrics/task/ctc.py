"""CTC text recognition: character agreement of the candidate's greedy-decoded text with the float model's, in [0, 1].

Character agreement of one sample is ``1 − edit distance / max(len(float text), 1)``, floored at 0;
the score is its mean over samples, with the share of samples whose text is exactly the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from edgepipe.metrics.task.score import CANDIDATE, REFERENCE, TaskScore, like_reference


def greedy_decode(output: np.ndarray, *, blank: int = 0, class_axis: int = -1) -> list[tuple[int, ...]]:
    """The label sequence of each sample of ``[N, T, C]`` scores (``class_axis`` 1 for ``[N, C, T]``): the best
    class at each step, repeats collapsed, then the ``blank`` class dropped."""
    if output.ndim != 3:
        raise ValueError(f"a CTC output is [N, T, C] or [N, C, T], not {list(output.shape)}")
    best = np.argmax(np.moveaxis(output, class_axis, -1), axis=-1)
    decoded = []
    for steps in best:
        changes = np.concatenate([[True], steps[1:] != steps[:-1]])
        kept = steps[changes]
        decoded.append(tuple(int(c) for c in kept[kept != blank]))
    return decoded


def edit_distance(first: Sequence[int] | str, second: Sequence[int] | str) -> int:
    """Levenshtein distance: the fewest insertions, deletions and substitutions that turn ``first`` into
    ``second`` (``kitten`` → ``sitting``: 3)."""
    codes: dict[object, int] = {}
    target = np.asarray([codes.setdefault(c, len(codes)) for c in second], dtype=np.int64)
    previous = np.arange(len(second) + 1)
    for row, item in enumerate(first, start=1):
        substitute = previous[:-1] + (target != codes.get(item, -1))
        current = np.empty_like(previous)
        current[0] = row
        current[1:] = np.minimum(previous[1:] + 1, substitute)
        # An insertion may chain along the row: current[j] = min over k ≤ j of (current[k] + j − k).
        offsets = np.arange(current.size)
        current = np.minimum.accumulate(current - offsets) + offsets
        previous = current
    return int(previous[-1])


def character_agreement(reference: Sequence[int] | str, candidate: Sequence[int] | str) -> float:
    """``1 − edit distance / max(len(reference), 1)``, floored at 0: 1.0 for the same text."""
    return max(0.0, 1.0 - edit_distance(reference, candidate) / max(len(reference), 1))


def score_ctc(reference: np.ndarray, candidate: np.ndarray, *, blank: int = 0, class_axis: int = -1,
              labels: Sequence[Sequence[int]] | None = None) -> TaskScore:
    """Mean character agreement of the candidate's greedy-decoded text with the float model's (value), with the
    exact-match rate in ``extra``; with ``labels`` (label sequences), also each model's agreement with them."""
    ref_text = greedy_decode(reference, blank=blank, class_axis=class_axis)
    cand_text = greedy_decode(like_reference(reference, candidate), blank=blank, class_axis=class_axis)
    agreement = float(np.mean([character_agreement(r, c) for r, c in zip(ref_text, cand_text)]))
    exact = float(np.mean([r == c for r, c in zip(ref_text, cand_text)]))
    extra = {"exact_match": exact}
    if labels is not None:
        if len(labels) != len(ref_text):
            raise ValueError(f"{len(labels)} label sequences for {len(ref_text)} samples")
        for name, texts in ((REFERENCE, ref_text), (CANDIDATE, cand_text)):
            extra[f"{name}_agreement_vs_labels"] = float(np.mean(
                [character_agreement(tuple(t), text) for t, text in zip(labels, texts)]))
    detail = (f"character agreement {agreement:.3f}, {exact:.0%} of {len(ref_text)} texts identical "
              f"(greedy CTC, blank {blank})")
    return TaskScore(metric=f"character agreement vs {REFERENCE}", value=agreement, samples=len(ref_text),
                     detail=detail, extra=extra)
