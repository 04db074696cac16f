"""Held-out models of body-worn motion sensors: human activity recognition from a phone's accelerometer
and attitude estimation from an IMU.

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
- riann 0.2.0 (Apache 2.0): RIANN, Weber, Guehmann and Seel's robust IMU-based attitude neural network
  (``riann/riann.onnx``, 1.47 MB as shipped: a PyTorch 1.7 export at opset 12, 367k parameters, trained on
  several public IMU data sets with optical motion capture truth at varied sampling rates): the readings
  standardized (Sub, Div), two ONNX ``GRU`` layers of 200 (linear before reset) started from a given state, a
  1 x 1 Conv head of 4 and the quaternion normalized (Mul, ReduceSum, Sqrt, Div). Its ``sequence`` dim is pinned
  by ``input_shapes`` to 1, the package's real-time ``predict_step``: ``input`` (1, 1, 7) float32 (the
  accelerometer in m/s^2, the gyroscope in rad/s, the sample period in s) and ``h0`` (2, 1, 1, 200), the state
  carried from the step before, a whole input in each sample, in; ``output`` (1, 1, 4), the sensor's attitude as
  a w, x, y, z unit quaternion (heading unobservable, inclination from gravity), and ``hn`` out.

Data are made as each package feeds its model, with the package's own code from the pinned archive, its model
replaced by a recorder of what it is fed:

- humanactivity: the recognizer's ``InputThread.run`` (each reading standardized by its ``_normalize``, the
  scikit-learn ``StandardScaler`` its ``__init__`` sets from ``har_scale_parameters.csv``, into a 90-reading window)
  and ``OutputThread.run`` (the window stacked into a (1, 90, 3) batch for ``predictor.predict``), run in turn on
  this thread rather than started, Keras's ``model_from_json`` a recorder, ``time.sleep`` a no-op, ``open`` and
  ``pandas.read_csv`` (of files named relative to the working directory) reading the pinned members. Each sample is
  4.5 s of a synthetic pocket accelerometer, its activity cycled over sitting, standing, walking and jogging (the
  four the WISDM users did on level ground; stairs are not made): gravity along the thigh standing and across it
  sitting, with a seeded tilt and turn of the phone in the pocket (up to 15 degrees about each axis), postural sway
  and sensor noise; walking at a seeded 1.7-2.1 steps a second, rounded step peaks along the thigh (about 1.2 g peak
  to peak) and the thigh's swing across it; jogging at 2.5-3.0 steps a second, sharp heel strikes (2.5 g) on a
  baseline that dips between steps and a wider swing. The activity each window was made for is the truth the
  model's argmax is checked against.
- RIANN: the package's ``RIANN().predict_sequence(acc, gyr, fs=100)`` (``predict_step`` per sample) with its
  session wrapped to keep each feed: the state fed is the network's own from the step before, so the network runs.
  Each recording (:func:`imu_motion`) is 8 s of a body-worn IMU at 100 Hz moving freely (1.5 rad/s of low-passed
  angular velocity, 2 m/s^2 of low-passed linear acceleration, accelerometer noise, gyroscope noise and bias);
  four steps per recording at seeded times after the first second, each with its state.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, tf_keras_tools

_RIANN = "riann/"

RIANN = fetch.Wheel(
    requirement="riann==0.2.0",
    filename="riann-0.2.0-py3-none-any.whl",
    sha256="e7292f567630ce3b30c031c49dde9c9d1e98769efc6d513cdeb52b243743022d",
    members=(_RIANN + "riann.onnx", _RIANN + "riann.py"),
)

#: The sampling rate of the synthetic IMU recordings (Hz; RIANN takes the sample period as its seventh feature: it
#: was trained on recordings of several rates) and their length (s).
IMU_RATE = 100.0

IMU_SECONDS = 8.0

#: Standard gravity (m/s^2) and where in each recording the samples are taken from: after the first second (the
#: network's state starts at zero and settles in about a second).
GRAVITY = 9.81

IMU_SETTLE = 100

#: The recurrent state the package carries between steps: two GRU layers of 200.
RIANN_STATE = (2, 1, 1, 200)


def imu_motion(seed: int, rate: float = IMU_RATE, seconds: float = IMU_SECONDS) -> tuple[np.ndarray, np.ndarray,
                                                                                        np.ndarray]:
    """A body-worn IMU moving freely: ``(acc (n, 3) m/s^2, gyr (n, 3) rad/s, truth (n, 4) w, x, y, z)``. The
    angular velocity is 1.5 rad/s (deviation) noise low-passed at 1.5 Hz, integrated from a seeded start tilted
    by up to about 40 degrees; the linear acceleration 2 m/s^2 noise low-passed at 3 Hz (walking, reaching,
    shaking). The accelerometer reads the specific force in the sensor frame with 0.05 m/s^2 noise, the gyroscope
    the angular velocity with 0.005 rad/s noise and a 0.01 rad/s (deviation) constant bias. ``truth`` is the
    sensor-to-earth rotation (z up), as RIANN outputs it."""
    from scipy.signal import butter, sosfiltfilt
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    n, dt = int(rate * seconds), 1 / rate
    omega = sosfiltfilt(butter(2, 1.5, fs=rate, output="sos"), rng.normal(size=(n, 3)), axis=0)
    omega *= 1.5 / omega.std()
    rotations = [Rotation.from_rotvec(rng.normal(size=3) * 0.5)]
    for step in omega[:-1]:
        rotations.append(rotations[-1] * Rotation.from_rotvec(step * dt))
    truth = Rotation.concatenate(rotations)
    linear = sosfiltfilt(butter(2, 3.0, fs=rate, output="sos"), rng.normal(size=(n, 3)), axis=0)
    linear *= 2.0 / linear.std()
    acc = truth.inv().apply(linear + np.array([0.0, 0.0, GRAVITY])) + rng.normal(0, 0.05, (n, 3))
    gyr = omega + rng.normal(0, 0.005, (n, 3)) + rng.normal(0, 0.01, 3)
    return acc, gyr, truth.as_quat()[:, [3, 0, 1, 2]]


def inclination_error(estimate: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Degrees between the vertical in the sensor frame of two (n, 4) w, x, y, z attitudes (heading ignored: no
    magnetometer, it is not observable)."""
    from scipy.spatial.transform import Rotation

    def up(quaternions: np.ndarray) -> np.ndarray:
        return Rotation.from_quat(quaternions[:, [1, 2, 3, 0]]).inv().apply([0.0, 0.0, 1.0])

    cosine = np.clip((up(estimate) * up(truth)).sum(axis=1), -1, 1)
    return np.degrees(np.arccos(cosine))


