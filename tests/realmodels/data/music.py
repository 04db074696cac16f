"""Deterministic music-like audio and madmom's spectrogram features of it, for madmom's networks.

No music ships with our test dependencies, so the signal is synthesised: a drum pattern (kick on beats 1 and 3,
snare on 2 and 4, closed hi-hat on every eighth), a bass line and a sustained triad with harmonics that changes
every bar, at a tempo drawn per seed (90-150 BPM), 44.1 kHz. The features are madmom's own pipeline, written from
its processors (madmom 0.17 ``audio/filters.py``, ``audio/spectrogram.py``): frames centred every
``44100 / fps`` samples, a Hann-windowed magnitude STFT, a logarithmic filterbank of ``bands`` per octave between
``fmin`` and ``fmax`` with duplicate bins merged and area-normalised triangles, ``log10(1 + x)``, and for the
beat/downbeat/note networks the positive first-order difference stacked beside it (``diff_ratio`` 0.5). The band
counts this gives are the ones the networks take (266, 314, 482, 81, 105, 162, 236), which checks the filterbank.
The onset CNN's Mel bands stacked in depth, and SuperFlux's onset function (a maximum-filtered difference summed over
bands) are options of the same pipeline; beat-synchronous features for the downbeat GRUs are in music_beats.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATE = 44_100
#: Reference frequency of madmom's logarithmic filterbanks (A4, Hz).
A4 = 440.0


def music_like(seconds: float, seed: int = 0, rate: int = RATE) -> np.ndarray:
    """A float32 waveform in [-1, 1] at ``rate`` (44.1 kHz): drums, bass and chords at a seeded tempo."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    beat = 60.0 / rng.uniform(90, 150)
    wave = np.zeros(n)

    def hit(start: float, sound: np.ndarray) -> None:
        i = int(start * rate)
        if i < n:
            wave[i:i + len(sound)] += sound[:n - i]

    tail = np.arange(int(0.25 * rate)) / rate
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


def beat_period(seed: int) -> float:
    """Seconds per beat of ``music_like(..., seed)``, whose beats fall at 0 s and every period after: its tempo is
    the first draw of its generator."""
    return 60.0 / float(np.random.default_rng(seed).uniform(90, 150))


def log_frequencies(bands: int, fmin: float, fmax: float) -> np.ndarray:
    """madmom's ``log_frequencies``: ``bands`` per octave from A4 (Hz), kept between ``fmin`` and ``fmax``."""
    left = np.floor(np.log2(fmin / A4) * bands)
    right = np.ceil(np.log2(fmax / A4) * bands)
    freqs = A4 * 2.0 ** (np.arange(left, right) / bands)
    freqs = freqs[np.searchsorted(freqs, fmin):]
    return freqs[:np.searchsorted(freqs, fmax, "right")]


def mel_frequencies(bands: int, fmin: float, fmax: float) -> np.ndarray:
    """madmom's ``mel_frequencies``: ``bands`` frequencies evenly spaced in Mel between ``fmin`` and ``fmax`` (Hz)."""
    mel = 1127.01048 * np.log(np.array([fmin, fmax]) / 700.0 + 1.0)
    return 700.0 * (np.exp(np.linspace(mel[0], mel[1], bands) / 1127.01048) - 1.0)


