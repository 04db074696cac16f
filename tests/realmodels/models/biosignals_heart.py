"""Held-out models of the heart's electrical signal: ECG quality grading and sleep staging from heartbeats.

- ecg-quality 0.2.0: the ECG signal-quality graders of ``ECGQualityChecker``, shipped as Keras 2.12 HDF5 files;
  ``ecg_quality/models/OSCNN2s.h5`` (472 kB, 51k parameters) is an Omni-Scale CNN: a Functional model of three
  blocks of parallel ``Conv1D`` branches (the first two with 31: kernel sizes 1, 2 and every prime up to 113; the
  last with sizes 1 and 2), each joined by ``Concatenate`` then BatchNorm + ReLU, global average pooling and a
  sigmoid ``Dense``: 64 convolutions in all. It reads a 2 s window of single-lead ECG at 250 Hz in mV,
  (None, 500, 1) float32 (input ``input_1``), and returns one score in [0, 1]: the package calls below 0.1 clean
  (all waves visible), below 0.7 noisy but QRS visible, above that unusable.
- sleepecg 0.6.0 (BSD 3-Clause): the ``wrn-gru-mesa`` sleep stager (``sleepecg/classifiers/wrn-gru-mesa.zip``,
  60 kB: ``classifier.keras``, Keras 3, 14.7k parameters, and ``info.yml``, the feature extraction it was trained
  with), trained on MESA polysomnography nights to score wake, REM and NREM from the heartbeat times of an ECG: a
  Masking layer (mask value -1), BatchNormalization, a Dense 64 + ReLU applied per 30 s epoch, two bidirectional
  GRUs (8 units each way) over the whole night and a per-epoch Dense softmax of 4 (undefined, NREM, REM, wake).
  Exported by ``model.export(format="onnx")`` (tf2onnx, opset 17; 106 kB: the masked GRUs as four ``Loop``, the
  backward ones behind ``ReverseSequence``; tf2onnx also imports ``ai.onnx.ml``): ``features`` (1, 960, 36)
  float32 in, an 8 h night of 30 s epochs, ``stage_probs`` (1, 960, 4) out. Its 36 features per epoch: 26
  time-domain and 7 frequency-domain heart-rate variability measures over a window of 120 s before to 150 s after
  the epoch's start, the recording's start time (seconds after midnight), the subject's age and gender.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

- ECG: ``ECGQualityChecker(model="oscnn2s")`` (its defaults: 250 Hz, cleaning on, the window range check on, a
  stride of 250 samples) with ``tf_model.tf_model`` replaced by a recorder and neurokit2's ``ecg_clean`` (not in
  the wheel) by :func:`ecg_clean`, neurokit2 0.2.4's default "neurokit" method with scipy (a 0.5 Hz fifth-order
  Butterworth high-pass by ``sosfiltfilt``, then its 50 Hz powerline filter: a 5-sample moving average by
  ``filtfilt``). Records of ``ECG_SECONDS`` of synthetic ECG (:func:`ecg_like`: P, Q, R, S and T waves as
  Gaussians per beat at 50-110 beats a minute with respiratory sinus arrhythmia, R about 1.1 mV) with noise of a
  level cycled per sample (:data:`ECG_LEVELS`: none, light muscle noise and baseline wander, heavier, and electrode
  motion artefacts at three strengths); one of the windows the checker feeds is kept per record.
- sleepecg: the package's ``stage(clf, record)`` (``extract_features`` with the classifier's own ``info.yml``
  parameters, NaN and inf set to the mask value) with the model a recorder, on synthetic 8 h nights
  (:func:`night_beats`): a hypnogram of four or five sleep cycles (:func:`hypnogram`: sleep latency, N1, N2, N3
  shortening and REM lengthening over the night, brief awakenings, waking at the end) drives the heartbeat times:
  a stage-dependent heart rate (highest awake, lowest in N3), respiratory sinus arrhythmia at a seeded breathing
  rate (strongest in deep sleep, irregular in REM and wake), low-frequency (Mayer wave) variability and arousal
  surges while awake; the subject's age, gender and resting heart rate and the recording's start time are seeded.
"""

