"""Held-out models of the pulse: heart rate read from a face in video (PhysNet) and from a wrist
photoplethysmogram (BeliefPPG).

- open-rppg 0.1.1: PhysNet, a 3-D CNN for remote photoplethysmography (the blood-volume pulse read from the colour
  of a face in video), trained on RLAP (``rppg/weights/physnet.rlap.weights.h5``, Keras 3 weights, 1.7 MB, 770k
  parameters; the package's ``PhysNet`` class builds the network and ``load_PhysNet`` loads them). Its ``call``
  standardizes the clip (mean and deviation over time and space), then Conv3D + BatchNorm + ReLU blocks with
  spatial and spatio-temporal MaxPool3D, two Conv3DTranspose (4, 1, 1) stride-2 temporal upsamplings with ELU, a
  spatial AvgPool3D and a 1x1x1 Conv3D, and standardizes the 128-sample pulse it returns. Built with Keras's
  TensorFlow backend under the float32 policy (the package imports it with JAX and sets ``mixed_float16``; the
  weights are float32) and exported by ``model.export(format="onnx")`` (tf2onnx, opset 17; 3 MB): ``frames``
  (1, 128, 32, 32, 3) float32 NDHWC in, ``bvp`` (1, 128) out. Its data: the package's video path (``update_face``
  then its inference thread: each face crop resized to 32 x 32 with OpenCV's ``INTER_AREA``, 128 frames stacked and
  divided by 255) cannot run here (OpenCV, PyAV and JAX are not dependencies), so it is followed: 128 frames at 30
  fps of the face in scikit-image's ``astronaut`` photograph (tests/fixtures/images.py) in a fixed box shaped as the
  package's BlazeFace box (0.9 x the face width, 1.1 x its height), the skin pixels darkened by a synthetic
  blood-volume pulse (systolic and dicrotic peaks, a seeded heart rate of 50-120 beats a minute with variability,
  0.3-1.5 % of the green channel, less in red and blue), with seeded head motion, an illumination drift and sensor
  noise; each crop resized with PIL's box filter (area averaging, as ``INTER_AREA`` does when shrinking) and divided
  by 255.
- beliefppg 0.3.1 (MIT): BeliefPPG (Bieri, Streli, Demirel and Holz, "BeliefPPG: Uncertainty-aware Heart Rate
  Estimation from PPG signals via Belief Propagation", UAI 2023), its released model without the time-domain
  backbone (``beliefppg/inference/inference_model_notimebackbone_architecture.json`` and ``..._weights.npz``,
  0.26 MB: a tf.keras 2 functional model, 61k parameters, what ``infer_hr_uncertainty(use_time_backbone=False)``
  loads; the default model adds an LSTM backbone that the package runs with its dropout on, so its output is
  random). Over 7 spectral frames (8 s windows 2 s apart) of 64 amplitude bins between 0.5 and 3.5 Hz, PPG and
  accelerometer as two channels: two 3 x 3 Conv2D of 32 + LeakyReLU, two attention branches (sinusoidal positional
  encodings, Dense queries and keys of 32, Keras ``Attention`` (dot-product) over frequency and over time) added,
  the frames averaged, a 1-D attention U-Net over frequency (3-tap Conv1D + Relu pairs of 12, 24 and 48, MaxPool of
  4, upsampling by 4 and skips gated by 1 x 1 Conv, Relu and sigmoid attention), a 1 x 1 Conv and a softmax over 64
  heart-rate bins (30-210 BPM); the package's ``PriorLayer`` then decodes the bins over time by belief propagation
  (not exported: a recurrence across the successive windows of a recording). Built by the package's own
  ``load_inference_model`` (its custom layers registered; in a process with ``TF_USE_LEGACY_KERAS=1``, which the
  package's ``__init__`` sets, since Keras 3 does not load it) and exported up to the prior layer's input by tf2onnx
  (``tf2onnx.convert.from_keras``, opset 17, static shapes, 0.3 MB): 24 Conv (with Transpose, Unsqueeze and Squeeze
  around the 1-D ones), 2 LeakyRelu, 15 Relu, 9 MatMul, 3 Softmax, 3 Sigmoid, 4 Mul, 3 MaxPool, 6 Concat and 2 Split
  (the skips and the upsampling), a ReduceMean, 18 Reshape and 34 Add, about 18 MFLOPs (8.3 of them in the second 3
  x 3 convolution). ``spectrum`` (1, 7, 64, 2) float32 in; ``hr_probs`` (1, 64), the probability of each heart-rate
  bin (bin i is 30 + 180 i / 64 BPM) for the last frame's 8 s, out. Its data: ``infer_hr_uncertainty(ppg, 64, acc,
  32, use_time_backbone=False)``'s feed, with the package's own code from the pinned wheel
  (``beliefppg.inference.inference``, its ``prepare_session_spec``: band-pass, resampling to 25 Hz, a 535-point FFT
  per 8 s window, standardization over the recording; its tf.data windowing and batching), ``load_inference_model``
  a recorder carrying the model's input shapes and prior-layer bins, and its dataset readers (which need pandas)
  stood in for. Each sample is one input, 20 s of a synthetic wrist recording (PPG-DaLiA's Empatica E4 rates: PPG
  at 64 Hz, accelerometer at 32 Hz in g): beats of a systolic peak and a smaller diastolic wave at a seeded 45-160
  BPM with a slow drift and a respiratory sinus arrhythmia, a respiratory baseline, white noise at a seeded 5-40 %
  of the pulse, raw-count scale and offset; the wrist at rest, or one sample in three swinging at a seeded 0.6-1.4
  Hz away from the heart rate. The heart rate of the recording's last 8 s is the truth the most probable bin is
  checked against.
"""

