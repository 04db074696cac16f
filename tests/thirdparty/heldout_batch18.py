"""Held-out models, batch 18: three network families and three domains no batch had, from three packages the zoo
does not pin, registered before any vendor tool saw them.

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
  channel noise and other. At batch 1 it cannot run: the view mean reshapes the rows to (4, -1).
- attacut 1.0.6 (MIT): AttaCut, Chormai et al.'s Thai word tokenizer, its character model ``attacut-c``
  (``attacut/artifacts/attacut-c/model.pth``, 696 kB, a PyTorch state dict of 174k parameters trained on the
  BEST-2010 corpus, with ``characters.json`` and ``params.yml``: ``emb:48|conv:196|l1:32``). The package's
  ``seq_ch_conv.Model``: a character embedding, three parallel Conv1d of 196 filters (width 3; width 5 dilated 3;
  width 9 dilated 2) whose maximum is taken, Linear 32 + ReLU and Linear 1: a logit per character that a word
  starts there. Built by the package's ``Tokenizer("attacut-c")`` and exported by ``torch.onnx.export``
  (TorchScript, opset 17, static shapes; 698 kB: Gather, 3 Conv, ReduceMax, 2 MatMul, Relu): ``characters``
  (1, 128) int64 character ids in, ``boundary_logits`` (1, 128) out.
- riann 0.2.0 (Apache 2.0): RIANN, Weber, Guehmann and Seel's robust IMU-based attitude neural network
  (``riann/riann.onnx``, 1.47 MB as shipped: a PyTorch 1.7 export at opset 12, 367k parameters, trained on
  several public IMU data sets with optical motion capture truth at varied sampling rates): the readings
  standardized (Sub, Div), two ONNX ``GRU`` layers of 200 (linear before reset) started from a given state, a
  1 x 1 Conv head of 4 and the quaternion normalized (Mul, ReduceSum, Sqrt, Div). Its ``sequence`` dim is pinned
  by ``input_shapes`` to 1, the package's real-time ``predict_step``: ``input`` (1, 1, 7) float32 (the
  accelerometer in m/s^2, the gyroscope in rad/s, the sample period in s) and ``h0`` (2, 1, 1, 200), the state
  carried from the step before, a whole input in each sample, in; ``output`` (1, 1, 4), the sensor's attitude as
  a w, x, y, z unit quaternion (heading unobservable, inclination from gravity), and ``hn`` out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its model
replaced by a recorder of what it is fed:

- ICLabel: the package's ``get_iclabel_features`` and its ONNX backend's ``_run_iclabel`` (what
  ``iclabel_label_components(raw, ica, backend="onnx")`` runs) with the ``onnxruntime`` session a recorder, ``mne``
  stood in for by what the feature code reads of a ``Raw`` and a fitted ``ICA`` (:class:`EegRecording`,
  :class:`IcaDecomposition`). Each recording (:func:`eeg_recording`) is 60 s of a 32-channel 10-20 cap at 250 Hz,
  average-referenced and band-passed 1-100 Hz as ICLabel asks, mixed from twelve sources through dipole-like scalp
  maps (:data:`IC_SOURCES`): blinks and saccades (the eyes' dipoles before the frontal pole), the ECG (a far
  dipole below the head), 50 or 60 Hz mains on a few electrodes, a loose electrode's drift and pops, a temporalis
  muscle's 20-100 Hz bursts, and six cortical rhythms over 1/f background (occipital and parietal alpha, left and
  right mu, frontal theta, right parietal alpha); its ICA is the exact unmixing of those maps. One component per
  sample, each recording's twelve in order.
- AttaCut: the package's ``Tokenizer("attacut-c").tokenize`` (``CharacterSeqDataset.make_feature``: the ids of
  the model's ``characters.json``) with the network a recorder, padded with ``<PAD>`` to 128, on lines of one to
  four Thai sentences of everyday words written here (:data:`THAI_SENTENCES`, segmented into dictionary words)
  joined by spaces.
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

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch15 import Exported

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

_ATTA = "attacut/"
#: The character model's artifacts, as the wheel ships them under ``attacut/artifacts``.
_ATTA_C = _ATTA + "artifacts/attacut-c/"
#: The package's modules its tokenizer needs, in import order (``attacut.logger``, whose import configures the
#: root logger, and ``ssg``, the syllable segmenter of the syllable model, are stood in for).
_ATTA_MODULES = ("minpythainlp", "utils", "preprocessing", "dataloaders", "models", "models.seq_ch_conv",
                 "artifacts", "tokenizer")
_ATTA_PACKAGES = ("models", "artifacts")
ATTACUT = fetch.Wheel(
    requirement="attacut==1.0.6",
    filename="attacut-1.0.6-py3-none-any.whl",
    sha256="d04193149476d1c371c7d0177a4363ba70d1a6d6f7d2246a577669eb4ea93f2c",
    members=(
        _ATTA_C + "model.pth",
        _ATTA_C + "params.yml",
        _ATTA_C + "characters.json",
        *(f"{_ATTA}{name.replace('.', '/')}{'/__init__' if name in _ATTA_PACKAGES else ''}.py"
          for name in _ATTA_MODULES),
    ),
)

_RIANN = "riann/"
RIANN = fetch.Wheel(
    requirement="riann==0.2.0",
    filename="riann-0.2.0-py3-none-any.whl",
    sha256="e7292f567630ce3b30c031c49dde9c9d1e98769efc6d513cdeb52b243743022d",
    members=(_RIANN + "riann.onnx", _RIANN + "riann.py"),
)
WHEELS = (ICLABEL, ATTACUT, RIANN)

#: The ONNX opset of this batch's exports.
OPSET = 17


# --------------------------------------------------------------------------------------------- ICLabel

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
    (:func:`~tests.thirdparty.heldout_batch15.ecg_like` at 5-15 uV), 50 or 60 Hz mains of drifting amplitude with
    its third harmonic, a loose electrode's drift and pops, a temporalis muscle's 20-100 Hz bursts (clenching),
    and cortical rhythms over 1/f background: occipital and parietal alpha (8-12 Hz) in waxing and waning bursts,
    left and right mu (9-11 Hz with its 20 Hz harmonic), frontal midline theta (5-7 Hz) and right parietal
    alpha."""
    from tests.thirdparty.heldout_batch15 import ecg_like

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