def log_filterbank(frame_size: int, bands: int, fmin: float, fmax: float, *, mel: bool = False,
                   norm: bool = True, rate: float = RATE) -> np.ndarray:
    """madmom's ``LogarithmicFilterbank`` (``bands`` per octave, duplicate bins merged) or, with ``mel``, its
    ``MelFilterbank`` (``bands`` filters, duplicate bins kept: ``unique_filters=False``): (frame_size // 2, filters).

    Overlapping triangles of height 1, area-normalised with ``norm``.
    """
    freqs = mel_frequencies(bands + 2, fmin, fmax) if mel else log_frequencies(bands, fmin, fmax)
    bin_freqs = np.fft.fftfreq(frame_size, 1.0 / rate)[: frame_size // 2]
    index = np.clip(bin_freqs.searchsorted(freqs), 1, len(bin_freqs) - 1)
    index -= (freqs - bin_freqs[index - 1] < bin_freqs[index] - freqs).astype(index.dtype)
    bins = index if mel else np.unique(index)
    bank = np.zeros((frame_size // 2, len(bins) - 2), np.float32)
    for k, (start, center, stop) in enumerate(zip(bins, bins[1:], bins[2:])):
        if stop - start < 2:
            center, stop = start, start + 1
        rise = np.linspace(0, 1, center - start, endpoint=False)
        fall = np.linspace(1, 0, stop - center, endpoint=False)
        triangle = np.concatenate([rise, fall])
        bank[start:stop, k] = triangle / triangle.sum() if norm else triangle
    return bank


@dataclass(frozen=True)
class Features:
    """One madmom feature pipeline: frame sizes with their bands (per octave, or Mel filters), frame rate, range,
    logarithm, difference."""

    frame_sizes: tuple[int, ...]
    bands: tuple[int, ...]
    fps: float = 100.0
    fmin: float = 30.0
    fmax: float = 17_000.0
    diff: bool = True
    #: ``log(mul * x + add)``: madmom's onset networks take mul = 5; the onset CNN takes ``np.log`` of x + eps.
    mul: float = 1.0
    add: float = 1.0
    log: np.ufunc = np.log10
    #: Where the Hann window has risen to this share of its peak sets the difference's frame lag.
    diff_ratio: float = 0.5
    #: ``bands`` counts Mel filters (madmom's ``MelFilterbank``, duplicate bins kept) instead of bands per octave.
    mel: bool = False
    #: Area-normalised filters (madmom's ``norm_filters``).
    norm_filters: bool = True
    #: The difference subtracts the maximum over this many neighbouring bands of the earlier frame (SuperFlux: 3).
    diff_max_bins: int = 1
    #: Keep the spectrogram beside its difference; False gives the difference alone.
    keep_spec: bool = True
    #: Sum every feature of a frame into one value (the spectral flux onset function): (frames, 1).
    sum_bands: bool = False
    #: Sample rate of the audio (Hz): madmom's networks read 44.1 kHz, BeatNet's 22.05 kHz.
    rate: int = RATE

    def __call__(self, wave: np.ndarray) -> np.ndarray:
        """(frames, features) float32: one block per frame size side by side, each the log spectrogram and its
        difference (or a block summed to one value per frame with ``sum_bands``)."""
        features = np.hstack(self.blocks(wave))
        return features.sum(axis=1, keepdims=True) if self.sum_bands else features

    def blocks(self, wave: np.ndarray) -> list[np.ndarray]:
        """One (frames, features) float32 block per frame size."""
        return [self._one(wave, size, bands) for size, bands in zip(self.frame_sizes, self.bands)]

    def _one(self, wave: np.ndarray, frame_size: int, bands: int) -> np.ndarray:
        hop = self.rate / self.fps
        count = int(np.ceil(len(wave) / hop))
        padded = np.pad(wave, (frame_size // 2, frame_size))
        window = np.hanning(frame_size).astype(np.float32)
        frames = np.stack([padded[int(i * hop):int(i * hop) + frame_size] for i in range(count)]) * window
        spectrum = np.abs(np.fft.rfft(frames, axis=1))[:, : frame_size // 2]
        bank = log_filterbank(frame_size, bands, self.fmin, self.fmax, mel=self.mel, norm=self.norm_filters,
                              rate=self.rate)
        spec = self.log(self.mul * spectrum @ bank + self.add)
        if not self.diff:
            return spec.astype(np.float32)
        sample = int(np.argmax(window > self.diff_ratio * window.max()))
        lag = max(1, int(round((frame_size / 2 - sample) / hop)))
        earlier = spec
        if self.diff_max_bins > 1:
            from scipy.ndimage import maximum_filter  # scipy: a test dependency, imported where used

            earlier = maximum_filter(spec, size=(1, self.diff_max_bins))
        diff = np.zeros_like(spec)
        diff[lag:] = np.maximum(spec[lag:] - earlier[:-lag], 0)
        return (np.hstack([spec, diff]) if self.keep_spec else diff).astype(np.float32)


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
#: The onset CNN (onsets.py ``CNNOnsetProcessor``): 80 Mel bands (27.5 Hz - 16 kHz) of three frame sizes, natural
#: log of x + eps, the three stacked in depth by ``depth_windows``.
ONSETS_CNN = Features((2048, 1024, 4096), (80, 80, 80), fmin=27.5, fmax=16_000, diff=False, add=float(np.spacing(1)),
                      log=np.log, mel=True)
#: SuperFlux's onset function, what the peak-picking BRNN reads (bin/SuperFluxNN, 100 fps): 24 bands per octave,
#: filters of height 1, the difference to the maximum of 3 neighbouring bands of the earlier frame, summed: 1 value.
SUPERFLUX = Features((2048,), (24,), norm_filters=False, diff_max_bins=3, keep_spec=False, sum_bands=True)


def feature_windows(features: Features, frames: int, count: int, seed: int = 0, context: int = 0) -> np.ndarray:
    """``count`` windows of ``frames`` consecutive feature frames of music-like audio: (N, frames, width).

    With ``context`` > 0 each frame is stacked with ``context`` frames either side (madmom's deep chroma
    network reads 15 frames flattened), giving (N, frames, (2 * context + 1) * width).
    """
    seconds = (count * frames + 2 * context + 2) / features.fps
    spec = features(music_like(seconds, seed, features.rate))
    if context:
        padded = np.pad(spec, ((context, context), (0, 0)), mode="edge")
        spec = np.stack([padded[i:i + 2 * context + 1].reshape(-1) for i in range(len(spec))])
    return np.stack([spec[i * frames:(i + 1) * frames] for i in range(count)]).astype(np.float32)


def depth_windows(features: Features, frames: int, count: int, seed: int = 0, pad: int = 0) -> np.ndarray:
    """``count`` windows of the frame sizes' blocks stacked in depth: (N, frames + 2 * pad, bands, frame sizes).

    A CNN that reads ``pad`` frames of context either side of each output frame gets them with every window;
    at the ends of the piece its first and last frame are repeated ``pad`` times, as madmom pads (onsets.py
    ``_cnn_onset_processor_pad``), so window i gives the network's output frames ``i * frames`` onwards.
    """
    spec = np.dstack(features.blocks(music_like((count * frames + 2) / features.fps, seed)))
    padded = np.pad(spec, ((pad, pad), (0, 0), (0, 0)), mode="edge")
    return np.stack([padded[i * frames:(i + 1) * frames + 2 * pad] for i in range(count)]).astype(np.float32)
