"""Held-out models, batch 25: two wearable-sensor domains no batch had, human activity recognition from a phone's
accelerometer and heart rate from a wrist photoplethysmogram (batch 15's PhysNet reads the pulse from face video),
from two packages the zoo does not pin, registered before any vendor tool saw them.

- humanactivity 0.2.1 (MIT, an sdist): the package's ``HumanActivityRecognizer``, a 1-D CNN that tells from 4.5 s of
  a trouser-pocket phone's accelerometer (x, y, z in m/s^2, 20 Hz, the WISDM convention: y along the thigh, about
  +9.8 when upright) whether its wearer is going downstairs, jogging, sitting, standing, going upstairs or walking
  (the six activities of the WISDM activity prediction data set: Kwapisz, Weiss and Moore, "Activity Recognition
  using Cell Phone Accelerometers", SIGKDD Explorations 12(2), 2010). Shipped as a Keras 2.0.6 ``Sequential``
  (``humanactivity/har_model_json``, its architecture, and ``humanactivity/har_model_save``, 0.6 MB of HDF5 weights,
  143k parameters) with the per-axis standardization it was trained with (``har_scale_parameters.csv``): a valid
  Conv1D of 60 filters with kernel 60 + Relu over the (90, 3) window, a MaxPooling1D of 20 with stride 2, a valid
  Conv1D of 6 with kernel 6 + Relu (down to one step), a Flatten, a Dense 6 -> 10000 + Relu and a Dense 10000 -> 6
  with a sigmoid. Built by the package's own calls (``model_from_json`` on its architecture, ``load_weights`` of its
  weights; Keras 2 as tf_keras) and exported by tf2onnx (``tf2onnx.convert.from_keras``, opset 17, static shapes, 0.6
  MB): a Transpose, 2 Conv (each 1-D convolution as a 2-D one between Unsqueeze and Squeeze, its bias an Add), a
  MaxPool (also between Unsqueeze and Squeeze), 3 Relu, 2 Reshape, 2 Gemm and a Sigmoid, about 0.9 MFLOPs (0.67 of
  them in the first convolution). ``acceleration`` (1, 90, 3) float32, the standardized window (time, axis), in;
  ``activity_probs`` (1, 6), a sigmoid score per activity in the package's ``HumanActivityState`` order (the package
  takes the argmax), out.
- beliefppg 0.3.1 (MIT): BeliefPPG (Bieri, Streli, Demirel and Holz, "BeliefPPG: Uncertainty-aware Heart Rate
  Estimation from PPG signals via Belief Propagation", UAI 2023), its released model without the time-domain backbone
  (``beliefppg/inference/inference_model_notimebackbone_architecture.json`` and ``..._weights.npz``, 0.26 MB: a
  tf.keras 2 functional model, 61k parameters, what ``infer_hr_uncertainty(use_time_backbone=False)`` loads; the
  default model adds an LSTM backbone that the package runs with its dropout on, so its output is random). Over 7
  spectral frames (8 s windows 2 s apart) of 64 amplitude bins between 0.5 and 3.5 Hz, PPG and accelerometer as two
  channels: two 3 x 3 Conv2D of 32 + LeakyReLU, two attention branches (sinusoidal positional encodings, Dense
  queries and keys of 32, Keras ``Attention`` (dot-product) over frequency and over time) added, the frames averaged,
  a 1-D attention U-Net over frequency (3-tap Conv1D + Relu pairs of 12, 24 and 48, MaxPool of 4, upsampling by 4 and
  skips gated by 1 x 1 Conv, Relu and sigmoid attention), a 1 x 1 Conv and a softmax over 64 heart-rate bins (30-210
  BPM); the package's ``PriorLayer`` then decodes the bins over time by belief propagation (not exported: a
  recurrence across the successive windows of a recording). Built by the package's own ``load_inference_model`` (its
  custom layers registered; in a process with ``TF_USE_LEGACY_KERAS=1``, which the package's ``__init__`` sets, since
  Keras 3 does not load it) and exported up to the prior layer's input by tf2onnx (``tf2onnx.convert.from_keras``,
  opset 17, static shapes, 0.3 MB): 24 Conv (with Transpose, Unsqueeze and Squeeze around the 1-D ones), 2 LeakyRelu,
  15 Relu, 9 MatMul, 3 Softmax, 3 Sigmoid, 4 Mul, 3 MaxPool, 6 Concat and 2 Split (the skips and the upsampling), a
  ReduceMean, 18 Reshape and 34 Add, about 18 MFLOPs (8.3 of them in the second 3 x 3 convolution). ``spectrum`` (1,
  7, 64, 2) float32 in; ``hr_probs`` (1, 64), the probability of each heart-rate bin (bin i is 30 + 180 i / 64 BPM)
  for the last frame's 8 s, out.

humanactivity's data are made as the package feeds its model, with the package's own code from the pinned sdist, its
model replaced by a recorder of what it is fed: the recognizer's ``InputThread.run`` (each reading standardized by
its ``_normalize``, the scikit-learn ``StandardScaler`` its ``__init__`` sets from ``har_scale_parameters.csv``, into
a 90-reading window) and ``OutputThread.run`` (the window stacked into a (1, 90, 3) batch for ``predictor.predict``),
run in turn on this thread rather than started, Keras's ``model_from_json`` a recorder, ``time.sleep`` a no-op,
``open`` and ``pandas.read_csv`` (of files named relative to the working directory) reading the pinned members. Each
sample is 4.5 s of a synthetic pocket accelerometer, its activity cycled over sitting, standing, walking and jogging
(the four the WISDM users did on level ground; stairs are not made): gravity along the thigh standing and across it
sitting, with a seeded tilt and turn of the phone in the pocket (up to 15 degrees about each axis), postural sway and
sensor noise; walking at a seeded 1.7-2.1 steps a second, rounded step peaks along the thigh (about 1.2 g peak to
peak) and the thigh's swing across it; jogging at 2.5-3.0 steps a second, sharp heel strikes (2.5 g) on a baseline
that dips between steps and a wider swing. The activity each window was made for is the truth the model's argmax is
checked against.

BeliefPPG's data are made as its ``infer_hr_uncertainty(ppg, 64, acc, 32, use_time_backbone=False)`` feeds its model,
with the package's own code from the pinned wheel (``beliefppg.inference.inference``, its ``prepare_session_spec``:
band-pass, resampling to 25 Hz, a 535-point FFT per 8 s window, standardization over the recording; its tf.data
windowing and batching), ``load_inference_model`` a recorder carrying the model's input shapes and prior-layer bins,
and its dataset readers (which need pandas) stood in for. Each sample is one input, 20 s of a synthetic wrist
recording (PPG-DaLiA's Empatica E4 rates: PPG at 64 Hz, accelerometer at 32 Hz in g): beats of a systolic peak and a
smaller diastolic wave at a seeded 45-160 BPM with a slow drift and a respiratory sinus arrhythmia, a respiratory
baseline, white noise at a seeded 5-40 % of the pulse, raw-count scale and offset; the wrist at rest, or one sample
in three swinging at a seeded 0.6-1.4 Hz away from the heart rate. The heart rate of the recording's last 8 s is the
truth the most probable bin is checked against.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch15 import Exported
from tests.thirdparty.heldout_batch18 import _standing_in

_HA = "humanactivity-0.2.1/humanactivity/"
HAR_JSON = _HA + "har_model_json"
HAR_WEIGHTS = _HA + "har_model_save"
HAR_SCALE = _HA + "har_scale_parameters.csv"
HAR_MODULE = _HA + "humanActivity.py"
HUMANACTIVITY = fetch.Wheel(
    requirement="humanactivity==0.2.1",
    filename="humanactivity-0.2.1.tar.gz",
    sha256="f52d524bcb5332fbbdc2385d49f7f0549f59a407587005efa1c4406c41c4a8b9",
    members=(HAR_JSON, HAR_WEIGHTS, HAR_SCALE, HAR_MODULE),
)
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
WHEELS = (HUMANACTIVITY, BELIEFPPG)

#: The ONNX opset of this batch's export.
OPSET = 17

#: The package's sampling rate (its ``SAMPLE_PERIOD`` of 50 ms) and window (``WINDOW_SIZE`` readings).
RATE = 20
WINDOW = 90
#: The package's ``HumanActivityState`` order of the model's six outputs.
ACTIVITIES = ("downstairs", "jogging", "sitting", "standing", "upstairs", "walking")
#: The activities the samples are made of, cycled (the level-ground ones; no stairs are made).
MADE = ("sitting", "standing", "walking", "jogging")
#: Standard gravity (m/s^2), the unit of the WISDM readings.
G = 9.81
#: Steps per second of the moving activities.
CADENCE = {"walking": (1.7, 2.1), "jogging": (2.5, 3.0)}
#: Walking: the amplitude (m/s^2) of the rounded step peaks along the thigh. Jogging: the peak-to-peak heel-strike
#: amplitude along the thigh (in g), the width of its sharp peak (a fraction of the step) and the thigh's swing
#: across it (in g).
WALK_PEAK = 6.0
JOG_STRIKE, JOG_WIDTH, JOG_SWING = 2.5, 0.06, 0.77


def _rotation(rng: np.random.Generator, degrees: float) -> np.ndarray:
    """A seeded rotation of up to ``degrees`` about each axis (the phone's tilt and turn in the pocket)."""
    out = np.eye(3)
    for axis in range(3):
        angle = np.deg2rad(rng.uniform(-degrees, degrees))
        c, s = np.cos(angle), np.sin(angle)
        i, j = [k for k in range(3) if k != axis]
        turn = np.eye(3)
        turn[i, i], turn[i, j], turn[j, i], turn[j, j] = c, -s, s, c
        out = turn @ out
    return out


def accelerometer_window(activity: str, seed: int) -> np.ndarray:
    """(:data:`WINDOW`, 3) float64: 4.5 s of a pocket accelerometer (x, y, z in m/s^2 at :data:`RATE` Hz, y along
    the thigh) for ``activity`` (one of :data:`MADE`), seeded."""
    rng = np.random.default_rng(seed)
    t = np.arange(WINDOW) / RATE
    noise = rng.normal(0.0, 0.05 * G, (WINDOW, 3))
    if activity in ("sitting", "standing"):
        # gravity along the thigh standing, across it (the phone's face) sitting; postural sway below 1 Hz
        gravity = np.array([0.0, G, 0.0]) if activity == "standing" else np.array([0.0, 0.25 * G, 0.97 * G])
        sway = 0.02 * G * np.sin(2 * np.pi * rng.uniform(0.1, 0.8) * t[:, None] + rng.uniform(0, 2 * np.pi, 3))
        return (_rotation(rng, 15) @ gravity)[None] + sway + 0.3 * noise
    cadence = rng.uniform(*CADENCE[activity])
    step = t * cadence + rng.uniform(0, 1)
    if activity == "walking":
        # rounded step peaks along the thigh, its swing across it at the stride and the step
        along = G + WALK_PEAK * (2 * np.abs(np.sin(np.pi * step)) ** 3 - 0.7)
        swing = rng.normal(-1, 1) + 0.4 * WALK_PEAK * np.sin(np.pi * step + 1)
        across = rng.normal(0, 1) + 0.3 * WALK_PEAK * np.sin(2 * np.pi * step + 2)
        return np.stack([swing, along, across], axis=1) @ _rotation(rng, 10).T + 0.5 * noise / (0.05 * G)
    # jogging: a sharp heel-strike peak at each step on a baseline that dips between steps, a wider swing
    cycle = step % 1.0
    strike = np.exp(-0.5 * (np.minimum(cycle, 1 - cycle) / JOG_WIDTH) ** 2)
    along = G * (1.0 + JOG_STRIKE * (strike - strike.mean()))
    swing = JOG_SWING * G * np.sin(np.pi * step)
    across = JOG_SWING * 0.7 * G * np.sin(2 * np.pi * step + 1.0)
    signal = np.stack([swing, along, across], axis=1)
    return signal @ _rotation(rng, 15).T + noise * (1 + JOG_STRIKE)


@contextmanager
def har_feeder() -> Iterator[Any]:
    """``feed(readings) -> (1, 90, 3)`` float32: what the package's recognizer feeds its model for a window of
    ``readings`` ((90, 3) raw accelerometer, m/s^2): its ``InputThread.run`` and ``OutputThread.run`` run in turn
    on this thread, its model a recorder (``feed.loaded``: what the recorder was loaded from)."""
    import csv

    import sklearn.preprocessing  # noqa: F401 - imported before pandas is stood in for

    fed: list[np.ndarray] = []
    loaded: dict[str, str] = {}
    current: list[Any] = []

    class Predictor:
        def load_weights(self, path: str) -> None:
            loaded["weights"] = path

        def predict(self, batch: np.ndarray) -> np.ndarray:
            fed.append(np.array(batch, copy=True))
            current[0].outputThread_running = False
            return np.zeros((len(batch), len(ACTIVITIES)), np.float32)

    def model_from_json(text: str) -> Predictor:
        loaded["json"] = text
        return Predictor()

    def read_csv(path: str, names: list[str], header: Any = None) -> dict[str, np.ndarray]:
        """Stands in for ``pandas.read_csv`` on the package's headerless scale file: float64 columns by name (an
        item of each is a NumPy float, as of a pandas column)."""
        assert header is None
        loaded["csv"] = path
        with fetch.model_file(HUMANACTIVITY, _HA + path).open(newline="") as handle:
            rows = [[float(value) for value in row] for row in csv.reader(handle) if row]
        return {name: np.array([row[k] for row in rows]) for k, name in enumerate(names)}

    stand_ins = {"keras": {}, "keras.models": {"Sequential": object, "model_from_json": model_from_json},
                 "pandas": {"read_csv": read_csv}}
    with _standing_in(HUMANACTIVITY, (), stand_ins):
        spec = importlib.util.spec_from_file_location("humanActivity", fetch.model_file(HUMANACTIVITY, HAR_MODULE))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    module.time = types.SimpleNamespace(sleep=lambda seconds: None)  # type: ignore[attr-defined]

    def open_pinned(path: str, mode: str = "r") -> Any:
        """Stands in for ``open`` of the package's files, named relative to the working directory."""
        loaded["open"] = path
        return fetch.model_file(HUMANACTIVITY, _HA + path).open(mode)

    module.open = open_pinned  # type: ignore[attr-defined]

    class NotStarted:
        """The package's threads, made but not started: their ``run`` is called here in turn."""

        def __init__(self, thread: type) -> None:
            self.thread = thread

        def __call__(self, recognizer: Any) -> Any:
            made = self.thread(recognizer)
            made.start = lambda: None
            return made

    module.InputThread = NotStarted(module.InputThread)  # type: ignore[attr-defined]
    module.OutputThread = NotStarted(module.OutputThread)  # type: ignore[attr-defined]

    def feed(readings: np.ndarray) -> np.ndarray:
        assert readings.shape == (WINDOW, 3)
        recognizer: Any = None
        remaining = list(readings)

        class Source(module.IAccelerometerDataSource):  # type: ignore[name-defined]
            def getCurrentReading(self) -> Any:  # noqa: N802 - the package's interface
                x, y, z = remaining.pop(0)
                if not remaining:
                    recognizer.inputThread_running = False
                return module.AccelerometerData(np.array([x]), np.array([y]), np.array([z]))

        recognizer = module.HumanActivityRecognizer(lambda state: None, Source())
        current[:] = [recognizer]
        fed.clear()
        recognizer.inputThreadObject.run()
        recognizer.outputThreadObject.run()
        (batch,) = fed
        return batch.astype(np.float32)

    feed.loaded = loaded  # type: ignore[attr-defined]
    feed.module = module  # type: ignore[attr-defined]
    yield feed


def windows_with_truth(count: int, seed: int) -> dict[str, np.ndarray]:
    """``acceleration`` (N, 90, 3) float32 as the package feeds its model and ``activity`` (N,) int64, the index in
    :data:`ACTIVITIES` each window was made for (:data:`MADE` cycled from a seeded start)."""
    rng = np.random.default_rng(seed)
    start = int(rng.integers(len(MADE)))
    windows, truth = [], []
    with har_feeder() as feed:
        for k in range(count):
            activity = MADE[(start + k) % len(MADE)]
            windows.append(feed(accelerometer_window(activity, int(rng.integers(1 << 30)))))
            truth.append(ACTIVITIES.index(activity))
    return {"acceleration": np.concatenate(windows), "activity": np.array(truth, np.int64)}


def accelerometer_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """acceleration (N, 90, 3) float32: 4.5 s windows of a synthetic pocket accelerometer (sitting, standing,
    walking, jogging), standardized as the package's recognizer feeds them."""
    return {"acceleration": windows_with_truth(count, seed)["acceleration"]}


def har_network() -> Any:
    """The package's model as its ``OutputThread`` builds it: ``model_from_json`` on its architecture and
    ``load_weights`` of its HDF5 weights (Keras 2, as tf_keras)."""
    import tf_keras

    network = tf_keras.models.model_from_json(fetch.model_file(HUMANACTIVITY, HAR_JSON).read_text())
    network.load_weights(str(fetch.model_file(HUMANACTIVITY, HAR_WEIGHTS)))
    return network


def export_har(path: Path) -> None:
    """``tf2onnx.convert.from_keras`` of :func:`har_network` (opset 17) at one window, (1, 90, 3), its input named
    ``acceleration`` and its output ``activity_probs``."""
    import onnx
    import tensorflow as tf
    import tf2onnx

    spec = (tf.TensorSpec((1, WINDOW, 3), tf.float32, name="acceleration"),)
    graph, _ = tf2onnx.convert.from_keras(har_network(), input_signature=spec, opset=OPSET)
    (output,) = graph.graph.output
    for node in graph.graph.node:
        node.output[:] = ["activity_probs" if name == output.name else name for name in node.output]
    output.name = "activity_probs"
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))