def _member(wheel: fetch.Wheel, dotted: str) -> str:
    """The pinned member of ``wheel`` that is module ``dotted``: ``a/b.py`` or a package's ``a/b/__init__.py``."""
    path = dotted.replace(".", "/")
    return path + ".py" if path + ".py" in wheel.members else path + "/__init__.py"


@contextmanager
def _standing_in(wheel: fetch.Wheel, real: tuple[str, ...], stand_ins: dict[str, dict[str, Any]]) -> Iterator[None]:
    """``real`` modules of ``wheel`` (dotted names, in import order; a package by its ``__init__.py``) imported
    from the cache after ``stand_ins``: modules made here holding only the named attributes, for what the package's
    code imports but does not need to run; parent packages are bare; ``sys.modules`` is restored on exit."""
    for member in wheel.members:
        fetch.model_file(wheel, member)
    tops = {name.split(".")[0] for name in (*real, *stand_ins)}
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}

    def install(name: str, module: types.ModuleType) -> None:
        sys.modules[name] = module
        parent, _, leaf = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], leaf, module)

    try:
        parents = {".".join(n.split(".")[:i]) for n in (*real, *stand_ins) for i in range(1, n.count(".") + 1)}
        for name in sorted(parents, key=len):
            if name not in stand_ins:
                bare = types.ModuleType(name)
                bare.__path__ = []  # type: ignore[attr-defined]
                install(name, bare)
        for name, attributes in stand_ins.items():
            made = types.ModuleType(name)
            made.__path__ = []  # type: ignore[attr-defined]
            made.__dict__.update(attributes)
            install(name, made)
        for dotted in real:
            member = _member(wheel, dotted)
            path = fetch.model_file(wheel, member)
            package = [str(path.parent)] if member.endswith("__init__.py") else None
            spec = importlib.util.spec_from_file_location(dotted, path, submodule_search_locations=package)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            install(dotted, module)
            spec.loader.exec_module(module)
        yield
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


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
    with _standing_in(ICLABEL, tuple(f"mne_icalabel.{name}" for name in _ICL_MODULES), stand_ins):
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


# --------------------------------------------------------------------------------------------- AttaCut

