"""Held-out EEG models: sleep spindles, seizures and the labelling of independent components.

- brainmaze-eeg-models 0.1.0 (Mayo Clinic): OpenSpindleNet's scalp-EEG sleep-spindle detector (PyTorch 2.5 export,
  opset 17: two inputs, a raw 30 s window and its 15-band wavelet scalogram; convolutions, transposed convolutions,
  GELU by Erf, attention-like MatMuls, detection and segmentation heads) and the seizure-probability network
  (spectrogram CNN and two LSTMs, opset 18). Their data: EEG-like signals (tests/realmodels/data/eeg.py) through the
  package's wavelet scalogram and z-scores (spindles) or its spectrogram pre-processing (seizures), with the
  package's own pre-processing code from the pinned archive.
- mne-icalabel 0.10.0 (BSD 3-Clause): ICLabel, Pion-Tonachini et al.'s classifier of EEG independent components
  (``mne_icalabel/iclabel/network/assets/ICLabelNet.onnx``, 11.6 MB as shipped: a PyTorch export at opset 14,
  2.9M parameters, the port of EEGLAB's ICLabel trained on the crowd-labelled components of the ICLabel dataset),
  run by the package's ONNX backend. Three CNN branches: three 4 x 4 stride-2 Conv + LeakyReLU(0.2) (128, 256,
  512 channels) on the 32 x 32 interpolated scalp map, three 1 x 3 Conv + LeakyReLU (128, 256, 1) on the 100-bin
  log power spectrum and on the 100-lag autocorrelation, the two 1-D features tiled to 4 x 4 (Transpose, Reshape,
  Concat), a 4 x 4 Conv over the 712 concatenated channels, a softmax of 7 and the mean over each component's
  four views (Reshape, Transpose, ReduceMean; 10 Conv, 9 LeakyRelu, 7 Transpose, 5 Concat, 4 Reshape, Softmax,
  Squeeze, ReduceMean). Its batch dim is dynamic and pinned by ``input_shapes`` to 4, one component's four views
  (the map, negated, mirrored left to right, both): ``topo`` (4, 1, 32, 32), ``psds`` and ``autocorr``
  (4, 1, 1, 100) float32 in, ``labels`` (1, 7) out, the probabilities of brain, muscle, eye, heart, line noise,
  channel noise and other. At a batch of 1 it cannot run: the view mean reshapes the rows to (4, -1). Its data: the
  package's ``get_iclabel_features`` and its ONNX backend's ``_run_iclabel`` (what
  ``iclabel_label_components(raw, ica, backend="onnx")`` runs) with the ``onnxruntime`` session a recorder, ``mne``
  stood in for by what the feature code reads of a ``Raw`` and a fitted ``ICA`` (:class:`EegRecording`,
  :class:`IcaDecomposition`). Each recording (:func:`eeg_recording`) is 60 s of a 32-channel 10-20 cap at 250 Hz,
  average-referenced and band-passed 1-100 Hz as ICLabel asks, mixed from twelve sources through dipole-like scalp
  maps (:data:`IC_SOURCES`): blinks and saccades (the eyes' dipoles before the frontal pole), the ECG (a far
  dipole below the head), 50 or 60 Hz mains on a few electrodes, a loose electrode's drift and pops, a temporalis
  muscle's 20-100 Hz bursts, and six cortical rhythms over 1/f background (occipital and parietal alpha, left and
  right mu, frontal theta, right parietal alpha); its ICA is the exact unmixing of those maps. One component per
  sample, each recording's twelve in order.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.eeg import background, with_seizure, with_spindles
from tests.realmodels.models.package_code import standing_in, wheel_modules

_SPINDLES, _SEIZURE = "brainmaze_eeg_models/spindles/", "brainmaze_eeg_models/seizure/"

BRAINMAZE = fetch.Wheel(
    requirement="brainmaze-eeg-models==0.1.0",
    filename="brainmaze_eeg_models-0.1.0-py3-none-any.whl",
    sha256="25ec131ac5ed39cf8032a07cc22f5744f13a589f45b10885726e096e41e1d104",
    members=(_SPINDLES + "_models/spindle-detector-eeg.onnx", _SEIZURE + "_models/modelB_full.onnx",
             _SPINDLES + "_cwt.py", _SEIZURE + "_seizure_detect.py"),
)

#: OpenSpindleNet reads 30 s windows at 250 Hz; the seizure network 30 s at 500 Hz as 59 half-second columns.
SPINDLE_RATE, SPINDLE_WINDOW = 250.0, 7500

SEIZURE_RATE, SEIZURE_SECONDS, SEIZURE_COLUMNS = 500, 30, 59


def _z(a: np.ndarray) -> np.ndarray:
    """Per-row z-score over the last axis, flat rows to 0 (the package's ``_normalize``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (a - a.mean(axis=-1, keepdims=True)) / a.std(axis=-1, keepdims=True)
    return np.nan_to_num(z, nan=0.0)


def spindle_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """raw_signal (N, 1, 7500) and spectrogram (N, 15, 7500) as ``SpindleDetector.predict_windows`` makes them
    for the 'eeg' model: z-scored window; window demeaned, the package's scalogram, z-scored per band."""
    rng = np.random.default_rng(seed)
    windows = np.stack([with_spindles(background(SPINDLE_WINDOW / SPINDLE_RATE, SPINDLE_RATE, rng), SPINDLE_RATE,
                                      rng, int(rng.integers(0, 6))) for _ in range(count)])
    with wheel_modules(BRAINMAZE, ("brainmaze_eeg_models.spindles._cwt",), ()):
        scalogram = sys.modules["brainmaze_eeg_models.spindles._cwt"].scalogram
        spec = _z(scalogram(windows - windows.mean(axis=-1, keepdims=True)))
    return {"raw_signal": _z(windows[:, None, :]).astype(np.float32), "spectrogram": spec.astype(np.float32)}


def seizure_spectrograms(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x (N, 100, 59): the package's ``preprocess_input`` of 30 s at 500 Hz, half of them with a seizure."""
    rng = np.random.default_rng(seed)
    signals = []
    for k in range(count):
        signal = background(SEIZURE_SECONDS, SEIZURE_RATE, rng)
        signals.append(with_seizure(signal, SEIZURE_RATE, rng) if k % 2 else signal)
    module = "brainmaze_eeg_models.seizure._seizure_detect"
    with wheel_modules(BRAINMAZE, (module,), ("brainmaze_eeg_models.runtime",
                                             "brainmaze_eeg_models.seizure._models")):
        x = sys.modules[module].preprocess_input(np.stack(signals), SEIZURE_RATE)
    return {"x": x.astype(np.float32)}


_npz = zoo._npz  # noqa: SLF001

_ICL = "mne_icalabel/"

_ICL_NET = _ICL + "iclabel/network/assets/ICLabelNet.onnx"

#: The package's modules its ICLabel path needs, in import order (``mne`` itself is stood in for by
#: :func:`iclabel_modules`: the feature code only reads what an ``mne.io.Raw`` and an ``mne.preprocessing.ICA`` hold).
_ICL_MODULES = ("utils.transform", "utils._checks", "iclabel._utils", "iclabel.features", "iclabel.network.utils",
                "iclabel.network.onnx")

ICLABEL = fetch.Wheel(
    requirement="mne-icalabel==0.10.0",
    filename="mne_icalabel-0.10.0-py3-none-any.whl",
    sha256="57c6821103d5db2869ee9fcd4df566495a2a0c4256e4c948804eb2219a8bdbf8",
    members=(_ICL_NET, *(f"{_ICL}{name.replace('.', '/')}.py" for name in _ICL_MODULES)),
)

#: ICLabel's seven classes, in the order of its output.
IC_CLASSES = ("brain", "muscle", "eye", "heart", "line_noise", "channel_noise", "other")

#: The sampling rate (Hz) and length (s) of the synthetic recordings: ICLabel reads 1-100 Hz, so 250 Hz is enough;
#: 60 s gives its PSD 119 half-overlapping 1 s windows and its autocorrelation 39 windows of 3 s.
EEG_RATE = 250

EEG_SECONDS = 60

#: A 32-channel cap (BrainVision's actiCAP layout) on an idealised spherical head: (colatitude from Cz, azimuth
#: from the nose towards the left ear), degrees, as the 10-20 system's 10 % and 20 % steps place them.
EEG_CAP = {
    "Fp1": (72, 18), "Fp2": (72, -18), "F7": (72, 54), "F3": (48, 40), "Fz": (36, 0), "F4": (48, -40),
    "F8": (72, -54), "FC5": (59, 69), "FC1": (32, 45), "FC2": (32, -45), "FC6": (59, -69), "T7": (72, 90),
    "C3": (36, 90), "Cz": (0, 0), "C4": (36, -90), "T8": (72, -90), "TP9": (106, 108), "CP5": (59, 111),
    "CP1": (32, 135), "CP2": (32, -135), "CP6": (59, -111), "TP10": (106, -108), "P7": (72, 126),
    "P3": (48, 140), "Pz": (36, 180), "P4": (48, -140), "P8": (72, -126), "PO9": (106, 144), "O1": (72, 162),
    "Oz": (72, 180), "O2": (72, -162), "PO10": (106, -144),
}

#: The independent components of every recording, in order: their kinds (what ICLabel should call them) and what
#: makes them (see :func:`eeg_sources`).
IC_SOURCES = (
    ("eye", "blinks"), ("eye", "saccades"), ("heart", "ecg"), ("line_noise", "mains"),
    ("channel_noise", "loose_electrode"), ("muscle", "temporalis"), ("brain", "occipital_alpha"),
    ("brain", "parietal_alpha"), ("brain", "left_mu"), ("brain", "right_mu"), ("brain", "frontal_theta"),
    ("brain", "right_parietal_alpha"),
)


def cap_positions() -> dict[str, np.ndarray]:
    """Unit-sphere positions of :data:`EEG_CAP` in MNE's head frame (x to the right ear, y to the nose, z up)."""
    positions = {}
    for name, (colatitude, azimuth) in EEG_CAP.items():
        theta, phi = np.radians(colatitude), np.radians(azimuth)
        positions[name] = np.array([-np.sin(theta) * np.sin(phi), np.sin(theta) * np.cos(phi), np.cos(theta)])
    return positions


def _toward(direction: np.ndarray) -> np.ndarray:
    return direction / np.linalg.norm(direction)


def _dipole_map(positions: np.ndarray, at: np.ndarray, moment: np.ndarray, depth: float = 0.55) -> np.ndarray:
    """The scalp potential of a current dipole at ``depth`` x the head radius under unit direction ``at`` with
    ``moment`` (an infinite-medium approximation: smooth, one or two poles), average-referenced."""
    offset = positions - depth * _toward(at)
    potential = offset @ moment / np.linalg.norm(offset, axis=1) ** 3
    return potential - potential.mean()


def eeg_topographies(rng: np.random.Generator) -> np.ndarray:
    """(32, 12) average-referenced scalp maps of :data:`IC_SOURCES`: the eyes' dipoles in front of and below the
    frontal pole (vertical for blinks, horizontal for saccades), the heart's far dipole (a gradient across the
    whole head), mains pick-up on a few high-impedance electrodes, one loose electrode, a temporalis muscle
    under T7 or T8 (shallow: a focal map), and cortical dipoles (occipital, parietal, left and right central,
    frontal midline, right parietal) of seeded depth and tilt."""
    positions = np.stack(list(cap_positions().values()))
    names = list(EEG_CAP)
    maps = []
    front = np.array([0.0, 1.15, -0.35])
    maps.append(_dipole_map(positions, front, np.array([0.0, 0.3, 1.0]), depth=1.0))
    maps.append(_dipole_map(positions, front, np.array([1.0, 0.0, 0.0]), depth=1.0))
    heart = np.array([0.25, -0.2, -2.5])
    maps.append(_dipole_map(positions, heart, _toward(np.array([-0.6, 0.3, -1.0])), depth=1.0))
    mains = np.zeros(len(names))
    for k in rng.choice(len(names), 3, replace=False):
        mains[k] = rng.uniform(0.5, 1.0)
    maps.append(mains - mains.mean())
    loose = np.zeros(len(names))
    loose[int(rng.integers(len(names)))] = 1.0
    maps.append(loose - loose.mean())
    side = 1.0 if rng.uniform() < 0.5 else -1.0
    maps.append(_dipole_map(positions, np.array([side, 0.1, -0.15]), np.array([side, 0.0, 0.3]), depth=0.93))
    cortex = ((0.0, -1.0, 0.25), (0.0, -0.8, 0.7), (0.75, 0.0, 0.66), (-0.75, 0.0, 0.66), (0.0, 0.7, 0.7),
              (-0.6, -0.6, 0.5))
    for at in cortex:
        where = _toward(np.array(at) + rng.normal(0, 0.08, 3))
        moment = _toward(where + rng.normal(0, 0.35, 3))
        maps.append(_dipole_map(positions, where, moment, depth=rng.uniform(0.65, 0.8)))
    topographies = np.stack(maps, axis=1)
    return topographies / np.abs(topographies).max(axis=0)


def _pink_noise(rng: np.random.Generator, n: int, rate: float, slope: float = 1.0, low: float = 0.5) -> np.ndarray:
    """Unit-deviation noise of power spectrum 1/f^slope above ``low`` Hz."""
    spectrum = np.fft.rfft(rng.normal(size=n))
    spectrum /= np.maximum(np.fft.rfftfreq(n, 1 / rate), low) ** (slope / 2)
    noise = np.fft.irfft(spectrum, n)
    return noise / noise.std()


def _band_noise(rng: np.random.Generator, n: int, rate: float, low: float, high: float) -> np.ndarray:
    """Unit-deviation noise band-limited to ``low``-``high`` Hz."""
    from scipy.signal import butter, sosfiltfilt

    noise = sosfiltfilt(butter(4, [low, high], "bandpass", fs=rate, output="sos"), rng.normal(size=n))
    return noise / noise.std()


def _bursts(rng: np.random.Generator, n: int, rate: float, per_second: float, low: float, high: float) -> np.ndarray:
    """A 0-1 envelope of bursts (``per_second`` on average) lasting ``low``-``high`` s, raised-cosine edges."""
    envelope = np.zeros(n)
    for start in np.cumsum(rng.exponential(1 / per_second, int(per_second * n / rate * 2) + 4)):
        length = int(rng.uniform(low, high) * rate)
        first = int(start * rate)
        if first >= n:
            break
        shape = np.sin(np.linspace(0, np.pi, length)) ** 2 * rng.uniform(0.5, 1.0)
        stop = min(n, first + length)
        envelope[first:stop] = np.maximum(envelope[first:stop], shape[: stop - first])
    return envelope


def eeg_sources(rng: np.random.Generator, n: int, rate: float = EEG_RATE) -> np.ndarray:
    """(12, n) time courses (uV at their maps' strongest electrode) of :data:`IC_SOURCES`: blinks (a 0.3-0.5 s
    lid potential, 80-200 uV, every 2-8 s), saccades (gaze held 0.4-3 s, then a 30 ms jump, 20-60 uV), the ECG
    (:func:`~tests.realmodels.models.biosignals_heart.ecg_like` at 5-15 uV), 50 or 60 Hz mains of drifting amplitude
    with its third harmonic, a loose electrode's drift and pops, a temporalis muscle's 20-100 Hz bursts (clenching),
    and cortical rhythms over 1/f background: occipital and parietal alpha (8-12 Hz) in waxing and waning bursts,
    left and right mu (9-11 Hz with its 20 Hz harmonic), frontal midline theta (5-7 Hz) and right parietal
    alpha."""
    from tests.realmodels.models.biosignals_heart import ecg_like

    t = np.arange(n) / rate
    sources = []
    blinks = np.zeros(n)
    at = rng.uniform(0.5, 3.0)
    while at < t[-1]:
        width = rng.uniform(0.3, 0.5)
        after = (t - at) / width
        blinks += rng.uniform(80, 200) * np.where((after > 0) & (after < 1), np.sin(np.pi * np.clip(after, 0, 1)) ** 2
                                                  * np.exp(-2 * np.clip(after, 0, 1)) * 2.3, 0.0)
        at += rng.uniform(2.0, 8.0)
    sources.append(blinks + 3 * _pink_noise(rng, n, rate))
    gaze, level, at = np.zeros(n), 0.0, 0.0
    while at < t[-1]:
        hold = rng.uniform(0.4, 3.0)
        level = float(np.clip(level + rng.uniform(-60, 60), -60, 60))
        gaze[(t >= at) & (t < at + hold)] = level
        at += hold
    kernel = np.hanning(int(0.03 * rate) + 2)
    sources.append(np.convolve(gaze, kernel / kernel.sum(), "same") + 2 * _pink_noise(rng, n, rate))
    ecg = ecg_like(n / rate + 1, int(rng.integers(1 << 30)), rate=int(rate))[:n]
    sources.append(rng.uniform(5, 15) * ecg / np.abs(ecg).max() + 0.3 * rng.normal(size=n))
    mains_hz = 50.0 if rng.uniform() < 0.5 else 60.0
    drift = 1 + 0.3 * np.sin(2 * np.pi * rng.uniform(0.02, 0.1) * t + rng.uniform(0, 6))
    sources.append(rng.uniform(5, 20) * drift * (np.sin(2 * np.pi * mains_hz * t) + 0.1 * np.sin(
        2 * np.pi * 3 * mains_hz * t + 1.0)) + 0.2 * rng.normal(size=n))
    walk = np.cumsum(rng.normal(size=n))
    walk -= np.convolve(walk, np.ones(int(2 * rate)) / int(2 * rate), "same")
    pops = np.zeros(n)
    for start in rng.choice(n - 1, int(rng.integers(3, 8)), replace=False):
        pops[start:] += rng.uniform(-80, 80) * np.exp(-(t[start:] - t[start]) / rng.uniform(0.1, 0.5))
    sources.append(0.3 * walk + pops + 15 * _pink_noise(rng, n, rate, 2.0) + 2 * rng.normal(size=n))
    clench = _bursts(rng, n, rate, 0.4, 0.5, 2.5)
    sources.append(rng.uniform(10, 25) * (0.15 + clench) * _band_noise(rng, n, rate, 20, 110))
    for low, high, harmonic, strength in ((8, 12, False, 3.0), (8, 12, False, 2.0), (9, 11, True, 2.0),
                                          (9, 11, True, 2.0), (5, 7, False, 1.5), (8, 12, False, 2.0)):
        centre = rng.uniform(low, high)
        rhythm = _band_noise(rng, n, rate, centre - 1.0, centre + 1.0)
        if harmonic:
            rhythm += 0.4 * _band_noise(rng, n, rate, 2 * centre - 1.5, 2 * centre + 1.5)
        envelope = 0.3 + _bursts(rng, n, rate, 0.5, 0.5, 3.0)
        sources.append(rng.uniform(8, 15) * (_pink_noise(rng, n, rate) + strength * envelope * rhythm) / 2)
    return np.stack(sources)


#: Stand-ins for the ``mne`` classes the package's feature code checks instances against.
class _BaseRaw:
    pass


class _BaseEpochs:
    pass


class _ICA:
    pass


class _Montage:
    def __init__(self, positions: dict[str, np.ndarray]) -> None:
        self.positions = positions

    def get_positions(self) -> dict[str, Any]:
        return {"ch_pos": dict(self.positions)}


class EegRecording(_BaseRaw):
    """What the feature code reads of an ``mne.io.Raw``: EEG channels in volts, average-referenced and filtered
    1-100 Hz (as ICLabel asks), ``info``, ``times``, ``get_data`` and a montage of :data:`EEG_CAP`."""

    def __init__(self, data: np.ndarray, rate: float) -> None:
        self.data, self.ch_names = data, list(EEG_CAP)
        self.info = {"sfreq": float(rate), "custom_ref_applied": 1, "highpass": 1.0, "lowpass": 100.0}
        self.times = np.arange(data.shape[1]) / rate

    def __contains__(self, kind: str) -> bool:
        return kind == "eeg"

    def get_data(self, picks: list[str] | None = None) -> np.ndarray:
        return self.data if picks is None else self.data[[self.ch_names.index(name) for name in picks]]

    def copy(self) -> EegRecording:
        return self

    def pick(self, picks: list[str]) -> EegRecording:
        assert list(picks) == self.ch_names
        return self

    def get_montage(self) -> _Montage:
        return _Montage(cap_positions())


class IcaDecomposition(_ICA):
    """What the feature code reads of a fitted extended-infomax ``mne.preprocessing.ICA``, for the decomposition
    that unmixes ``mixing`` (channels x components) exactly: the PCA basis spans the maps, ``unmixing_matrix_``
    (whitening included, as MNE stores it) inverts the maps within it."""

    def __init__(self, mixing: np.ndarray, data: np.ndarray) -> None:
        basis = np.linalg.svd(mixing, full_matrices=False)[0].T
        self.ch_names, self.n_components_ = list(EEG_CAP), mixing.shape[1]
        self.pca_components_ = basis
        self.pca_explained_variance_ = (basis @ data).var(axis=1)
        self.unmixing_matrix_ = np.linalg.inv(basis @ mixing)
        self.method, self.fit_params, self.current_fit, self.labels_ = "infomax", {"extended": True}, "raw", {}


def eeg_recording(seed: int) -> tuple[EegRecording, IcaDecomposition]:
    """A 60 s 32-channel recording at 250 Hz (volts) mixed from :func:`eeg_sources` through
    :func:`eeg_topographies`, 1 uV of sensor noise per electrode, average-referenced and band-passed 1-100 Hz as
    ICLabel asks, and its ICA decomposition into the twelve components."""
    from scipy.signal import butter, sosfiltfilt

    rng = np.random.default_rng(seed)
    n = EEG_RATE * EEG_SECONDS
    mixing = eeg_topographies(rng)
    channels = mixing @ eeg_sources(rng, n) + rng.normal(size=(len(EEG_CAP), n))
    channels -= channels.mean(axis=0)
    channels = sosfiltfilt(butter(4, [1.0, 100.0], "bandpass", fs=EEG_RATE, output="sos"), channels, axis=1)
    data = channels * 1e-6
    return EegRecording(data, EEG_RATE), IcaDecomposition(mixing, data * 1e6)


def _validate_type(item: Any, types_: Any, name: str = "", kind: str = "") -> None:
    if not isinstance(item, types_):
        raise TypeError(f"{name} must be {kind or types_}")


@contextmanager
def iclabel_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's ICLabel modules (:data:`_ICL_MODULES`) by dotted name under ``mne_icalabel``, ``mne`` a stand-in
    holding what they import (the base classes above, ``warn``, ``check_version``, ``_validate_type``,
    ``_has_eeg_average_ref_proj``); ``sys.modules`` is restored on exit."""
    import warnings

    stand_ins = {
        "mne": {"BaseEpochs": _BaseEpochs}, "mne.io": {"BaseRaw": _BaseRaw}, "mne.preprocessing": {"ICA": _ICA},
        "mne.utils": {"check_version": lambda *_: True, "warn": warnings.warn, "_validate_type": _validate_type},
        "mne._fiff": {}, "mne._fiff.proj": {"_has_eeg_average_ref_proj": lambda info, check_active=False: True},
    }
    with standing_in(ICLABEL, tuple(f"mne_icalabel.{name}" for name in _ICL_MODULES), stand_ins):
        yield {name: sys.modules[f"mne_icalabel.{name}"] for name in _ICL_MODULES}


class _IclabelSession:
    """Stands in for the ``onnxruntime.InferenceSession`` the package opens on ``ICLabelNet.onnx``: keeps each
    feed and answers uniform probabilities."""

    feeds: list[dict[str, np.ndarray]] = []

    def __init__(self, path: Any, *args: Any, **kwargs: Any) -> None:
        self.path = path

    def run(self, names: Any, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        type(self).feeds.append({key: np.array(value, copy=True) for key, value in feed.items()})
        return [np.full((len(feed["topo"]), len(IC_CLASSES)), 1 / len(IC_CLASSES), np.float32)]


@contextmanager
def iclabel_labeller() -> Iterator[Any]:
    """``feed(raw, ica) -> {"topo": (4k, 1, 32, 32), "psds": (4k, 1, 1, 100), "autocorr": (4k, 1, 1, 100)}``: what
    the package's ``iclabel_label_components(raw, ica, backend="onnx")`` feeds ``ICLabelNet.onnx`` for the k
    components: ``get_iclabel_features`` (the topographic map interpolated on a 32 x 32 grid, the median 1 s
    log-PSD of 1-100 Hz and the Welch autocorrelation over 1 s, each scaled by 0.99) and the ONNX backend's
    ``_run_iclabel`` (each map also negated, mirrored left to right and both: four rows per component, the
    component's rows every k-th), with the session a recorder. ``feed.modules`` are the package's modules."""
    with iclabel_modules() as modules:
        features, runner = modules["iclabel.features"], modules["iclabel.network.onnx"]
        runner.ort = types.SimpleNamespace(InferenceSession=_IclabelSession)
        net = fetch.model_file(ICLABEL, _ICL_NET)
        runner.files = lambda package: net.parents[1]

        def feed(raw: EegRecording, ica: IcaDecomposition) -> dict[str, np.ndarray]:
            _IclabelSession.feeds = []
            runner._run_iclabel(*features.get_iclabel_features(raw, ica))  # noqa: SLF001
            (fed,) = _IclabelSession.feeds
            return fed

        feed.modules = modules  # type: ignore[attr-defined]
        yield feed


#: The batch of one ICLabel evaluation: a component's four views (its map, negated, mirrored, both), which the
#: network averages into one row of seven probabilities.
IC_VIEWS = 4


def component_views(fed: dict[str, np.ndarray], component: int) -> dict[str, np.ndarray]:
    """The four rows of ``component`` in a feed of k components (rows ``component + v * k``): what the package feeds
    for that component alone, the network's (4, ...) input."""
    count = len(fed["topo"]) // IC_VIEWS
    return {key: value[component::count] for key, value in fed.items()}


def ic_features(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """topo (N, 4, 1, 32, 32), psds and autocorr (N, 4, 1, 1, 100) float32: one component per sample, each
    recording's twelve in order (eyes, heart, mains, loose electrode, muscle, six cortical), as the package's
    ``iclabel_label_components`` feeds them."""
    rows: dict[str, list[np.ndarray]] = {"topo": [], "psds": [], "autocorr": []}
    rng = np.random.default_rng(seed)
    with iclabel_labeller() as feed:
        fed: dict[str, np.ndarray] = {}
        for k in range(count):
            if k % len(IC_SOURCES) == 0:
                fed = feed(*eeg_recording(int(rng.integers(1 << 30))))
            for key, value in component_views(fed, k % len(IC_SOURCES)).items():
                rows[key].append(value)
    return {key: np.stack(value) for key, value in rows.items()}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("eeg_spindles", BRAINMAZE, _SPINDLES + "_models/spindle-detector-eeg.onnx",
                 "OpenSpindleNet's scalp-EEG sleep-spindle detector (brainmaze-eeg-models), PyTorch 2.5 export, "
                 "opset 17: raw 30 s window and its wavelet scalogram in, Conv/ConvTranspose, GELU by Erf, "
                 "detection and segmentation heads; EEG-like windows with spindles",
                 _npz(spindle_windows), {"input_shapes": {"raw_signal": [1, 1, SPINDLE_WINDOW],
                                                         "spectrogram": [1, 15, SPINDLE_WINDOW]}}),
    zoo.ZooModel("eeg_seizure", BRAINMAZE, _SEIZURE + "_models/modelB_full.onnx",
                 "brainmaze's seizure-probability network, PyTorch 2.14 export, opset 18: spectrogram CNN, two "
                 "LSTMs, softmax; 30 s EEG-like spectrograms, half with a seizure", _npz(seizure_spectrograms),
                 {"input_shapes": {"x": [1, 100, SEIZURE_COLUMNS]}}),
    zoo.ZooModel(
        "iclabel",
        ICLABEL,
        _ICL_NET,
        "mne-icalabel's ICLabel network (ICLabelNet.onnx as shipped: a PyTorch export at opset 14) that labels EEG "
        "independent components as brain, muscle, eye, heart, line noise, channel noise or other: three CNN "
        "branches (three 4x4 stride-2 Conv + LeakyReLU on the 32x32 scalp map, three 1x3 Conv + LeakyReLU on the "
        "100-bin PSD and on the autocorrelation, tiled to 4x4 by Transpose, Reshape and Concat), a 4x4 Conv over "
        "the 712 concatenated channels, softmax, and the mean over the component's four views (ReduceMean); "
        "(4, 1, 32, 32) maps and (4, 1, 1, 100) spectra of a "
        "synthetic 32-channel recording's components, as the package's iclabel_label_components feeds them",
        _npz(ic_features),
        {"input_shapes": {"topo": [IC_VIEWS, 1, 32, 32], "psds": [IC_VIEWS, 1, 1, 100],
                          "autocorr": [IC_VIEWS, 1, 1, 100]}},
    ),
)
