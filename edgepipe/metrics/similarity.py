"""How far a candidate tensor is from its reference: cosine similarity and SQNR (dB), with one set of edge cases.

Both take one array or a sequence of arrays (flattened and joined, so a batch of samples or a list of outputs is
one vector). Edge cases, the same wherever edgepipe compares tensors:

- cosine is 1.0 when both are all zeros, 0.0 when only one is, else clipped to [-1, 1];
- SQNR is :data:`SQNR_CAP_DB` when the two are equal, ``-SQNR_CAP_DB`` when the reference is all zeros and the
  candidate is not, else ``10·log10(Σref² / Σ(ref−cand)²)`` capped at :data:`SQNR_CAP_DB`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The SQNR of identical tensors, dB (and the cap of every other value).
SQNR_CAP_DB = 200.0

Tensors = np.ndarray | Sequence[np.ndarray]


def flat(tensors: Tensors) -> np.ndarray:
    """``tensors`` as one float64 vector."""
    if isinstance(tensors, np.ndarray):
        return tensors.astype(np.float64).ravel()
    if not len(tensors):
        return np.zeros(0)
    return np.concatenate([np.asarray(t, np.float64).ravel() for t in tensors])


def cosine(reference: Tensors, candidate: Tensors) -> float:
    """Cosine similarity of the flattened tensors; 1.0 when both are all zeros, 0.0 when only one is."""
    ref, cand = flat(reference), flat(candidate)
    norms = float(np.linalg.norm(ref) * np.linalg.norm(cand))
    if norms == 0.0:
        return 1.0 if not ref.any() and not cand.any() else 0.0
    return float(np.clip(ref @ cand / norms, -1.0, 1.0))


def sqnr_db(reference: Tensors, candidate: Tensors) -> float:
    """Signal-to-quantization-noise ratio of ``candidate`` against ``reference``, dB, capped at ±200 dB."""
    ref, cand = flat(reference), flat(candidate)
    noise = float(np.sum((ref - cand) ** 2))
    signal = float(np.sum(ref**2))
    if noise == 0.0:
        return SQNR_CAP_DB
    if signal == 0.0:
        return -SQNR_CAP_DB
    return float(min(SQNR_CAP_DB, 10.0 * np.log10(signal / noise)))