from __future__ import annotations

import datetime
import io
import json
import sys
import tempfile
import types
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, keras_tools, wheel_modules

_ECG_H5 = "ecg_quality/models/OSCNN2s.h5"

ECG_QUALITY = fetch.Wheel(
    requirement="ecg-quality==0.2.0",
    filename="ecg_quality-0.2.0-py3-none-any.whl",
    sha256="bc9713b2ccc4ee65137f47f2293f83bb2ab2f8a848e016b0329c453264e38bba",
    members=(_ECG_H5, "ecg_quality/ECGQualityChecker.py", "ecg_quality/utils.py"),
)

#: The package's sampling rate (the only one it takes) and its model.
ECG_RATE = 250

ECG_MODEL = "oscnn2s"

#: Seconds of ECG per record: the checker feeds three 2 s windows of it (stride 1 s).
ECG_SECONDS = 4.0

#: Noise levels cycled over the samples: 0 is clean, up to 0.5 muscle noise and baseline wander, from 1 on also
#: electrode motion artefacts.
ECG_LEVELS = (0.0, 0.2, 0.5, 1.0, 2.0, 4.0)

#: (offset from the R peak in s, amplitude in mV, width in s) of the P, Q, R, S and T waves.
ECG_WAVES = ((-0.2, 0.15, 0.025), (-0.035, -0.12, 0.01), (0.0, 1.1, 0.012), (0.035, -0.3, 0.012),
             (0.28, 0.3, 0.05))