#: The character model (``attacut-c``: characters only; ``attacut-sc``, the default, also needs ``ssg``'s CRF
#: syllable segmenter) and the fixed length fed (characters): a line is padded with ``<PAD>``, id 0, whose
#: embedding is zero, as the package's own ``collate_fn`` pads a batch: the convolutions see the zeros their own
#: padding would give, so the logits of the line's characters do not change.
THAI_MODEL = "attacut-c"
THAI_LENGTH = 128
#: The package's default threshold on the sigmoid of a character's logit: at or above it a word starts there.
THAI_THRESHOLD = 0.5
#: Thai sentences of everyday words written here, segmented into words by ``|`` as BEST-2010 (the corpus AttaCut
#: was trained on) segments them: a compound that keeps its parts' meanings is split (ภาษา|อังกฤษ), a word whose
#: meaning is not its parts' is kept whole (นักเรียน, โรงเรียน, แม่น้ำ).
THAI_SENTENCES = (
    "ผม|ไป|ตลาด|กับ|แม่|ทุก|เช้า",
    "เด็ก|กำลัง|เล่น|ฟุตบอล|ใน|สนาม",
    "แมว|ตัว|นี้|นอน|อยู่|บน|โต๊ะ",
    "เขา|เรียน|ภาษา|อังกฤษ|ที่|มหาวิทยาลัย",
    "ร้าน|นี้|ขาย|กาแฟ|และ|ขนม|อร่อย",
    "พรุ่งนี้|ฝน|อาจ|จะ|ตก|หนัก",
    "แม่|ทำ|อาหาร|ให้|ทุก|คน|กิน",
    "ถนน|สาย|นี้|รถ|ติด|ทุก|วัน",
    "ฉัน|อยาก|ไป|เที่ยว|ทะเล|กับ|เพื่อน",
    "นักเรียน|ต้อง|ส่ง|การบ้าน|ก่อน|เที่ยง",
    "หมอ|บอก|ให้|ดื่ม|น้ำ|มาก|ขึ้น",
    "บ้าน|ของ|เรา|อยู่|ใกล้|แม่น้ำ",
    "พ่อ|ซื้อ|หนังสือ|ใหม่|ให้|น้อง|สาม|เล่ม",
    "เมื่อวาน|เรา|ดู|หนัง|จน|ดึก",
    "ประเทศ|ไทย|มี|อาหาร|หลาย|ชนิด",
    "เธอ|ร้อง|เพลง|เพราะ|มาก",
    "ราคา|ของ|ผัก|สูง|ขึ้น|ทุก|ปี",
    "ชาวนา|ปลูก|ข้าว|ตอน|ฝน|ตก",
    "โรงเรียน|ปิด|เพราะ|น้ำ|ท่วม",
    "เขา|ขับ|รถ|ไป|หา|เพื่อน|ที่|เชียงใหม่",
    "ต้นไม้|ใน|สวน|ออก|ดอก|สวย",
    "เรา|ควร|ล้าง|มือ|ก่อน|กิน|ข้าว",
    "ลูก|ของ|ฉัน|ชอบ|วาด|รูป",
    "ตำรวจ|จับ|ขโมย|ได้|แล้ว",
    "คอมพิวเตอร์|เครื่อง|นี้|เปิด|ไม่|ติด",
    "ฉัน|จะ|โทร|หา|คุณ|พรุ่งนี้",
    "ทะเล|มี|คลื่น|แรง|มาก",
    "คน|จำนวน|มาก|รอ|รถ|อยู่|ที่|ป้าย",
    "นก|บิน|กลับ|รัง|ตอน|เย็น",
    "เขา|เขียน|จดหมาย|ถึง|แม่|ทุก|เดือน",
)


def thai_line(seed: int, length: int = THAI_LENGTH) -> list[str]:
    """A line of one to four of :data:`THAI_SENTENCES` (seeded, no repeats) joined by spaces, as Thai separates
    sentences, at most ``length`` characters: its words (a space is one), which joined give the text."""
    rng = np.random.default_rng(seed)
    words: list[str] = []
    for index in rng.permutation(len(THAI_SENTENCES))[: int(rng.integers(1, 5))]:
        sentence = THAI_SENTENCES[index].split("|")
        if len("".join(words)) + 1 + len("".join(sentence)) > length:
            break
        words += [*([" "] if words else []), *sentence]
    return words


