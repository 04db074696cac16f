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


def gru_stream(model: Path, frames: int, seed: int = 0, *, audio: str = "audio_with_context", state: str = "h",
               state_out: str = "h_out", chunk: int = 256, context: int = 320) -> dict[str, np.ndarray]:
    """Frames and recurrent states of a streaming GRU voice-activity model (akiki: 320 past + 256 new samples).

    ``{audio: (N, chunk + context), state: (N, *state_shape)}``: the state fed with each
    frame is the one the float model returned for the frame before, starting from zeros.
    """
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    shape = [d if isinstance(d, int) else 1 for d in next(i for i in session.get_inputs() if i.name == state).shape]
    wave = speech_like((frames + 2) * chunk / RATE + context / RATE, seed)
    h = np.zeros(shape, np.float32)
    inputs, states = [], []
    for k in range(frames):
        window = wave[k * chunk:k * chunk + chunk + context][None]
        inputs.append(window)
        states.append(h)
        h = session.run([state_out], {audio: window, state: h})[0].astype(np.float32).reshape(shape)
    return {audio: np.concatenate(inputs), state: np.stack(states)}


def waveform_windows(samples: int, count: int, seed: int = 0, hop: int | None = None) -> np.ndarray:
    """``count`` consecutive windows of ``samples`` samples of speech-like audio (float32, (N, samples))."""
    hop = hop or samples
    wave = speech_like((count * hop + samples) / RATE + 0.1, seed)
    return np.stack([wave[i * hop:i * hop + samples] for i in range(count)])


def melspectrogram_windows(melspec: Path, count: int, frames: int = 76, seed: int = 0) -> np.ndarray:
    """openWakeWord embedding inputs (N, 76, 32, 1): its own log-mel front end run on speech-like audio.

    The mel front end (``melspectrogram.onnx``) runs on the whole waveform, its output is
    scaled ``x / 10 + 2`` as openWakeWord does, and windows of ``frames`` frames are taken
    every 8 frames (80 ms).
    """
    import onnxruntime as ort

    session = ort.InferenceSession(str(melspec), providers=["CPUExecutionProvider"])
    wave = speech_like((count * 8 + frames + 4) * 160 / RATE, seed)
    mel = session.run(None, {session.get_inputs()[0].name: wave[None]})[0].squeeze() / 10 + 2
    return np.stack([mel[i * 8:i * 8 + frames] for i in range(count)])[..., None].astype(np.float32)


def micro_frontend_features(count: int, scale: float, zero_point: int, seed: int = 0) -> np.ndarray:
    """int8 inputs (N, 3, 40) for a microWakeWord model: 40 log-mel bands every 10 ms, 3 frames per step.

    A plain numpy log-mel (30 ms Hann windows, 10 ms hop, 40 bands from 125 to 7500 Hz), in
    the range of TFLite Micro's audio front end (0…26), quantized with the model's input
    ``scale`` and ``zero_point``.
    """
    wave = speech_like((count * 3 + 4) * 0.01 + 0.05, seed)
    window, hop = 480, 160
    frames = np.stack([wave[i * hop:i * hop + window] * np.hanning(window) for i in range(count * 3)])
    power = np.abs(np.fft.rfft(frames, n=512)) ** 2
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    edges = 700 * (10 ** (np.linspace(mel(125), mel(7500), 42) / 2595) - 1)
    bins = np.fft.rfftfreq(512, 1 / RATE)
    bank = np.stack([np.clip(np.minimum((bins - lo) / (mid - lo), (hi - bins) / (hi - mid)), 0, None)
                     for lo, mid, hi in zip(edges, edges[1:], edges[2:])])
    logmel = np.log(power @ bank.T + 1e-6)
    logmel = 26 * (logmel - logmel.min()) / (logmel.max() - logmel.min())
    quantized = np.clip(np.round(logmel / scale + zero_point), -128, 127).astype(np.int8)
    return quantized.reshape(count, 3, 40)


def write_wav_clips(folder: Path, count: int, rate: int, seconds: float, seed: int = 0) -> Path:
    """``count`` stereo 16-bit PCM ``.wav`` clips of speech-like audio recorded at ``rate`` Hz (stdlib ``wave``).

    The 16 kHz signal is brought to ``rate`` by linear interpolation; the right channel is
    the left at 80 % gain, so a mono mix-down has the speech on both.
    """
    import wave

    folder.mkdir(parents=True, exist_ok=True)
    signal = speech_like(count * seconds + 0.1, seed)
    n = int(len(signal) * rate / RATE)
    resampled = np.interp(np.arange(n) * RATE / rate, np.arange(len(signal)), signal)
    per_clip = int(seconds * rate)
    for i in range(count):
        left = resampled[i * per_clip:(i + 1) * per_clip]
        frames = np.stack([left, 0.8 * left], axis=1)
        with wave.open(str(folder / f"clip_{i:03d}.wav"), "wb") as handle:
            handle.setnchannels(2)
            handle.setsampwidth(2)
            handle.setframerate(rate)
            handle.writeframes((np.clip(frames, -1, 1) * 32767).astype("<i2").tobytes())
    return folder


def wakeword_features(melspec: Path, embedding: Path, count: int, windows: int = 16, seed: int = 0) -> np.ndarray:
    """openWakeWord classifier inputs (N, ``windows``, 96): its embedding model run on its log-mel windows of
    speech-like audio (one embedding every 80 ms), ``windows`` consecutive embeddings per sample."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(embedding), providers=["CPUExecutionProvider"])
    mel = melspectrogram_windows(melspec, count + windows, seed=seed)
    name = session.get_inputs()[0].name
    embedded = np.concatenate([session.run(None, {name: mel[i:i + 1]})[0].reshape(1, -1) for i in range(len(mel))])
    return np.stack([embedded[i:i + windows] for i in range(count)]).astype(np.float32)


def bird_like(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    """A float32 waveform in [-1, 1] at ``rate`` Hz: phrases of bird-like notes in faint wind-like noise.

    Each phrase is 3 to 10 notes of 30 to 120 ms, each a frequency sweep between 1.5 and 8 kHz (up, down or a
    trill of one pitch) with its second harmonic at 30 %, shaped by a Hann envelope, 20 to 80 ms apart; phrases
    start every 0.4 to 1.2 s at amplitudes from 0.1 to 0.6."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    wave = lfilter([0.05], [1, -0.95], rng.normal(size=n)) * 0.05
    start = int(rng.uniform(0.0, 0.4) * rate)
    while start < n:
        amplitude = rng.uniform(0.1, 0.6)
        for _ in range(int(rng.integers(3, 11))):
            length = int(rng.uniform(0.03, 0.12) * rate)
            if start + length > n:
                break
            f0, f1 = rng.uniform(1500, 8000, size=2)
            if rng.random() < 0.3:
                f1 = f0
            phase = 2 * np.pi * np.cumsum(np.linspace(f0, f1, length)) / rate
            note = (np.sin(phase) + 0.3 * np.sin(2 * phase)) * np.hanning(length)
            wave[start:start + length] += amplitude * note
            start += length + int(rng.uniform(0.02, 0.08) * rate)
        start += int(rng.uniform(0.4, 1.2) * rate)
    return np.clip(wave, -1, 1).astype(np.float32)