from __future__ import annotations

import os
import subprocess
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.biosignals_motion import OPSET
from tests.realmodels.models.package_code import Exported, keras_tools, standing_in, tf_keras_tools, wheel_modules

_RPPG = "rppg/"

OPEN_RPPG = fetch.Wheel(
    requirement="open-rppg==0.1.1",
    filename="open_rppg-0.1.1-py3-none-any.whl",
    sha256="8283c0b54eeb53524d866436147d8112ee26f130730fb848cafc5b39d89249c6",
    members=(_RPPG + "weights/physnet.rlap.weights.h5", _RPPG + "models.py", _RPPG + "models_code/FacePhys.py"),
)

#: PhysNet's clip (``load_PhysNet_rlap``'s meta: 128 frames of 32 x 32 RGB at 30 fps).
RPPG_FRAMES = 128

RPPG_SIDE = 32

RPPG_FPS = 30.0

#: The face box in ``astronaut`` (top, left, height, width), shaped as the package's BlazeFace box.
FACE_BOX = (30, 150, 180, 160)

#: Relative weight of the pulse in R, G and B (haemoglobin absorbs green most).
PULSE_RGB = (0.33, 1.0, 0.5)


@contextmanager
def rppg_modules() -> Iterator[Any]:
    """The wheel's ``rppg.models`` (and the ``models_code.FacePhys`` it imports) on Keras's TensorFlow backend:
    JAX, einops and pkg_resources, which it imports for its other networks and its loaders, stand in as modules
    whose ``jit`` returns the function; the environment variables and the Keras dtype policy it sets are restored
    on exit."""
    import keras  # before the package's module sets KERAS_BACKEND=jax

    fetch.model_file(OPEN_RPPG, _RPPG + "weights/physnet.rlap.weights.h5")
    policy = keras.mixed_precision.global_policy().name
    env = {key: os.environ.get(key) for key in ("KERAS_BACKEND", "XLA_PYTHON_CLIENT_PREALLOCATE")}
    fakes = {name: types.ModuleType(name) for name in ("jax", "jax.numpy", "einops", "pkg_resources")}
    fakes["jax"].jit = lambda fn=None, **_: fn if fn is not None else (lambda f: f)  # type: ignore[attr-defined]
    fakes["jax"].numpy = fakes["jax.numpy"]  # type: ignore[attr-defined]
    fakes["einops"].rearrange = fakes["einops"].repeat = None  # type: ignore[attr-defined]
    fakes["pkg_resources"].resource_filename = (  # type: ignore[attr-defined]
        lambda package, relative: str(fetch.model_file(OPEN_RPPG, f"{package}/{relative}")))
    saved = {name: sys.modules.get(name) for name in fakes}
    sys.modules.update(fakes)
    try:
        with wheel_modules(OPEN_RPPG, ("rppg.models_code.FacePhys", "rppg.models"), ()):
            keras.mixed_precision.set_global_policy("float32")
            yield sys.modules["rppg.models"]
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        keras.mixed_precision.set_global_policy(policy)