def word_starts(words: list[str]) -> np.ndarray:
    """The character offsets at which ``words`` start (the first, 0, included)."""
    return np.cumsum([0, *map(len, words[:-1])])


@contextmanager
def thai_tokenizer() -> Iterator[Any]:
    """``feed(text) -> (1, 128) int64``: what the package's ``Tokenizer("attacut-c").tokenize(text)`` feeds its
    network (``CharacterSeqDataset.make_feature``: each character's id in the model's ``characters.json``, any
    punctuation ``<PUNC>``, any other unknown character ``<UNK>``), padded with ``<PAD>`` to 128, with the
    network a recorder. ``feed.tokenizer`` is the package's tokenizer (its real network), ``feed.modules`` its
    modules."""
    import logging

    stand_ins = {"attacut.logger": {"get_logger": logging.getLogger}, "ssg": {}}
    modules = tuple(f"attacut.{name}" for name in _ATTA_MODULES)
    with _standing_in(ATTACUT, modules, stand_ins):
        tokenizer = sys.modules["attacut.tokenizer"].Tokenizer(THAI_MODEL)
        fed: list[np.ndarray] = []

        def record(inputs: Any) -> Any:
            import torch

            ids, _ = inputs
            fed.append(ids.numpy().copy())
            return torch.zeros(ids.shape[1])

        def feed(text: str) -> np.ndarray:
            network, tokenizer.model = tokenizer.model, record
            try:
                tokenizer.tokenize(text)
            finally:
                tokenizer.model = network
            (ids,) = fed
            fed.clear()
            assert ids.shape[1] <= THAI_LENGTH, ids.shape
            return np.pad(ids, ((0, 0), (0, THAI_LENGTH - ids.shape[1])))

        feed.tokenizer = tokenizer  # type: ignore[attr-defined]
        feed.modules = {name: sys.modules[f"attacut.{name}"] for name in _ATTA_MODULES}  # type: ignore[attr-defined]
        yield feed


def thai_lines(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """characters (N, 128) int64: Thai lines of one to four sentences, as the package's tokenizer feeds them."""
    rng = np.random.default_rng(seed)
    with thai_tokenizer() as feed:
        rows = [feed("".join(thai_line(int(rng.integers(1 << 30)))))[0] for _ in range(count)]
    return {"characters": np.stack(rows)}


def export_attacut(path: Path) -> None:
    """``torch.onnx.export`` of the package's ``attacut-c`` network (TorchScript exporter, opset 17, static shapes)
    at (1, 128) character ids, its input named ``characters`` and its output ``boundary_logits`` (1, 128): the
    network's per-character logits reshaped to the batch (the package takes their sigmoid)."""
    import torch

    with thai_tokenizer() as feed:
        network = feed.tokenizer.model

    class Boundaries(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, characters: torch.Tensor) -> torch.Tensor:
            return self.network((characters, None)).reshape(characters.shape)

    with torch.no_grad():
        torch.onnx.export(Boundaries().eval(), (torch.ones((1, THAI_LENGTH), dtype=torch.int64),), str(path),
                          opset_version=OPSET, dynamo=False, do_constant_folding=True, input_names=["characters"],
                          output_names=["boundary_logits"])


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"



# --------------------------------------------------------------------------------------------- RIANN

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
    with _standing_in(RIANN, ("riann.riann",), {}):
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

# Batch 18, held out: added before any vendor tool saw them.
BATCH18_MODELS: tuple[zoo.ZooModel, ...] = (
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
    Exported(
        "attacut_thai",
        ATTACUT,
        _ATTA_C + "model.pth",
        "AttaCut's attacut-c Thai word tokenizer, a PyTorch state dict built by the package's seq_ch_conv Model and "
        "exported by torch.onnx at opset 17: a character embedding (Gather), three parallel Conv1d of widths 3, 5 "
        "and 9 (dilations 1, 3, 2), their max, two Linear layers and a per-character word-start logit; (1, 128) "
        "int64 character ids of Thai lines, as the package's tokenize feeds them",
        _npz(thai_lines),
        {"input_shapes": {"characters": [1, THAI_LENGTH]}},
        export=export_attacut,
        tools=_torch_tools,
    ),
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
)
