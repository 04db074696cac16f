"""The two error measures of quantized tensors: SQNR (dB) and cosine similarity."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _flat(arrays: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    if isinstance(arrays, np.ndarray):
        return arrays.astype(np.float64).ravel()
    return np.concatenate([np.asarray(a, np.float64).ravel() for a in arrays])


def sqnr_db(reference: Sequence[np.ndarray] | np.ndarray, quantized: Sequence[np.ndarray] | np.ndarray) -> float:
    """Signal to quantization noise ratio, dB: ``10 log10(|ref|² / |ref - q|²)``; capped at 200 dB when exact."""
    ref, got = _flat(reference), _flat(quantized)
    noise = float(np.sum((ref - got) ** 2))
    signal = float(np.sum(ref**2))
    if noise <= signal * 1e-20:
        return 200.0
    return round(float(10.0 * np.log10(max(signal, 1e-30) / noise)), 3)


def cosine(reference: Sequence[np.ndarray] | np.ndarray, quantized: Sequence[np.ndarray] | np.ndarray) -> float:
    """Cosine similarity of the flattened tensors, in [-1, 1]; 1.0 when both are zero."""
    ref, got = _flat(reference), _flat(quantized)
    norm = float(np.linalg.norm(ref) * np.linalg.norm(got))
    return 1.0 if norm == 0.0 else round(float(np.dot(ref, got)) / norm, 6)
