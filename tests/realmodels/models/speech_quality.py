"""Held-out speech-quality models: Microsoft's DNSMOS, PLCMOS and AECMOS (speechmos).

- PLCMOS v2, a PyTorch 1.11 export (Conv, two GRUs, a rater embedding, one scalar out) on the log power spectrum
  the package computes of speech-like audio with lost packets.
- DNSMOS P.835 and the personalized DNSMOS P.835, keras2onnx exports that take 9.01 s of raw audio (the spectrogram
  is computed by Conv, Pow, Sqrt and Log inside) and give three scores.
- AECMOS (acoustic echo cancellation MOS), two 16 kHz PyTorch exports at opset 9: Conv, MaxPool, two GRUs of 64
  units with their initial state as a graph input, a score head; one gated by Sigmoid/Mul ("scenarioless"), one
  with LeakyReLU that reads the talk scenario as 40 marker frames. Their input is the package's feature: a 160-band
  log-mel (librosa defaults, 513-point FFT every 256 samples, dB against the clip's maximum, (dB + 40) / 40) of the
  far-end loopback, the microphone (echo plus near-end talker) and the echo canceller's output, stacked as three
  channels; the state is zeros, as the package feeds it.
"""

from __future__ import annotations

import sys

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import RATE, speech_like
from tests.realmodels.models.package_code import wheel_modules
from tests.realmodels.models.speech_voice import slaney_mel_bank

SPEECHMOS = fetch.Wheel(
    requirement="speechmos==0.0.1.1",
    filename="speechmos-0.0.1.1-py3-none-any.whl",
    sha256="31c4c9d3234f6ee10102edff74333014c50006a3f389daf7ecacae34e68ebbf7",
    members=("speechmos/plcmos.py", "speechmos/plcmos_models/plcmos_v2.onnx",
             "speechmos/dnsmos_models/sig_bak_ovr.onnx"),
)

#: PLCMOS clips: 2 s of 16 kHz audio, 20 ms packets of which about one in eight is lost (zeroed).
PLC_SECONDS = 2.0

PACKET = 320


def plcmos_features(wave: np.ndarray) -> np.ndarray:
    """(frames, 257) PLCMOS v2's input by the wheel's own ``PLCMOS.stft_transform``: log power of a 512-point
    Hamming STFT every 256 samples, floored, divided by 20."""
    with wheel_modules(SPEECHMOS, ("speechmos.plcmos",), ()):
        cls = sys.modules["speechmos.plcmos"].PLCMOS
        return np.float32(cls.stft_transform(object.__new__(cls), wave.astype(np.float64)))


def lost_packets(wave: np.ndarray, seed: int, share: float = 0.125) -> np.ndarray:
    """``wave`` with about ``share`` of its 20 ms packets zeroed, as a packet-loss concealer with nothing to
    conceal would leave them."""
    rng = np.random.default_rng(seed)
    out = wave.copy()
    for start in range(0, len(out), PACKET):
        if rng.random() < share:
            out[start:start + PACKET] = 0.0
    return out