def ecg_like(seconds: float, seed: int, rate: int = ECG_RATE) -> np.ndarray:
    """A float64 single-lead ECG in mV: Gaussian P, Q, R, S and T waves per beat (QT stretched with the square root
    of the RR interval), 50-110 beats a minute with a 0.25 Hz respiratory sinus arrhythmia and beat-to-beat
    jitter."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    rate_bpm = rng.uniform(50, 110)
    ecg = np.zeros_like(t)
    beat = rng.uniform(-0.5, 0.5) * 60 / rate_bpm
    while beat < seconds + 1:
        rr = 60 / rate_bpm * (1 + 0.05 * np.sin(2 * np.pi * 0.25 * beat) + 0.02 * rng.normal())
        for offset, amplitude, width in ECG_WAVES:
            at = beat + offset * (np.sqrt(rr) if offset > 0.1 else 1.0)
            ecg += amplitude * np.exp(-0.5 * ((t - at) / width) ** 2)
        beat += rr
    return ecg


def ecg_noise(ecg: np.ndarray, level: float, seed: int, rate: int = ECG_RATE) -> np.ndarray:
    """``ecg`` with noise of ``level``: baseline wander (0.1-0.4 Hz, 0.5 x level mV), muscle noise (0.15 x level
    mV), 20 uV of 50 Hz mains and, from level 1 on, electrode motion artefacts (a random walk low-passed at 8 Hz,
    0.8 x level mV deviation)."""
    from scipy.signal import butter, sosfiltfilt

    rng = np.random.default_rng(seed + 1000)
    t = np.arange(len(ecg)) / rate
    noisy = (ecg + 0.5 * level * np.sin(2 * np.pi * rng.uniform(0.1, 0.4) * t + rng.uniform(0, 2 * np.pi))
             + 0.15 * level * rng.normal(size=len(ecg)) + 0.02 * np.sin(2 * np.pi * 50 * t))
    if level >= 1:
        walk = sosfiltfilt(butter(2, 8, output="sos", fs=rate), np.cumsum(rng.normal(size=len(ecg))))
        noisy += 0.8 * level * (walk - walk.mean()) / walk.std()
    return noisy


def ecg_clean(ecg_signal: Any, sampling_rate: int = 1000, method: str = "neurokit") -> np.ndarray:
    """neurokit2 0.2.4's ``ecg_clean`` (the "neurokit" method, the only one ecg-quality uses): a fifth-order
    Butterworth high-pass at 0.5 Hz by ``sosfiltfilt`` (neurokit2 passes the cutoff as ``[0.5]``, which scipy 1.17
    refuses for a high-pass: the same filter from the scalar), then its powerline filter, a moving average of
    ``sampling_rate / 50`` samples by ``filtfilt``."""
    from scipy.signal import butter, filtfilt, sosfiltfilt

    assert method == "neurokit", method
    clean = sosfiltfilt(butter(5, 0.5, btype="highpass", output="sos", fs=sampling_rate),
                        np.asarray(ecg_signal, np.float64))
    taps = np.ones(int(sampling_rate / 50)) if sampling_rate >= 100 else np.ones(2)
    return filtfilt(taps, [len(taps)], clean, method="pad")


class _EcgRecorder:
    """Stands in for ecg-quality's ``tf_model.tf_model`` (the Keras model it loads with TensorFlow): reads the
    window length as its ``get_input_length`` does, from the HDF5 file's model config, keeps every window fed to
    ``process_ecg`` and answers a score of 0."""

    def __init__(self, model: str) -> None:
        import h5py

        assert model == ECG_MODEL, model
        with h5py.File(fetch.model_file(ECG_QUALITY, _ECG_H5), "r") as handle:
            config = json.loads(handle.attrs["model_config"])
        self.input_length = int(config["config"]["layers"][0]["config"]["batch_input_shape"][1])
        self.windows: list[np.ndarray] = []

    def process_ecg(self, signal: np.ndarray) -> float:
        """Record the window; score 0."""
        self.windows.append(np.asarray(signal, np.float32))
        return 0.0

    def get_input_length(self) -> int:
        return self.input_length


def ecg_checker() -> Any:
    """The wheel's ``ECGQualityChecker(model="oscnn2s")`` with its defaults, its model a :class:`_EcgRecorder` and
    neurokit2's ``ecg_clean`` :func:`ecg_clean` (``checker.model.windows`` holds what it fed)."""
    for member in ECG_QUALITY.members:
        fetch.model_file(ECG_QUALITY, member)
    with wheel_modules(ECG_QUALITY, ("ecg_quality.utils", "ecg_quality.ECGQualityChecker"),
                       ("ecg_quality.tf_model", "neurokit2")):
        sys.modules["ecg_quality.tf_model"].tf_model = _EcgRecorder  # type: ignore[attr-defined]
        sys.modules["neurokit2"].ecg_clean = ecg_clean  # type: ignore[attr-defined]
        return sys.modules["ecg_quality.ECGQualityChecker"].ECGQualityChecker(model=ECG_MODEL)


def ecg_record_windows(checker: Any, record: np.ndarray) -> np.ndarray:
    """(windows, samples) float32: what ``checker.process_signal(record)`` feeds its model."""
    before = len(checker.model.windows)
    checker.process_signal(record)
    return np.stack(checker.model.windows[before:])


def ecg_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input_1 (N, 500, 1) float32: one window per record of synthetic ECG at a noise level cycled per sample, as
    the package's checker cleans and cuts it."""
    checker = ecg_checker()
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(count):
        record_seed = int(rng.integers(1 << 30))
        record = ecg_noise(ecg_like(ECG_SECONDS, record_seed), ECG_LEVELS[k % len(ECG_LEVELS)], record_seed)
        windows = ecg_record_windows(checker, record)
        rows.append(windows[int(rng.integers(len(windows)))])
    return {"input_1": np.stack(rows)[..., None].astype(np.float32)}


_npz = zoo._npz  # noqa: SLF001

_SLP = "sleepecg/"

#: The package's modules its ``stage`` needs, in import order; ``config``, ``heartbeats`` (a C extension), and the
#: NSRR and PhysioNet downloaders are stubbed.
_SLP_MODULES = ("io.sleep_readers", "utils", "feature_extraction", "classification")

