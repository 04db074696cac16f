"""Deterministic speech-like audio frames for silero-vad, with the recurrent state a stream would carry.

No audio ships with our test dependencies, so the signal is synthesised: vowel syllables
(a glottal pulse train at 80-160 Hz through three formant resonators per vowel) for 1.2 s,
then 0.6 s of near-silence, repeated; silero-vad scores the vowels as speech (up to 0.99). silero-vad v5+
takes 512 new samples at 16 kHz plus the previous frame's last 64 samples (576 in all),
and its state: the state fed with each frame is the one the float model returned for the
frame before, starting from zeros, exactly as a streaming caller would.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

RATE = 16_000
FRAME = 512
CONTEXT = 64


#: Formants (Hz) of five vowels (a, i, u, e, o), cycled every syllable.
VOWELS = ((730, 1090, 2440), (270, 2290, 3010), (300, 870, 2240), (530, 1840, 2480), (570, 840, 2410))
BANDWIDTHS = (90, 110, 170)


def speech_like(seconds: float, seed: int = 0) -> np.ndarray:
    """A float32 waveform in [-1, 1] at 16 kHz: 180 ms vowel syllables for 1.2 s, then 0.6 s of near-silence."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    phase = np.cumsum((120 + 40 * np.sin(2 * np.pi * 0.9 * t)) / RATE)
    open_phase = np.mod(phase, 1.0)
    glottal = np.diff((open_phase < 0.4) * np.sin(np.pi * open_phase / 0.4) ** 2, prepend=0.0)
    syllable = int(0.18 * RATE)
    wave = np.zeros(n)
    for k, start in enumerate(range(0, n, syllable)):
        x = glottal[start:start + syllable] + 0.01 * rng.normal(size=len(glottal[start:start + syllable]))
        for formant, bandwidth in zip(VOWELS[k % len(VOWELS)], BANDWIDTHS):
            r = np.exp(-np.pi * bandwidth / RATE)
            x = lfilter([1 - r], [1, -2 * r * np.cos(2 * np.pi * formant / RATE), r * r], x)
        wave[start:start + len(x)] = x * np.hanning(len(x))
    speaking = np.mod(t, 1.8) < 1.2
    wave = 0.5 * wave / np.max(np.abs(wave)) * speaking + 0.002 * rng.normal(size=n)
    return np.clip(wave, -1, 1).astype(np.float32)


def silero_stream(model: Path, frames: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``{'input': (N, 576), 'state': (N, 2, 1, 128)}`` for a model taking ``input [1, 576]`` and ``state``."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    wave = speech_like((frames + 1) * FRAME / RATE, seed)
    state = np.zeros((2, 1, 128), np.float32)
    context = np.zeros(CONTEXT, np.float32)
    inputs, states = [], []
    for k in range(frames):
        chunk = np.concatenate([context, wave[k * FRAME:(k + 1) * FRAME]])[None]
        inputs.append(chunk)
        states.append(state)
        _, state = session.run(None, {"input": chunk, "state": state})
        context = chunk[0, -CONTEXT:]
    return {"input": np.concatenate(inputs), "state": np.stack(states)}