def _tf_keras_tools() -> str:
    import tensorflow as tf
    import tf2onnx
    import tf_keras

    return f"tf_keras-{tf_keras.__version__}-tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


# --------------------------------------------------------------------------------------------- beliefppg

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
    with _standing_in(BELIEFPPG, _BP_FEED_MODULES, stand_ins):
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
    code = f"import sys; from tests.thirdparty.heldout_batch25 import {function}; {function}(*sys.argv[1:])"
    subprocess.run([sys.executable, "-c", code, *args], check=True, cwd=Path(__file__).parents[2],
                   env={**os.environ, "TF_USE_LEGACY_KERAS": "1"}, timeout=900)


def _beliefppg_network_here() -> Any:
    """The package's model without its time-domain backbone as its ``load_inference_model`` builds it, up to the
    prior layer's input (the instantaneous heart-rate bin probabilities); in a legacy-Keras process only."""
    assert os.environ.get("TF_USE_LEGACY_KERAS") == "1"
    import tensorflow as tf

    stand_ins = {"tensorflow_probability": {}}
    with _standing_in(BELIEFPPG, _BP_MODEL_MODULES, stand_ins):
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


_npz = zoo._npz  # noqa: SLF001

# Batch 25, held out: added before any vendor tool saw them.
BATCH25_MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "humanactivity_har_cnn",
        HUMANACTIVITY,
        HAR_WEIGHTS,
        "humanactivity's WISDM human activity recognizer (a Keras 2.0.6 Sequential from an sdist) exported by "
        "tf2onnx at opset 17: a valid 60-tap Conv1D of 60 + Relu, a MaxPool of 20 (stride 2), a valid 6-tap Conv1D "
        "of 6 + Relu, a Flatten, a Dense of 10000 + Relu and a 6-way sigmoid Dense; (1, 90, 3) standardized 4.5 s "
        "pocket accelerometer windows at 20 Hz in, downstairs/jogging/sitting/standing/upstairs/walking scores out, "
        "as the package's recognizer threads feed them",
        _npz(accelerometer_windows),
        {"input_shapes": {"acceleration": [1, WINDOW, 3]}},
        export=export_har,
        tools=_tf_keras_tools,
    ),
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
        tools=_tf_keras_tools,
    ),
)