SLEEPECG = fetch.Wheel(
    requirement="sleepecg==0.6.0",
    filename="sleepecg-0.6.0-cp311-abi3-manylinux1_x86_64.manylinux_2_28_x86_64.manylinux_2_5_x86_64.whl",
    sha256="1e4379b1e0a9358f55df093d73246da9170d98ab868071284a04bc603e610c24",
    members=(_SLP + "classifiers/wrn-gru-mesa.zip", *(f"{_SLP}{name.replace('.', '/')}.py" for name in _SLP_MODULES)),
    platform_args=("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "abi3",
                   "--platform", "manylinux_2_28_x86_64"),
)

#: The ONNX opset of the exports written here.
OPSET = 17

SLEEP_MODEL = "wrn-gru-mesa"

#: 30 s epochs in the 8 h nights fed (``extract_features`` scores ``floor(last heartbeat / 30)`` of them).
SLEEP_EPOCHS = 960

SLEEP_EPOCH_SECONDS = 30

#: The model's 36 features per epoch.
SLEEP_FEATURES = 36

#: Output columns: ``["UNDEFINED"] + _STAGE_NAMES["wake-rem-nrem"]``.
SLEEP_CLASSES = ("UNDEFINED", "NREM", "REM", "WAKE")

# sleepecg's SleepStage values (AASM stages, increasing with wakefulness).
N3, N2, N1, REM, WAKE = 1, 2, 3, 4, 5

#: Heart rate relative to the subject's resting rate, respiratory sinus arrhythmia (fraction of the RR interval),
#: low-frequency variability and breathing irregularity per stage.
_STAGE_HEART = {
    WAKE: (1.22, 0.015, 0.050, 0.20),
    N1: (1.10, 0.025, 0.030, 0.10),
    N2: (1.03, 0.040, 0.020, 0.04),
    N3: (1.00, 0.050, 0.012, 0.02),
    REM: (1.14, 0.020, 0.050, 0.12),
}


@contextmanager
def sleepecg_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ``sleepecg`` modules (:data:`_SLP_MODULES`) by dotted name under the package; ``sleepecg.config``
    (pyyaml settings), ``sleepecg.heartbeats`` (the C detector) and the NSRR and PhysioNet readers' downloaders
    stubbed; ``sys.modules`` is restored on exit."""
    for member in SLEEPECG.members:
        fetch.model_file(SLEEPECG, member)
    stubs = ("sleepecg.config", "sleepecg.heartbeats", "sleepecg.io.nsrr", "sleepecg.io.physionet")
    with wheel_modules(SLEEPECG, tuple(f"sleepecg.{name}" for name in _SLP_MODULES), stubs):
        yield {name: sys.modules[f"sleepecg.{name}"] for name in _SLP_MODULES}


def sleep_classifier_info() -> dict[str, Any]:
    """The classifier's ``info.yml`` (feature extraction parameters, mask value, stages mode), read from the zip as
    the package's ``load_classifier`` reads it."""
    import yaml

    with zipfile.ZipFile(fetch.model_file(SLEEPECG, _SLP + f"classifiers/{SLEEP_MODEL}.zip")) as archive:
        return yaml.safe_load(archive.read("info.yml"))


def hypnogram(rng: np.random.Generator, epochs: int = SLEEP_EPOCHS) -> np.ndarray:
    """A night's sleep stages per 30 s epoch (sleepecg's ``SleepStage`` values): 8-25 min awake before sleep, cycles
    of about 90 min (N1, N2, N3 shortening over the night, N2, REM lengthening), a brief awakening after half of
    them, 6-15 min awake at the end."""
    stages = [WAKE] * int(rng.integers(16, 50))
    cycle = 0
    while len(stages) < epochs:
        stages += [N1] * int(rng.integers(3, 10)) + [N2] * int(rng.integers(60, 90))
        stages += [N3] * max(0, int(rng.normal(50 - 15 * cycle, 6))) + [N2] * int(rng.integers(15, 30))
        stages += [REM] * max(6, int(rng.normal(10 + 12 * cycle, 4)))
        if rng.random() < 0.5:
            stages += [WAKE] * int(rng.integers(2, 8))
        cycle += 1
    end = int(rng.integers(12, 30))
    return np.array(stages[: epochs - end] + [WAKE] * end)