class _RiannSession:
    """Wraps the package's ``onnxruntime.InferenceSession`` on ``riann.onnx``: keeps each feed, then runs it (the
    state the package carries to the next step is the network's own)."""

    def __init__(self, path: Any, *args: Any, **kwargs: Any) -> None:
        import onnxruntime as ort

        self.session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: Any, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.feeds.append({key: np.array(value, copy=True) for key, value in feed.items()})
        return self.session.run(names or None, feed)


@contextmanager
def riann_stepper() -> Iterator[Any]:
    """``feed(acc, gyr) -> (quaternions (n, 4), [{"input": (1, 1, 7), "h0": (2, 1, 1, 200)} per step])``: the
    package's real-time path, ``RIANN().predict_sequence(acc, gyr, fs=100)`` (``predict_step`` per sample: the
    accelerometer, the gyroscope and the sample period in its float32 buffer, the state the network returned last
    step), on the wheel's ``riann.onnx`` with its session wrapped to keep each feed. ``feed.estimator`` is the
    package's ``RIANN``."""
    with standing_in(RIANN, ("riann.riann",), {}):
        module = sys.modules["riann.riann"]
        module.rt = types.SimpleNamespace(InferenceSession=_RiannSession)
        estimator = module.RIANN(onnx_path=str(fetch.model_file(RIANN, _RIANN + "riann.onnx")))

        def feed(acc: np.ndarray, gyr: np.ndarray) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
            estimator.session.feeds = []
            quaternions, _ = estimator.predict_sequence(acc, gyr, fs=IMU_RATE)
            return quaternions, list(estimator.session.feeds)

        feed.estimator = estimator  # type: ignore[attr-defined]
        yield feed


def imu_steps(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 1, 7) and h0 (N, 2, 1, 1, 200) float32: steps of synthetic IMU recordings (four per recording, at
    seeded times after the first second), each with the state the package carries into it."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list[np.ndarray]] = {"input": [], "h0": []}
    with riann_stepper() as feed:
        while len(rows["input"]) < count:
            _, feeds = feed(*imu_motion(int(rng.integers(1 << 30)))[:2])
            for step in np.sort(rng.choice(np.arange(IMU_SETTLE, len(feeds)), 4, replace=False)):
                if len(rows["input"]) < count:
                    rows["input"].append(feeds[step]["input"][0])
                    rows["h0"].append(feeds[step]["h0"])
    return {key: np.stack(value) for key, value in rows.items()}


_npz = zoo._npz  # noqa: SLF001

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

#: The ONNX opset of the exports written here.
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
    with standing_in(HUMANACTIVITY, (), stand_ins):
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


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel(
        "riann_attitude",
        RIANN,
        _RIANN + "riann.onnx",
        "RIANN's robust IMU attitude estimator (riann.onnx as shipped: a PyTorch 1.7 export at opset 12) one step "
        "at a time as the package's predict_step runs it: accelerometer, gyroscope and sample period (1, 1, 7) and "
        "the carried (2, 1, 1, 200) state of two GRU layers in, a unit quaternion (the 1x1 Conv head normalized by "
        "ReduceSum, Sqrt and Div) and the next state out; steps of synthetic body-worn IMU recordings at 100 Hz",
        _npz(imu_steps),
        {"input_shapes": {"input": [1, 1, 7], "h0": list(RIANN_STATE)}},
    ),
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
        tools=tf_keras_tools,
    ),
)