def _plcmos(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Clips of one stream of speech-like audio with lost packets; a random rater embedding each, as the package
    draws one per round (``np.random.normal(size=(1, 64))``)."""
    samples = int(PLC_SECONDS * RATE)
    wave = lost_packets(speech_like(PLC_SECONDS * count + 0.1, seed), seed)
    feats = np.stack([plcmos_features(wave[i * samples:(i + 1) * samples])[None] for i in range(count)])
    raters = np.random.default_rng(seed + 7).normal(size=(count, 1, 64)).astype(np.float32)
    return {"degraded_audio": feats, "rater_embed": raters[:, 0]}


#: DNSMOS P.835 reads 9.01 s of 16 kHz audio; the package moves its window by 1 s.
DNSMOS_SAMPLES = int(9.01 * RATE)


def dnsmos_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Windows of 9.01 s, one every second, of speech-like audio under a little noise, as the package slides
    them over a clip."""
    rng = np.random.default_rng(seed)
    wave = speech_like(9.01 + count, seed)
    wave = np.clip(wave + 0.01 * rng.normal(size=len(wave)), -1, 1).astype(np.float32)
    return {"input_1": np.stack([wave[i * RATE:i * RATE + DNSMOS_SAMPLES] for i in range(count)])}


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


_AEC = "speechmos/aecmos_models/"

AECMOS = fetch.Wheel(
    requirement=SPEECHMOS.requirement, filename=SPEECHMOS.filename, sha256=SPEECHMOS.sha256,
    members=(_AEC + "Run_1663829550_Stage_0.onnx", _AEC + "Run_1663915512_Stage_0.onnx"),
)

#: AECMOS at 16 kHz: 512-point DFT (librosa's n_fft 513), hop 256, 160 mel bands; 4 s clips.
AEC_FFT, AEC_HOP, AEC_BANDS, AEC_SECONDS = 513, 256, 160, 4.0

AEC_FRAMES = 1 + (int(AEC_SECONDS * RATE) - 1) // AEC_HOP

#: The scenario-aware model reads 20 marker frames and 20 zero frames after each channel's features.
MARKER_FRAMES = 40

TALK_TYPES = ("nst", "st", "dt")


def aecmos_log_mel(wave: np.ndarray) -> np.ndarray:
    """(frames, 160) AECMOS's ``_mel_transform``: librosa's power mel spectrogram (centred, zero-padded periodic
    Hann frames), ``power_to_db(ref=np.max)`` (floor 1e-10, top 80 dB), then (dB + 40) / 40."""
    padded = np.pad(wave.astype(np.float64), AEC_FFT // 2)
    count = 1 + (len(padded) - AEC_FFT) // AEC_HOP
    frames = np.stack([padded[i * AEC_HOP:i * AEC_HOP + AEC_FFT] for i in range(count)])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(AEC_FFT) / AEC_FFT)
    power = np.abs(np.fft.rfft(frames * window, axis=1)) ** 2
    mel = power @ slaney_mel_bank(AEC_FFT, AEC_BANDS).T.astype(np.float64)
    db = 10 * np.log10(np.maximum(mel, 1e-10)) - 10 * np.log10(max(mel.max(), 1e-10))
    return ((np.maximum(db, db.max() - 80) + 40) / 40).astype(np.float32)


def echo_scene(talk: str, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(loopback, microphone, canceller output) of one 4 s clip: the far end talks unless ``talk`` is "nst", the
    near end unless it is "st"; the microphone hears the far end as a delayed, low-passed echo; the canceller
    leaves a tenth of the echo."""
    from scipy.signal import lfilter

    rng = np.random.default_rng(seed)
    samples = int(AEC_SECONDS * RATE)
    far = speech_like(AEC_SECONDS, seed) if talk != "nst" else np.zeros(samples, np.float32)
    near = 0.6 * speech_like(AEC_SECONDS, seed + 1000) if talk != "st" else np.zeros(samples, np.float32)
    delay = int(0.04 * RATE)
    echo = 0.4 * lfilter([0.5, 0.3], [1.0, -0.2], np.concatenate([np.zeros(delay), far[:-delay]]))
    noise = lambda: 0.002 * rng.normal(size=samples)  # noqa: E731
    mic = np.clip(echo + near + noise(), -1, 1)
    enh = np.clip(0.1 * echo + near + noise(), -1, 1)
    return (np.clip(far + noise(), -1, 1).astype(np.float32), mic.astype(np.float32), enh.astype(np.float32))


def aecmos_features(talk: str, seed: int, markers: bool) -> np.ndarray:
    """(3, frames, 160) the package's stacked features of one scene; with ``markers`` the scenario frames the
    scenario-aware model reads (ones for the talkers present, then zeros), as ``AECMOS._get_mos`` appends them."""
    lpb, mic, enh = (aecmos_log_mel(x) for x in echo_scene(talk, seed))
    if markers:
        near_single, far_single = talk == "nst", talk == "st"

        def mark(feats: np.ndarray, on: float) -> np.ndarray:
            return np.concatenate([feats, np.full((20, AEC_BANDS), on, np.float32),
                                   np.zeros((20, AEC_BANDS), np.float32)])

        lpb, mic, enh = mark(lpb, 1 - near_single), mark(mic, 1 - far_single), mark(enh, 1.0)
    return np.stack([lpb, mic, enh])


def _aecmos(markers: bool) -> zoo.DataMaker:
    def make(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
        feats = np.stack([aecmos_features(TALK_TYPES[i % 3], seed * 100 + i, markers) for i in range(count)])
        return {"input": feats, "h0": np.zeros((count, 4, 1, 64), np.float32)}

    return zoo._npz(make)  # noqa: SLF001


_AEC_SHAPES = {"input": [1, 3, AEC_FRAMES, AEC_BANDS], "h0": [4, 1, 64]}

PDNSMOS = fetch.Wheel(
    requirement="speechmos==0.0.1.1",
    filename="speechmos-0.0.1.1-py3-none-any.whl",
    sha256="31c4c9d3234f6ee10102edff74333014c50006a3f389daf7ecacae34e68ebbf7",
    members=("speechmos/pdnsmos_models/sig_bak_ovr.onnx",),
)


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("plcmos_v2", SPEECHMOS, "speechmos/plcmos_models/plcmos_v2.onnx",
                 "Microsoft PLCMOS v2, PyTorch 1.11 export opset 11: Conv + LeakyReLU, two GRUs, Gemm head with a "
                 "64-d rater embedding, one scalar MOS; log power spectra of speech-like audio with lost packets",
                 zoo._npz(_plcmos), _shapes(degraded_audio=[1, 1, 126, 257], rater_embed=[1, 64])),  # noqa: SLF001
    zoo.ZooModel("dnsmos_p835", SPEECHMOS, "speechmos/dnsmos_models/sig_bak_ovr.onnx",
                 "Microsoft DNSMOS P.835, keras2onnx 1.8.1 opset 12: spectrogram by Conv, Pow, Sqrt and Log inside, "
                 "CNN, three scores; 9.01 s windows of speech-like audio", zoo._npz(dnsmos_windows),  # noqa: SLF001
                 _shapes(input_1=[1, DNSMOS_SAMPLES])),
    zoo.ZooModel("aecmos_scenarioless", AECMOS, _AEC + "Run_1663829550_Stage_0.onnx",
                 "Microsoft AECMOS (16 kHz, scenarioless), PyTorch 1.9 export opset 9: Conv, MaxPool, Sigmoid/Mul "
                 "gates, two GRUs (64) with the initial state as an input, echo and degradation MOS; log-mel of "
                 "loopback, microphone and canceller output of speech-like echo scenes", _aecmos(False),
                 {"input_shapes": _AEC_SHAPES}),
    zoo.ZooModel("aecmos_16k", AECMOS, _AEC + "Run_1663915512_Stage_0.onnx",
                 "Microsoft AECMOS (16 kHz, scenario-aware), PyTorch 1.9 export opset 9: Conv + LeakyReLU, "
                 "MaxPool, two GRUs (64), two MOS; the same features with 40 scenario marker frames",
                 _aecmos(True), {"input_shapes": {**_AEC_SHAPES,
                                                  "input": [1, 3, AEC_FRAMES + MARKER_FRAMES, AEC_BANDS]}}),
    zoo.ZooModel("pdnsmos_p835", PDNSMOS, "speechmos/pdnsmos_models/sig_bak_ovr.onnx",
                 "Microsoft's personalized DNSMOS P.835, keras2onnx opset 12: spectrogram inside, CNN, three "
                 "scores; 9.01 s windows of speech-like audio", zoo._npz(dnsmos_windows),  # noqa: SLF001
                 {"input_shapes": {"input_1": [1, DNSMOS_SAMPLES]}}),
)