def physnet_network() -> Any:
    """PhysNet with the wheel's RLAP weights, by the package's ``load_PhysNet`` (float32 policy)."""
    with rppg_modules() as models:
        model, _ = models.load_PhysNet(str(fetch.model_file(OPEN_RPPG, _RPPG + "weights/physnet.rlap.weights.h5")))
    return model


def export_physnet(path: Path) -> None:
    """``model.export(format="onnx")`` of :func:`physnet_network` (tf2onnx, opset 17), its input named ``frames``
    and its output ``bvp``."""
    import onnx
    import tensorflow as tf

    model = physnet_network()
    spec = tf.TensorSpec((1, RPPG_FRAMES, RPPG_SIDE, RPPG_SIDE, 3), tf.float32, name="frames")
    model.export(str(path), format="onnx", input_signature=[spec], opset_version=17, verbose=False)
    graph = onnx.load(str(path))
    (output,) = graph.graph.output
    for node in graph.graph.node:
        node.output[:] = ["bvp" if name == output.name else name for name in node.output]
    output.name = "bvp"
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))


@lru_cache(maxsize=1)
def face_photo() -> tuple[np.ndarray, np.ndarray]:
    """The ``astronaut`` photograph, uint8 (512, 512, 3), and where its skin is (:func:`skin_mask`); read-only."""
    from tests.fixtures.images import sample_images

    photo = sample_images()["astronaut"]
    photo.flags.writeable = False
    mask = skin_mask(photo)
    mask.flags.writeable = False
    return photo, mask


def skin_mask(image: np.ndarray) -> np.ndarray:
    """Skin pixels by the RGB rule of Kovac et al. (daylight): R > 95, G > 40, B > 20, a spread above 15,
    R above G by more than 15 and above B."""
    r, g, b = (image[..., i].astype(np.int32) for i in range(3))
    return ((r > 95) & (g > 40) & (b > 20) & (image.max(-1).astype(np.int32) - image.min(-1) > 15)
            & (r - g > 15) & (r > b))


def pulse_wave(rate_bpm: float, frames: int, rng: np.random.Generator, fps: float = RPPG_FPS) -> np.ndarray:
    """(frames,) blood-volume pulse in [0, 1]: a systolic and a smaller dicrotic peak per beat, the rate varying by
    3 % at 0.25 Hz, from a seeded phase."""
    t = np.arange(frames) / fps
    rate = rate_bpm / 60 * (1 + 0.03 * np.sin(2 * np.pi * 0.25 * t + rng.uniform(0, 2 * np.pi)))
    phase = np.mod(np.cumsum(rate) / fps + rng.uniform(0, 1), 1.0)
    wave = np.exp(-0.5 * ((phase - 0.2) / 0.08) ** 2) + 0.4 * np.exp(-0.5 * ((phase - 0.55) / 0.1) ** 2)
    return wave / wave.max()


