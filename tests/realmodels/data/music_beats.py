"""Beat-synchronous features of music-like audio, for madmom's downbeat GRUs (features/downbeats.py).

madmom's ``RNNBarProcessor`` does not read frames: it reads one row per beat, the features of each beat averaged over
its subdivisions, given the beat times. Two networks read them: the rhythmic one the positive spectral difference
(2048-sample frames, 6 bands per octave: 45 bands) in 4 subdivisions (180 values), the harmonic one CLP chroma
(12 pitch classes) in 2 subdivisions (24 values). Our music has a known tempo and its first beat at 0 s
(tests/realmodels/data/music.py), so the beats are evenly spaced at that tempo, where a beat tracker would put them.

CLP chroma is madmom's ``CLPChroma`` (audio/chroma.py, audio/spectrogram.py ``SemitoneBandpassSpectrogram``):
elliptic band-pass filters one semitone wide (27.5 Hz to 4.2 kHz, 88 bands) run forward and backward at 882, 4410 or
22050 Hz, energy summed over frames of two hops, ``log10(1 + 100 * energy)``, folded into pitch classes and
L2-normalised. madmom resamples with ffmpeg; here scipy's polyphase resampler does it.
"""

from __future__ import annotations

import numpy as np

from tests.realmodels.data import music

#: The rhythmic network's input per frame: the positive difference of 6 bands per octave of 2048-sample frames.
PERCUSSIVE = music.Features((2048,), (6,), keep_spec=False)
#: Beat subdivisions of the rhythmic and the harmonic feature (madmom's ``beat_subdivisions=(4, 2)``).
PERCUSSIVE_SUBDIVISIONS, HARMONIC_SUBDIVISIONS = 4, 2
FPS = 100.0


def clp_chroma(wave: np.ndarray, fps: float = FPS, fmin: float = 27.5, fmax: float = 4200.0) -> np.ndarray:
    """madmom's CLP chroma of a 44.1 kHz waveform, as ``RNNBarProcessor`` sets it up: (frames, 12) float32."""
    from scipy.signal import ellip, filtfilt, resample_poly  # scipy: a test dependency, imported where used

    freqs = music.log_frequencies(12, fmin, fmax)
    rates = np.where(freqs > 2000, 22050, np.where(freqs < 250, 882, 4410))
    count = int(np.round(len(wave) * fps / music.RATE)) + 1
    resampled = {rate: resample_poly(wave.astype(np.float64), 1, music.RATE // rate) for rate in set(rates.tolist())}
    pitch = np.zeros((count, len(freqs)))
    for band, (freq, rate) in enumerate(zip(freqs, rates)):
        edges = [(freq - freq / 25 / 2) * 2 / rate, (freq + freq / 25 / 2) * 2 / rate]
        b, a = ellip(4, 1, 50, edges, btype="bandpass")
        energy = filtfilt(b, a, resampled[rate]) ** 2 / rate * 22050.0
        size, hop = int(np.round(2 * rate / fps)), rate / fps
        padded = np.pad(energy, (size // 2, size))
        sums = np.concatenate([[0.0], np.cumsum(padded)])
        starts = (np.arange(count) * hop).astype(int)
        pitch[:, band] = sums[np.minimum(starts + size, len(padded))] - sums[np.minimum(starts, len(padded))]
    log_pitch = np.log10(100.0 * pitch + 1.0)
    chroma = np.zeros((count, 12))
    midi_min = int(np.round(12 * np.log2(freqs[0] / music.A4) + 69))
    for band in range(len(freqs)):
        chroma[:, (midi_min + band) % 12] += log_pitch[:, band]
    norm = np.sqrt((chroma ** 2).sum(axis=1))
    chroma /= np.where(norm > 0, norm, 1.0)[:, None]
    chroma[norm < 0.001] = 1.0 / np.sqrt(12)
    return chroma.astype(np.float32)


def beat_sync(features: np.ndarray, beats: np.ndarray, subdivisions: int, fps: float = FPS) -> np.ndarray:
    """madmom's ``SyncronizeFeaturesProcessor``: (beats - 1, subdivisions * width), each beat's frames averaged per
    subdivision (windows centred on the beat and its interpolated subdivisions, starting 20 ms before the first)."""
    rows = np.zeros((len(beats) - 1, subdivisions, features.shape[1]))
    start = int(max(0, np.floor((beats[0] - 0.02) * fps)))
    for i in range(len(beats) - 1):
        offset = min(0.5 * (beats[i + 1] - beats[i]) / subdivisions, 0.05)
        end = int(np.floor((beats[i + 1] - offset) * fps))
        part = np.floor(np.linspace(0, subdivisions, end - start, endpoint=False))
        rows[i] = [features[start:end][part == k].mean(axis=0) for k in range(subdivisions)]
        start = end
    return rows.reshape(len(rows), -1).astype(np.float32)


def beat_windows(harmonic: bool, beats: int, count: int, seed: int = 0) -> np.ndarray:
    """``count`` windows of ``beats`` consecutive beat rows of music-like audio: (N, beats, 24 or 180).

    ``harmonic``: CLP chroma in 2 subdivisions (the harmonic GRU), else the percussive difference in 4.
    """
    period = music.beat_period(seed)
    total = count * beats + 1
    wave = music.music_like((total + 1) * period, seed)
    times = np.arange(total + 1) * period
    if harmonic:
        rows = beat_sync(clp_chroma(wave), times, HARMONIC_SUBDIVISIONS)
    else:
        rows = beat_sync(PERCUSSIVE(wave), times, PERCUSSIVE_SUBDIVISIONS)
    return np.stack([rows[i * beats:(i + 1) * beats] for i in range(count)])