def night_beats(stages: np.ndarray, rng: np.random.Generator, resting_bpm: float) -> np.ndarray:
    """Heartbeat times (s from the recording's start) over the night of ``stages``: each RR interval is the stage's
    mean (:data:`_STAGE_HEART`, smoothed over about a minute at transitions) modulated by breathing (0.2-0.3 Hz,
    its rate wandering, more so in REM and wake), by low-frequency variability around 0.1 Hz, by arousal surges of
    the heart rate while awake, and by beat-to-beat noise; beats stop before the night's last epoch ends."""
    from scipy.ndimage import gaussian_filter1d

    fs = 4.0
    n = int(len(stages) * SLEEP_EPOCH_SECONDS * fs) + 400
    epoch = np.minimum(np.arange(n) // int(SLEEP_EPOCH_SECONDS * fs), len(stages) - 1)
    table = np.array([_STAGE_HEART[int(s)] for s in stages])[epoch]
    rate, rsa, low, jitter = (gaussian_filter1d(table[:, k], 15 * fs) for k in range(4))
    breath = rng.uniform(0.2, 0.3) * (1 + jitter * gaussian_filter1d(rng.normal(size=n), 2 * fs) / 0.14)
    respiration = np.sin(2 * np.pi * np.cumsum(breath) / fs)
    mayer = gaussian_filter1d(rng.normal(size=n), 2.5 * fs)
    surge = gaussian_filter1d(np.maximum(rng.normal(size=n), 0), 10 * fs)
    awake = gaussian_filter1d((stages[epoch] == WAKE).astype(float), 10 * fs)
    bpm = resting_bpm * rate * (1 + 0.1 * awake * surge / surge.std())
    rr = 60 / bpm * (1 + rsa * respiration + low * mayer / mayer.std() + 0.01 * rng.normal(size=n))
    end = len(stages) * SLEEP_EPOCH_SECONDS
    times = [float(rng.uniform(0, 1))]
    while times[-1] < end + 2:
        times.append(times[-1] + float(rr[min(int(times[-1] * fs), n - 1)]))
    beats = np.array(times)
    return beats[beats < end + SLEEP_EPOCH_SECONDS - 1]


class _StageRecorder:
    """Stands in for the Keras model in ``stage``: keeps each feed and answers uniform probabilities."""

    def __init__(self) -> None:
        self.feeds: list[np.ndarray] = []

    def predict(self, features: np.ndarray) -> np.ndarray:
        self.feeds.append(np.array(features, copy=True))
        return np.full((*features.shape[:2], len(SLEEP_CLASSES)), 1 / len(SLEEP_CLASSES))


@contextmanager
def sleep_stager() -> Iterator[Any]:
    """``feed(record) -> (1, 960, 36) float32``: what the package's ``stage(clf, record)`` feeds the model of a
    ``SleepClassifier`` built from the wheel's ``info.yml``; and the modules, as ``feed.modules``."""
    info = sleep_classifier_info()
    with sleepecg_modules() as modules:
        classification = modules["classification"]

        def feed(record: Any) -> np.ndarray:
            recorder = _StageRecorder()
            clf = classification.SleepClassifier(
                model=recorder, stages_mode=info["stages_mode"], model_type=info["model_type"],
                feature_extraction_params=info["feature_extraction_params"], mask_value=info["mask_value"],
            )
            with warnings.catch_warnings(), redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")  # its VLF window-length warning, its empty-slice warnings
                classification.stage(clf, record, return_mode="prob")
            (features,) = recorder.feeds
            return features.astype(np.float32)

        feed.modules = modules  # type: ignore[attr-defined]
        yield feed


def sleep_record(modules: dict[str, types.ModuleType], seed: int) -> tuple[Any, np.ndarray]:
    """(record, stages): a sleepecg ``SleepRecord`` of a synthetic night (no stages attached, as a user's ECG
    has none), its heartbeat times from :func:`night_beats`, a seeded start time (21:30-23:59), age (20-80),
    gender and resting heart rate (48-68 bpm); and the night's true stages."""
    readers = modules["io.sleep_readers"]
    rng = np.random.default_rng(seed)
    stages = hypnogram(rng)
    beats = night_beats(stages, rng, float(rng.uniform(48, 68)))
    minute = int(rng.integers(21 * 60 + 30, 24 * 60))
    record = readers.SleepRecord(
        recording_start_time=datetime.time(minute // 60, minute % 60),
        heartbeat_times=beats,
        subject_data=readers.SubjectData(gender=int(rng.integers(0, 2)), age=int(rng.integers(20, 81))),
    )
    return record, stages


def sleep_nights(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """features (N, 960, 36) float32: one synthetic 8 h night per sample, as the package's ``stage`` feeds them."""
    rng = np.random.default_rng(seed)
    with sleep_stager() as feed:
        rows = [feed(sleep_record(feed.modules, int(rng.integers(1 << 30)))[0])[0] for _ in range(count)]
    return {"features": np.stack(rows)}


def sleep_network() -> Any:
    """The wheel's ``classifier.keras`` loaded by Keras (its TensorFlow backend; the package asks for PyTorch's,
    the file is backend-neutral)."""
    import keras

    with zipfile.ZipFile(fetch.model_file(SLEEPECG, _SLP + f"classifiers/{SLEEP_MODEL}.zip")) as archive:
        with tempfile.TemporaryDirectory() as folder:
            archive.extract("classifier.keras", folder)
            return keras.models.load_model(Path(folder) / "classifier.keras")


def export_sleepecg(path: Path) -> None:
    """``model.export(format="onnx")`` of :func:`sleep_network` (tf2onnx, opset 17) at (1, 960, 36), its input
    named ``features`` and its output ``stage_probs``."""
    import onnx
    import tensorflow as tf

    spec = tf.TensorSpec((1, SLEEP_EPOCHS, SLEEP_FEATURES), tf.float32, name="features")
    sleep_network().export(str(path), format="onnx", input_signature=[spec], opset_version=OPSET, verbose=False)
    graph = onnx.load(str(path))
    (output,) = graph.graph.output
    for node in graph.graph.node:
        node.output[:] = ["stage_probs" if name == output.name else name for name in node.output]
    output.name = "stage_probs"
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("ecg_quality_oscnn", ECG_QUALITY, _ECG_H5,
                 "ecg-quality's Omni-Scale CNN ECG signal-quality grader, a Keras 2.12 HDF5 Functional model: "
                 "parallel Conv1D branches of prime kernel sizes joined by Concatenate, BatchNorm, ReLU, a sigmoid "
                 "score; 2 s windows (500 samples at 250 Hz, mV) of synthetic ECG at six noise levels, cleaned and "
                 "cut by the package's checker", _npz(ecg_windows)),
    Exported(
        "sleepecg_gru",
        SLEEPECG,
        _SLP + f"classifiers/{SLEEP_MODEL}.zip",
        "sleepecg's wrn-gru-mesa sleep stager (wake, REM, NREM from heartbeats), a Keras 3 model exported by "
        "tf2onnx at opset 17: Masking, BatchNormalization, a per-epoch Dense + ReLU, two bidirectional GRUs over "
        "the whole night (masked: Loop and ReverseSequence) and a per-epoch softmax; (1, 960, 36) HRV and "
        "metadata features of synthetic 8 h nights, as the package's stage feeds them",
        _npz(sleep_nights),
        {"input_shapes": {"features": [1, SLEEP_EPOCHS, SLEEP_FEATURES]}},
        export=export_sleepecg,
        tools=keras_tools,
    ),
)
