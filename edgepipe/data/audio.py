"""``.wav`` files as model inputs: read with the standard library, mixed to mono, resampled, cut into windows.

A model with one audio input of ``L`` samples (e.g. ``[1, 16000]``, or ``[1, 1, 576]``)
gets every consecutive, non-overlapping window of ``L`` samples of each file (the last,
partial one is dropped; a file shorter than ``L`` is zero-padded into one window). Samples
are scaled to [-1, 1] (8-bit unsigned, 16/24/32-bit signed PCM). With ``[preprocess]
sample_rate`` set, a file recorded at another rate is resampled first: a windowed-sinc
low-pass (when the rate goes down) and linear interpolation, all in numpy.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from edgepipe.errors import DataError

AUDIO_SUFFIXES = (".wav",)


def audio_files(folder: Path) -> list[Path]:
    """The ``.wav`` files directly in ``folder``, sorted by name."""
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)


def _pcm_to_float(frames: bytes, width: int) -> np.ndarray:
    """Interleaved PCM bytes of ``width`` bytes per sample → float32 in [-1, 1]."""
    if width == 1:
        return (np.frombuffer(frames, np.uint8).astype(np.float32) - 128.0) / 128.0
    if width == 2:
        return np.frombuffer(frames, "<i2").astype(np.float32) / 32768.0
    if width == 3:
        raw = np.frombuffer(frames, np.uint8).reshape(-1, 3).astype(np.int32)
        value = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
        return (np.where(value >= 1 << 23, value - (1 << 24), value) / float(1 << 23)).astype(np.float32)
    return (np.frombuffer(frames, "<i4").astype(np.float64) / float(1 << 31)).astype(np.float32)


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """``(mono float32 samples in [-1, 1], sample rate in Hz)`` of a PCM ``.wav`` file; channels are averaged."""
    try:
        with wave.open(str(path), "rb") as handle:
            channels, width, rate = handle.getnchannels(), handle.getsampwidth(), handle.getframerate()
            frames = handle.readframes(handle.getnframes())
    except (wave.Error, EOFError, OSError) as exc:
        raise DataError(f"cannot read .wav file ({exc})", path=path,
                        fix="Save it as PCM .wav (8/16/24/32-bit integer), or remove it") from None
    samples = _pcm_to_float(frames, width)
    return samples.reshape(-1, channels).mean(axis=1).astype(np.float32), rate


def _lowpass(samples: np.ndarray, cutoff: float, taps: int = 101) -> np.ndarray:
    """Windowed-sinc (Hamming) low-pass at ``cutoff`` (a fraction of the input rate, 0..0.5)."""
    n = np.arange(taps) - (taps - 1) / 2
    kernel = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(taps)
    return np.convolve(samples, kernel / kernel.sum(), mode="same").astype(np.float32)


def resample(samples: np.ndarray, rate: int, target: int) -> np.ndarray:
    """``samples`` at ``rate`` Hz resampled to ``target`` Hz (low-pass below the new Nyquist when going down)."""
    if rate == target:
        return samples
    if target < rate:
        samples = _lowpass(samples, 0.5 * target / rate * 0.9)
    count = int(round(len(samples) * target / rate))
    positions = np.arange(count) * (rate / target)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)


def windows(samples: np.ndarray, length: int) -> np.ndarray:
    """Consecutive non-overlapping windows (N, length); a short signal is zero-padded into one window."""
    if len(samples) < length:
        return np.pad(samples, (0, length - len(samples)))[None]
    count = len(samples) // length
    return samples[: count * length].reshape(count, length)


def wav_windows(path: Path, length: int, sample_rate: int | None) -> np.ndarray:
    """Every window of ``length`` samples of one file, at ``sample_rate`` Hz (the file's own rate if None)."""
    samples, rate = read_wav(path)
    if sample_rate is not None:
        samples = resample(samples, rate, sample_rate)
    return windows(samples, length)