def face_clip(rate_bpm: float, strength: float, seed: int) -> np.ndarray:
    """(128, 32, 32, 3) float32 in [0, 1]: the face box of ``astronaut`` over 128 frames at 30 fps, the skin
    darkened by a pulse at ``rate_bpm`` (``strength``: the green channel's relative change), with a head-motion
    random walk, a slow illumination drift and sensor noise; each crop resized to 32 x 32 by area averaging, then
    divided by 255 as the package's ``call`` does."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    photo, mask = face_photo()
    photo = photo.astype(np.float32)
    skin = mask[..., None] * np.asarray(PULSE_RGB, np.float32)
    pulse = pulse_wave(rate_bpm, RPPG_FRAMES, rng)
    drift = 1 + 0.03 * np.sin(2 * np.pi * rng.uniform(0.02, 0.1) * np.arange(RPPG_FRAMES) / RPPG_FPS
                              + rng.uniform(0, 2 * np.pi))
    dy, dx = (np.clip(np.cumsum(rng.normal(0, 0.3, RPPG_FRAMES)), -6, 6) for _ in range(2))
    top, left, height, width = FACE_BOX
    frames = np.empty((RPPG_FRAMES, RPPG_SIDE, RPPG_SIDE, 3), np.float32)
    for k in range(RPPG_FRAMES):
        y, x = top + int(round(dy[k])), left + int(round(dx[k]))
        crop = photo[y:y + height, x:x + width] * (1 - strength * pulse[k] * skin[y:y + height, x:x + width])
        crop = np.clip(crop * drift[k] + rng.normal(0, 1.0, crop.shape), 0, 255).astype(np.uint8)
        small = Image.fromarray(crop).resize((RPPG_SIDE, RPPG_SIDE), Image.Resampling.BOX)
        frames[k] = np.asarray(small, np.float32) / 255.0
    return frames


def face_clips(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """frames (N, 128, 32, 32, 3) float32: face clips with a pulse at a seeded rate of 50-120 beats a minute and
    a strength of 0.3-1.5 %."""
    rng = np.random.default_rng(seed)
    clips = [face_clip(float(rng.uniform(50, 120)), float(rng.uniform(0.003, 0.015)), int(rng.integers(1 << 30)))
             for _ in range(count)]
    return {"frames": np.stack(clips)}


def clip_rate_bpm(bvp: np.ndarray, fps: float = RPPG_FPS) -> float:
    """The pulse rate of ``bvp`` in beats a minute: the peak of its spectrum (a 1024-point FFT) between 30 and 180,
    the band of the package's ``get_hr`` (which takes the peak of a Welch spectrum)."""
    freqs = np.fft.rfftfreq(1024, 1 / fps)
    power = np.abs(np.fft.rfft(bvp - bvp.mean(), 1024))
    band = (freqs > 0.5) & (freqs < 3.0)
    return float(freqs[band][np.argmax(power[band])] * 60)


_npz = zoo._npz  # noqa: SLF001

_BP = "beliefppg/"

BELIEF_JSON = _BP + "inference/inference_model_notimebackbone_architecture.json"

BELIEF_WEIGHTS = _BP + "inference/inference_model_notimebackbone_weights.npz"

#: The package's modules that build its model (``beliefppg.model.load``, in import order) and that feed it
#: (``beliefppg.inference.inference``).
_BP_MODEL_MODULES = ("beliefppg.model.config", "beliefppg.model.positional_encoding",
                     "beliefppg.model.timedomain_backbone", "beliefppg.model.belief_ppg",
                     "beliefppg.model.binned_regression_loss", "beliefppg.model.prior_layer", "beliefppg.model.load")

_BP_FEED_MODULES = ("beliefppg.model.config", "beliefppg.util.preprocessing", "beliefppg.datasets.pipeline_generator",
                    "beliefppg.inference.inference")

BELIEFPPG = fetch.Wheel(
    requirement="beliefppg==0.3.1",
    filename="beliefppg-0.3.1-py3-none-any.whl",
    sha256="bff58de1538f476632063afc627fb1de4fd6937ad3225e2cf79ebb1f6b9cb615",
    members=(BELIEF_JSON, BELIEF_WEIGHTS,
             *sorted({name.replace(".", "/") + ".py" for name in (*_BP_MODEL_MODULES, *_BP_FEED_MODULES)})),
)

#: The package's spectral input: 7 frames (8 s windows, 2 s apart: 20 s of signal) of 64 amplitude bins between
#: 0.5 and 3.5 Hz, PPG and accelerometer; and its 64 heart-rate bins (``PriorLayer.hr``: 30 + 180 i / 64 BPM).
FRAMES, BINS = 7, 64

MIN_HZ, MAX_HZ = 0.5, 3.5

