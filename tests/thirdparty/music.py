"""Deterministic music-like audio and madmom's spectrogram features of it, for madmom's networks.

No music ships with our test dependencies, so the signal is synthesised: a drum pattern (kick on beats 1 and 3,
snare on 2 and 4, closed hi-hat on every eighth), a bass line and a sustained triad with harmonics that changes
every bar, at a tempo drawn per seed (90-150 BPM), 44.1 kHz. The features are madmom's own pipeline, written from
its processors (madmom 0.17 ``audio/filters.py``, ``audio/spectrogram.py``): frames centred every
``44100 / fps`` samples, a Hann-windowed magnitude STFT, a logarithmic filterbank of ``bands`` per octave between
``fmin`` and ``fmax`` with duplicate bins merged and area-normalised triangles, ``log10(1 + x)``, and for the
beat/downbeat/note networks the positive first-order difference stacked beside it (``diff_ratio`` 0.5). The band
counts this gives are the ones the networks take (266, 314, 482, 81, 105, 162, 236), which checks the filterbank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 44_100
#: Reference frequency of madmom's logarithmic filterbanks (A4, Hz).
A4 = 440.0


def music_like(seconds: float, seed: int = 0) -> np.ndarray:
    """A float32 waveform in [-1, 1] at 44.1 kHz: drums, bass and chords at a seeded tempo."""
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    beat = 60.0 / rng.uniform(90, 150)
    wave = np.zeros(n)

    def hit(start: float, sound: np.ndarray) -> None:
        i = int(start * RATE)
        if i < n:
            wave[i:i + len(sound)] += sound[:n - i]

    tail = np.arange(int(0.25 * RATE)) / RATE
    kick = np.sin(2 * np.pi * (50 + 100 * np.exp(-tail * 30)) * tail) * np.exp(-tail * 12)
    snare = (rng.normal(size=len(tail)) * 0.5 + np.sin(2 * np.pi * 190 * tail)) * np.exp(-tail * 20)
    hat = rng.normal(size=len(tail) // 4) * np.exp(-tail[: len(tail) // 4] * 80) * 0.3
    for k in range(int(seconds / beat) + 1):
        hit(k * beat, kick if k % 2 == 0 else snare)
        hit(k * beat, hat)
        hit((k + 0.5) * beat, hat)
    roots = 110.0 * 2 ** (rng.choice([0, 3, 5, 7, 8, 10], size=int(seconds / (4 * beat)) + 1) / 12)
    root = roots[(t / (4 * beat)).astype(int)]
    chord = sum(np.sin(2 * np.pi * root * ratio * h * t) / h for ratio in (2.0, 2.52, 3.0) for h in (1, 2, 3))
    wave += 0.15 * chord + 0.3 * np.sin(2 * np.pi * root * t) * (0.5 + 0.5 * np.cos(2 * np.pi * t / beat))
    wave = 0.8 * wave / np.max(np.abs(wave)) + 0.001 * rng.normal(size=n)
    return np.clip(wave, -1, 1).astype(np.float32)


def log_filterbank(frame_size: int, bands: int, fmin: float, fmax: float) -> np.ndarray:
    """madmom's ``LogarithmicFilterbank`` (unique bins, area-normalised triangles): (frame_size // 2, filters)."""
    left = np.floor(np.log2(fmin / A4) * bands)
    right = np.ceil(np.log2(fmax / A4) * bands)
    freqs = A4 * 2.0 ** (np.arange(left, right) / bands)
    freqs = freqs[np.searchsorted(freqs, fmin):]
    freqs = freqs[:np.searchsorted(freqs, fmax, "right")]
    bin_freqs = np.fft.fftfreq(frame_size, 1.0 / RATE)[: frame_size // 2]
    index = np.clip(bin_freqs.searchsorted(freqs), 1, len(bin_freqs) - 1)
    index -= (freqs - bin_freqs[index - 1] < bin_freqs[index] - freqs).astype(index.dtype)
    bins = np.unique(index)
    bank = np.zeros((frame_size // 2, len(bins) - 2), np.float32)
    for k, (start, center, stop) in enumerate(zip(bins, bins[1:], bins[2:])):
        if stop - start < 2:
            center, stop = start, start + 1
        rise = np.linspace(0, 1, center - start, endpoint=False)
        fall = np.linspace(1, 0, stop - center, endpoint=False)
        triangle = np.concatenate([rise, fall]) if center > start else np.ones(stop - start)
        bank[start:stop, k] = triangle / triangle.sum()
    return bank


@dataclass(frozen=True)
class Features:
    """One madmom feature pipeline: frame sizes with their bands per octave, frame rate, range, difference."""

    frame_sizes: tuple[int, ...]
    bands: tuple[int, ...]
    fps: float = 100.0
    fmin: float = 30.0
    fmax: float = 17_000.0
    diff: bool = True
    #: ``log10(mul * x + 1)``: madmom's onset networks take mul = 5.
    mul: float = 1.0
    #: Where the Hann window has risen to this share of its peak sets the difference's frame lag.
    diff_ratio: float = 0.5

    def __call__(self, wave: np.ndarray) -> np.ndarray:
        """(frames, features) float32: one block per frame size, each the log spectrogram and its difference."""
        return np.hstack([self._one(wave, size, bands) for size, bands in zip(self.frame_sizes, self.bands)])

    def _one(self, wave: np.ndarray, frame_size: int, bands: int) -> np.ndarray:
        hop = RATE / self.fps
        count = int(np.ceil(len(wave) / hop))
        padded = np.pad(wave, (frame_size // 2, frame_size))
        window = np.hanning(frame_size).astype(np.float32)
        frames = np.stack([padded[int(i * hop):int(i * hop) + frame_size] for i in range(count)]) * window
        spectrum = np.abs(np.fft.rfft(frames, axis=1))[:, : frame_size // 2]
        spec = np.log10(1 + self.mul * spectrum @ log_filterbank(frame_size, bands, self.fmin, self.fmax))
        if not self.diff:
            return spec.astype(np.float32)
        sample = int(np.argmax(window > self.diff_ratio * window.max()))
        lag = max(1, int(round((frame_size / 2 - sample) / hop)))
        diff = np.zeros_like(spec)
        diff[lag:] = np.maximum(spec[lag:] - spec[:-lag], 0)
        return np.hstack([spec, diff]).astype(np.float32)


#: madmom's pre-processing of each network family (features/beats.py, downbeats.py, notes.py, key.py,
#: chords.py, onsets.py, audio/chroma.py).
BEATS = Features((1024, 2048, 4096), (6, 6, 6))
DOWNBEATS = Features((1024, 2048, 4096), (3, 6, 12))
NOTES = Features((1024, 2048, 4096), (12, 12, 12))
TCN_BEATS = Features((2048,), (12,), diff=False)
KEY = Features((8192,), (24,), fps=5, fmin=65, fmax=2100, diff=False)
CHROMA = Features((8192,), (24,), fps=10, fmin=65, fmax=2100, diff=False)
CHORDS = Features((8192,), (24,), fps=10, fmin=60, fmax=2600, diff=False)
ONLINE_BEATS = Features((2048,), (12,))
ONSETS = Features((1024, 2048, 4096), (6, 6, 6), mul=5, diff_ratio=0.25)
ONLINE_ONSETS = Features((512, 1024, 2048), (6, 6, 6), mul=5, diff_ratio=0.25)
PIANO_NOTES = Features((4096,), (24,), fps=50, fmax=10_000, diff=False)


def feature_windows(features: Features, frames: int, count: int, seed: int = 0, context: int = 0) -> np.ndarray:
    """``count`` windows of ``frames`` consecutive feature frames of music-like audio: (N, frames, width).

    With ``context`` > 0 each frame is stacked with ``context`` frames either side (madmom's deep chroma
    network reads 15 frames flattened), giving (N, frames, (2 * context + 1) * width).
    """
    seconds = (count * frames + 2 * context + 2) / features.fps
    spec = features(music_like(seconds, seed))
    if context:
        padded = np.pad(spec, ((context, context), (0, 0)), mode="edge")
        spec = np.stack([padded[i:i + 2 * context + 1].reshape(-1) for i in range(len(spec))])
    return np.stack([spec[i * frames:(i + 1) * frames] for i in range(count)]).astype(np.float32)
