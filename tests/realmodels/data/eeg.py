"""EEG-like signals made in the repository, for the held-out EEG networks (tests/realmodels/models/biosignals_eeg.py).

A background with a 1/f spectrum and an alpha rhythm, plus the events the networks look for: sleep spindles
(11-16 Hz bursts of 0.5-2 s with a Hann envelope) and seizure-like stretches (3 Hz spike-and-wave discharges that
grow and fade over 5-15 s). Amplitudes are in microvolts, as recordings are.
"""

from __future__ import annotations

import numpy as np


def background(seconds: float, rate: float, rng: np.random.Generator) -> np.ndarray:
    """1/f noise (about 20 uV RMS) with a waxing and waning 10 Hz alpha rhythm."""
    n = int(seconds * rate)
    spectrum = np.fft.rfft(rng.normal(size=n))
    freqs = np.fft.rfftfreq(n, 1 / rate)
    spectrum[1:] /= np.sqrt(freqs[1:])
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, n)
    t = np.arange(n) / rate
    alpha = np.sin(2 * np.pi * rng.uniform(9, 11) * t) * (1 + np.sin(2 * np.pi * 0.1 * t + rng.uniform(0, 6)))
    return 20 * noise / noise.std() + 5 * alpha


def with_spindles(signal: np.ndarray, rate: float, rng: np.random.Generator, count: int) -> np.ndarray:
    """``signal`` with ``count`` sleep spindles at random places."""
    out = signal.copy()
    for _ in range(count):
        length = int(rng.uniform(0.5, 2.0) * rate)
        start = int(rng.integers(0, len(out) - length))
        t = np.arange(length) / rate
        out[start:start + length] += rng.uniform(15, 40) * np.hanning(length) * np.sin(
            2 * np.pi * rng.uniform(11, 16) * t + rng.uniform(0, 6))
    return out


def with_seizure(signal: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """``signal`` with one seizure-like stretch of 3 Hz spike-and-wave discharges, 5-15 s long."""
    out = signal.copy()
    length = min(len(out), int(rng.uniform(5, 15) * rate))
    start = int(rng.integers(0, len(out) - length + 1))
    t = np.arange(length) / rate
    phase = np.mod(t * rng.uniform(2.5, 3.5), 1.0)
    discharge = -np.exp(-((phase - 0.1) / 0.03) ** 2) * 3 + np.sin(2 * np.pi * phase) * 0.8
    out[start:start + length] += rng.uniform(60, 150) * np.hanning(length) * discharge
    return out