#: Seconds of signal per sample (one model input), the PPG and accelerometer rates of the wrist device made
#: (PPG-DaLiA's Empatica E4: 64 Hz PPG, 32 Hz three-axis accelerometer in g).
SECONDS = 20

PPG_RATE, ACC_RATE = 64, 32

#: The heart rates (BPM) and noise levels (relative to the pulse amplitude) of the synthetic recordings.
HEART_RATE = (45.0, 160.0)

PPG_NOISE = (0.05, 0.4)


def bin_bpm(index: np.ndarray | int) -> np.ndarray:
    """The heart rate (BPM) of output bin ``index``, as the package's ``PriorLayer.hr`` has it."""
    return MIN_HZ * 60.0 + (MAX_HZ - MIN_HZ) * 60.0 * np.asarray(index, np.float64) / BINS


def wrist_recording(seed: int) -> dict[str, Any]:
    """``ppg`` (1280, 1) and ``acc`` (640, 3) float64: 20 s of a synthetic wrist PPG at 64 Hz and accelerometer at
    32 Hz, and ``bpm``, the mean heart rate over its last 8 s (the window the model's last frame holds). Each beat is
    a systolic peak and a smaller, later diastolic wave (Gaussians, the diastolic delay shrinking with the RR
    interval), the rate seeded in :data:`HEART_RATE` with a slow drift of up to 4 % and a respiratory sinus
    arrhythmia; a respiratory baseline, white noise at a seeded level in :data:`PPG_NOISE` and a seeded scale and
    offset (raw PPG counts); the wrist at rest (gravity in a seeded direction and sensor noise), or, one sample in
    three, swinging at a seeded 0.6-1.4 Hz away from the heart rate."""
    rng = np.random.default_rng(seed)
    t = np.arange(SECONDS * PPG_RATE) / PPG_RATE
    rate = rng.uniform(*HEART_RATE)
    drift = rng.uniform(-0.04, 0.04)
    pulse = np.zeros_like(t)
    beats = []
    beat = rng.uniform(-1.0, 0.0)
    while beat < SECONDS + 1:
        bpm = rate * (1 + drift * beat / SECONDS) * (1 + 0.02 * np.sin(2 * np.pi * 0.25 * beat))
        rr = 60.0 / bpm
        pulse += np.exp(-0.5 * ((t - beat - 0.12 * rr) / (0.09 * rr)) ** 2)
        pulse += 0.45 * np.exp(-0.5 * ((t - beat - 0.42 * rr) / (0.12 * rr)) ** 2)
        beats.append((beat, rr))
        beat += rr
    wander = 0.3 * np.sin(2 * np.pi * rng.uniform(0.15, 0.35) * t + rng.uniform(0, 2 * np.pi))
    noise = rng.uniform(*PPG_NOISE) * rng.normal(size=t.shape)
    ppg = rng.uniform(50, 200) * (pulse + wander + noise) + rng.uniform(-500, 500)
    last = [60.0 / rr for at, rr in beats if SECONDS - 8 <= at < SECONDS]
    ta = np.arange(SECONDS * ACC_RATE) / ACC_RATE
    gravity = rng.normal(size=3)
    acc = np.repeat((gravity / np.linalg.norm(gravity))[None], len(ta), axis=0) + 0.01 * rng.normal(size=(len(ta), 3))
    if seed % 3 == 2:
        swing = rng.uniform(0.6, 1.4)
        while abs(swing * 60 - rate) < 15:
            swing = rng.uniform(0.6, 1.4)
        acc += 0.3 * rng.uniform(0.5, 1, 3) * np.sin(2 * np.pi * swing * ta[:, None] + rng.uniform(0, 2 * np.pi, 3))
    return {"ppg": ppg[:, None], "acc": acc, "bpm": float(np.mean(last))}


@contextmanager
def beliefppg_feeder() -> Iterator[Any]:
    """``feed(ppg, acc) -> (1, 7, 64, 2)`` float32: what the package's ``infer_hr_uncertainty`` feeds its model
    without the time-domain backbone (``use_time_backbone=False``) for 20 s of 64 Hz PPG and 32 Hz accelerometer,
    its ``load_inference_model`` a recorder (``feed.loaded``: the path it was asked for) carrying the model's
    input shapes and prior-layer bins; the time-domain windows it also makes are dropped (the model ignores them)."""
    import tensorflow as tf

    fed: list[np.ndarray] = []
    loaded: list[str] = []

    class Prior:
        min_hz, max_hz, dim = MIN_HZ, MAX_HZ, BINS

        def set_online(self, online: bool) -> None:
            pass

        def set_uncertainty(self, uncertainty: str) -> None:
            pass

    class Recorder:
        layers = [Prior()]
        input_spec = [types.SimpleNamespace(shape=(None, FRAMES, BINS, 2)),
                      types.SimpleNamespace(shape=(None, SECONDS * 64, 1))]

        def get_layer(self, name: str) -> Prior:
            assert name == "prior_layer"
            return self.layers[0]

        def predict(self, batches: Any) -> tuple[np.ndarray, np.ndarray]:
            count = 0
            for (spectra, _), _ in batches:
                fed.append(spectra.numpy().copy())
                count += len(spectra)
            return np.zeros(count, np.float32), np.zeros(count, np.float32)

    def load_inference_model(path: str) -> Recorder:
        loaded.append(path)
        return Recorder()

    loaders = {name: None for name in ("load_bami_1", "load_bami_2", "load_dalia", "load_ieee", "load_wesad")}
    stand_ins = {"beliefppg.datasets.file_reader": loaders,
                 "beliefppg.model.load": {"load_inference_model": load_inference_model}}
    assert tf is not None
    with standing_in(BELIEFPPG, _BP_FEED_MODULES, stand_ins):
        inference = sys.modules["beliefppg.inference.inference"]

        def feed(ppg: np.ndarray, acc: np.ndarray) -> np.ndarray:
            fed.clear()
            inference.infer_hr_uncertainty(ppg, PPG_RATE, acc, ACC_RATE, use_time_backbone=False)
            (spectra,) = fed
            return spectra.astype(np.float32)

        feed.loaded = loaded  # type: ignore[attr-defined]
        feed.inference = inference  # type: ignore[attr-defined]
        yield feed


def spectra_with_truth(count: int, seed: int) -> dict[str, np.ndarray]:
    """``spectrum`` (N, 7, 64, 2) float32 as the package feeds its model and ``bpm`` (N,) float64, the heart rate of
    each recording's last 8 s."""
    rng = np.random.default_rng(seed)
    spectra, bpm = [], []
    with beliefppg_feeder() as feed:
        for _ in range(count):
            recording = wrist_recording(int(rng.integers(1 << 30)))
            spectra.append(feed(recording["ppg"], recording["acc"]))
            bpm.append(recording["bpm"])
    return {"spectrum": np.concatenate(spectra), "bpm": np.array(bpm)}


def wrist_spectra(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """spectrum (N, 7, 64, 2) float32: 20 s synthetic wrist PPG and accelerometer recordings as the package's
    ``infer_hr_uncertainty`` (without its time-domain backbone) feeds them."""
    return {"spectrum": spectra_with_truth(count, seed)["spectrum"]}


def _legacy_keras(function: str, *args: str) -> None:
    """Runs ``function(*args)`` of this module in a fresh Python with ``TF_USE_LEGACY_KERAS=1`` (what the package's
    ``__init__`` sets before TensorFlow is imported: its model is a tf.keras 2 model, which Keras 3 does not load)."""
    code = f"import sys; from {__name__} import {function}; {function}(*sys.argv[1:])"
    subprocess.run([sys.executable, "-c", code, *args], check=True, cwd=Path(__file__).parents[3],
                   env={**os.environ, "TF_USE_LEGACY_KERAS": "1"}, timeout=900)


def _beliefppg_network_here() -> Any:
    """The package's model without its time-domain backbone as its ``load_inference_model`` builds it, up to the
    prior layer's input (the instantaneous heart-rate bin probabilities); in a legacy-Keras process only."""
    assert os.environ.get("TF_USE_LEGACY_KERAS") == "1"
    import tensorflow as tf

    stand_ins = {"tensorflow_probability": {}}
    with standing_in(BELIEFPPG, _BP_MODEL_MODULES, stand_ins):
        load = sys.modules["beliefppg.model.load"]
        path = str(fetch.model_file(BELIEFPPG, BELIEF_JSON)).removesuffix("_architecture.json")
        fetch.model_file(BELIEFPPG, BELIEF_WEIGHTS)
        model = load.load_inference_model(path)
    return tf.keras.Model(model.inputs[0], model.get_layer("prior_layer").input)


def _export_beliefppg_here(path: str) -> None:
    import onnx
    import tensorflow as tf
    import tf2onnx

    spec = (tf.TensorSpec((1, FRAMES, BINS, 2), tf.float32, name="spectrum"),)
    graph, _ = tf2onnx.convert.from_keras(_beliefppg_network_here(), input_signature=spec, opset=OPSET)
    (output,) = graph.graph.output
    for node in graph.graph.node:
        node.output[:] = ["hr_probs" if name == output.name else name for name in node.output]
    output.name = "hr_probs"
    onnx.checker.check_model(graph)
    onnx.save(graph, path)


def _predict_beliefppg_here(inputs: str, outputs: str) -> None:
    spectra = np.load(inputs)["spectrum"]
    np.savez(outputs, hr_probs=_beliefppg_network_here().predict(spectra, verbose=0))


def export_beliefppg(path: Path) -> None:
    """``tf2onnx.convert.from_keras`` (opset 17) of the package's model without its time-domain backbone, as its
    ``load_inference_model`` builds it (tf.keras 2, in a legacy-Keras process), up to its prior layer, at one
    input, (1, 7, 64, 2): input ``spectrum``, output ``hr_probs``."""
    _legacy_keras("_export_beliefppg_here", str(path))


def beliefppg_reference(spectra: np.ndarray, folder: Path) -> np.ndarray:
    """(N, 64): what the package's own model (built by its code, in a legacy-Keras process) gives for ``spectra``."""
    np.savez(folder / "spectra.npz", spectrum=spectra)
    _legacy_keras("_predict_beliefppg_here", str(folder / "spectra.npz"), str(folder / "probs.npz"))
    return np.load(folder / "probs.npz")["hr_probs"]


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported("physnet_rppg", OPEN_RPPG, _RPPG + "weights/physnet.rlap.weights.h5",
             "open-rppg's PhysNet remote-photoplethysmography 3-D CNN (RLAP weights), Keras 3 on TensorFlow "
             "exported by tf2onnx at opset 17: input standardization, Conv3D + BatchNorm + ReLU, MaxPool3D, two "
             "temporal ConvTranspose with ELU, AvgPool3D, a 128-sample pulse out; NDHWC (1, 128, 32, 32, 3) clips "
             "of a face with a synthetic blood-volume pulse", _npz(face_clips),
             {"input_shapes": {"frames": [1, RPPG_FRAMES, RPPG_SIDE, RPPG_SIDE, 3]}},
             export=export_physnet, tools=keras_tools),
    Exported(
        "beliefppg_spectral",
        BELIEFPPG,
        BELIEF_WEIGHTS,
        "BeliefPPG's wrist heart-rate estimator without its time-domain backbone (a tf.keras 2 model, JSON and NumPy "
        "weights) exported by tf2onnx at opset 17 up to its belief-propagation layer: 1x1 Conv2D over PPG and "
        "accelerometer spectra, per-frame attention (MatMul, Softmax), a 1-D U-Net of Conv1D + Relu, MaxPool and "
        "upsampling with sigmoid-gated skips, a 64-way Softmax; (1, 7, 64, 2) spectra of 20 s synthetic wrist PPG "
        "and accelerometer recordings in, heart-rate bin probabilities (30-210 BPM) out, as the package's "
        "infer_hr_uncertainty feeds them",
        _npz(wrist_spectra),
        {"input_shapes": {"spectrum": [1, FRAMES, BINS, 2]}},
        export=export_beliefppg,
        tools=tf_keras_tools,
    ),
)
