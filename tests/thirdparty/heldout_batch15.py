"""Held-out models, batch 15: three network families and three domains no batch had, from three packages the zoo
does not pin, registered before any vendor tool saw them.

- ecg-quality 0.2.0: the ECG signal-quality graders of ``ECGQualityChecker``, shipped as Keras 2.12 HDF5 files;
  ``ecg_quality/models/OSCNN2s.h5`` (472 kB, 51k parameters) is an Omni-Scale CNN: a Functional model of three
  blocks of parallel ``Conv1D`` branches (the first two with 31: kernel sizes 1, 2 and every prime up to 113; the
  last with sizes 1 and 2), each joined by ``Concatenate`` then BatchNorm + ReLU, global average pooling and a
  sigmoid ``Dense``: 64 convolutions in all. It reads a 2 s window of single-lead ECG at 250 Hz in mV,
  (None, 500, 1) float32 (input ``input_1``), and returns one score in [0, 1]: the package calls below 0.1 clean
  (all waves visible), below 0.7 noisy but QRS visible, above that unusable.
- fracast 0.1.0: Fracast-0, an 85k-parameter zero-shot time-series forecaster (``fracast/weights/``: the W8
  release ``model.int8.safetensors`` with ``w8_manifest.json`` and ``config.json``, 113 kB, int8 weights with
  per-channel scales that the package's ``load_fracast`` dequantizes to float32; no ONNX ships). Attention-free:
  one causal dilated depthwise-separable convolution block with SwiGLU and RMSNorm, shared across a ladder of ten
  dilations (1 to 512) with FiLM scale conditioning, over 2048 steps; a periodogram (an rFFT, Bonferroni-filtered
  local maxima, TopK of 4 periods, Round) feeds sin/cos phase features; a gather head folds the context by its
  primary period into 16 phase bins (one-hot phase indices, a batched MatMul, GatherElements) and a causal
  convolution over the 48-step horizon returns 9 quantiles (0.1 to 0.9). Exported here with ``torch.onnx.export``
  (dynamo, opset 18, one file; about 2 MB, two ``DFT``, two ``TopK``, ``IsNaN``/``IsInf``): ``values`` (1, 1, 2048)
  float32 and ``valid`` (1, 1, 2048) bool in, ``quantiles`` (1, 48, 9) float32 out, the call ``_predict_rows``
  makes (the coverage input it passes is ``valid`` as float, computed in the graph).
- open-rppg 0.1.1: PhysNet, a 3-D CNN for remote photoplethysmography (the blood-volume pulse read from the colour
  of a face in video), trained on RLAP (``rppg/weights/physnet.rlap.weights.h5``, Keras 3 weights, 1.7 MB, 770k
  parameters; the package's ``PhysNet`` class builds the network and ``load_PhysNet`` loads them). Its ``call``
  standardizes the clip (mean and deviation over time and space), then Conv3D + BatchNorm + ReLU blocks with
  spatial and spatio-temporal MaxPool3D, two Conv3DTranspose (4, 1, 1) stride-2 temporal upsamplings with ELU, a
  spatial AvgPool3D and a 1x1x1 Conv3D, and standardizes the 128-sample pulse it returns. Built with Keras's
  TensorFlow backend under the float32 policy (the package imports it with JAX and sets ``mixed_float16``; the
  weights are float32) and exported by ``model.export(format="onnx")`` (tf2onnx, opset 17; 3 MB): ``frames``
  (1, 128, 32, 32, 3) float32 NDHWC in, ``bvp`` (1, 128) out.

Data are made as each package feeds its model, with the package's own code from the pinned wheel where it runs
here, its model replaced by a recorder of what it is fed:

- ECG: ``ECGQualityChecker(model="oscnn2s")`` (its defaults: 250 Hz, cleaning on, the window range check on, a
  stride of 250 samples) with ``tf_model.tf_model`` replaced by a recorder and neurokit2's ``ecg_clean`` (not in
  the wheel) by :func:`ecg_clean`, neurokit2 0.2.4's default "neurokit" method with scipy (a 0.5 Hz fifth-order
  Butterworth high-pass by ``sosfiltfilt``, then its 50 Hz powerline filter: a 5-sample moving average by
  ``filtfilt``). Records of ``ECG_SECONDS`` of synthetic ECG (:func:`ecg_like`: P, Q, R, S and T waves as
  Gaussians per beat at 50-110 beats a minute with respiratory sinus arrhythmia, R about 1.1 mV) with noise of a
  level cycled per sample (:data:`ECG_LEVELS`: none, light muscle noise and baseline wander, heavier, and electrode
  motion artefacts at three strengths); one of the windows the checker feeds is kept per record.
- Fracast: ``FracastModel._predict_rows`` (its min-max normalization of the last 2048 steps, the left zero padding
  and ``valid`` mask of a shorter context, NaN gaps masked) with ``core`` and ``head`` replaced by recorders, on
  series of six kinds cycled per sample (:func:`series_like`: hourly electricity load, hourly road traffic, hourly
  temperature, daily retail sales, monthly airline passengers, a random walk), some with a shorter context or a
  gap of missing steps.
- PhysNet: the package's video path (``update_face`` then its inference thread: each face crop resized to 32 x 32
  with OpenCV's ``INTER_AREA``, 128 frames stacked and divided by 255) cannot run here (OpenCV, PyAV and JAX are
  not dependencies), so it is followed: 128 frames at 30 fps of the face in scikit-image's ``astronaut``
  photograph (tests/formats/images.py) in a fixed box shaped as the package's BlazeFace box (0.9 x the face width,
  1.1 x its height), the skin pixels darkened by a synthetic blood-volume pulse (systolic and dicrotic peaks, a
  seeded heart rate of 50-120 beats a minute with variability, 0.3-1.5 % of the green channel, less in red and
  blue), with seeded head motion, an illumination drift and sensor noise; each crop resized with PIL's box filter
  (area averaging, as ``INTER_AREA`` does when shrinking) and divided by 255.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules

_ECG_H5 = "ecg_quality/models/OSCNN2s.h5"
ECG_QUALITY = fetch.Wheel(
    requirement="ecg-quality==0.2.0",
    filename="ecg_quality-0.2.0-py3-none-any.whl",
    sha256="bc9713b2ccc4ee65137f47f2293f83bb2ab2f8a848e016b0329c453264e38bba",
    members=(_ECG_H5, "ecg_quality/ECGQualityChecker.py", "ecg_quality/utils.py"),
)
_FRA = "fracast/"
#: The package's modules ``fracast.inference`` needs, in import order.
_FRACAST_MODULES = ("fracast._core.quant", "fracast._core.periodic.official_encoding",
                    "fracast._core.periodic.official_periodogram", "fracast._core.periodic.encoder",
                    "fracast._core.periodic.seasonal_fill", "fracast._core.self_similar_block",
                    "fracast._core.future_conv", "fracast._core.gather_head", "fracast._core.model",
                    "fracast._core.safetensors_io", "fracast.inference")
FRACAST = fetch.Wheel(
    requirement="fracast==0.1.0",
    filename="fracast-0.1.0-py3-none-any.whl",
    sha256="54a2c442ffeb8e1763733d37415326df122e0580640d6c3d02211883429fb892",
    members=(_FRA + "weights/model.int8.safetensors", _FRA + "weights/w8_manifest.json",
             _FRA + "weights/config.json", *(m.replace(".", "/") + ".py" for m in _FRACAST_MODULES)),
)
_RPPG = "rppg/"
OPEN_RPPG = fetch.Wheel(
    requirement="open-rppg==0.1.1",
    filename="open_rppg-0.1.1-py3-none-any.whl",
    sha256="8283c0b54eeb53524d866436147d8112ee26f130730fb848cafc5b39d89249c6",
    members=(_RPPG + "weights/physnet.rlap.weights.h5", _RPPG + "models.py", _RPPG + "models_code/FacePhys.py"),
)
WHEELS = (ECG_QUALITY, FRACAST, OPEN_RPPG)


# --------------------------------------------------------------------------------------------- exported models


@dataclass(frozen=True)
class Exported(zoo.ZooModel):
    """A held-out model the wheel ships as weights (``member``) that the package's own code builds: ``export(path)``
    writes it once to ONNX in the cache, under ``tools()`` (the exporting libraries' versions)."""

    export: Callable[[Path], Any] = field(default=lambda path: None)
    tools: Callable[[], str] = field(default=lambda: "")

    @property
    def suffix(self) -> str:
        return ".onnx"

    def fetch(self) -> Path:
        folder = fetch.cache_dir() / "exports" / self.tools() / self.wheel.sha256[:12]
        out = folder / f"{self.name}.onnx"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".part.onnx")
            self.export(tmp)
            tmp.replace(out)
        return out


# --------------------------------------------------------------------------------------------- ECG quality

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


# --------------------------------------------------------------------------------------------- Fracast

#: The series kinds, cycled over the samples (hourly, daily and monthly steps).
SERIES_KINDS = ("hourly_load", "hourly_traffic", "hourly_temperature", "daily_sales", "monthly_passengers",
                "random_walk")
#: Fracast's context and horizon (``config.json``: ``W`` and ``horizon``).
FRACAST_CONTEXT = 2048
FRACAST_HORIZON = 48


def _ar1(rng: np.random.Generator, length: int, phi: float, scale: float) -> np.ndarray:
    noise = rng.normal(0, scale, length)
    out = np.empty(length)
    out[0] = noise[0]
    for i in range(1, length):
        out[i] = phi * out[i - 1] + noise[i]
    return out


def series_like(kind: str, length: int, seed: int) -> np.ndarray:
    """``length`` float64 steps of one of :data:`SERIES_KINDS`: seasonal patterns at their natural periods (24 and
    168 hours, 7 days, 12 months) with trends, autocorrelated noise and a seeded phase."""
    rng = np.random.default_rng(seed)
    t = np.arange(length) + int(rng.integers(0, 24 * 7))
    if kind == "hourly_load":  # MW: a morning and an evening peak, lower at weekends, a slow trend
        hour, weekend = t % 24, (t // 24) % 7 >= 5
        daily = 0.6 * np.exp(-0.5 * ((hour - 9) / 2.5) ** 2) + 0.9 * np.exp(-0.5 * ((hour - 19) / 2.5) ** 2)
        return 5 + daily * np.where(weekend, 0.6, 1.0) - 0.35 * weekend + 3e-4 * t + _ar1(rng, length, 0.9, 0.04)
    if kind == "hourly_traffic":  # vehicles an hour: rush hours on weekdays, a midday hump at weekends
        hour, weekend = t % 24, (t // 24) % 7 >= 5
        weekday = 300 * np.exp(-0.5 * ((hour - 8) / 1.2) ** 2) + 350 * np.exp(-0.5 * ((hour - 17) / 1.5) ** 2)
        rate = 40 + np.where(weekend, 200 * np.exp(-0.5 * ((hour - 14) / 3) ** 2), weekday + 80 * (hour > 6))
        return rng.poisson(rate).astype(np.float64)
    if kind == "hourly_temperature":  # degrees C: a daily cycle on a seasonal drift and weather fronts
        return (12 + 8 * np.sin(2 * np.pi * (t / (24 * 365) + rng.uniform(0, 1)))
                + 5 * np.sin(2 * np.pi * (t % 24 - 9) / 24) + _ar1(rng, length, 0.98, 0.3))
    if kind == "daily_sales":  # units: a weekly profile, growth, multiplicative noise, a few promotion days
        profile = np.array([0.8, 0.85, 0.9, 1.0, 1.2, 1.5, 1.1])[t % 7]
        promo = 1 + 0.6 * (rng.random(length) < 0.02)
        return 100 * profile * (1 + 5e-4 * t) * promo * rng.lognormal(0, 0.08, length)
    if kind == "monthly_passengers":  # thousands: growth with a summer peak that grows with it
        season = np.array([0.9, 0.87, 1.0, 0.97, 0.98, 1.1, 1.23, 1.22, 1.05, 0.92, 0.8, 0.9])[t % 12]
        return (120 + 2.5 * (t - t[0])) * season * rng.lognormal(0, 0.03, length)
    assert kind == "random_walk", kind
    return 50 + np.cumsum(rng.normal(0, 1, length))


def series_sample(k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Sample ``k``'s context (NaN where a gap is missing) and the ``FRACAST_HORIZON`` steps after it, of the kind
    ``k`` cycles to: hourly and random-walk contexts are 2048 steps or more (every third round of kinds a shorter
    one), daily and monthly ones shorter, as such records are; every fourth context has a gap of missing steps."""
    kind = SERIES_KINDS[k % len(SERIES_KINDS)]
    if kind == "daily_sales":
        length = int(rng.integers(400, 1100))
    elif kind == "monthly_passengers":
        length = int(rng.integers(120, 300))
    elif (k // len(SERIES_KINDS)) % 3 == 2:
        length = int(rng.integers(300, FRACAST_CONTEXT))
    else:
        length = FRACAST_CONTEXT + int(rng.integers(0, 500))
    series = series_like(kind, length + FRACAST_HORIZON, int(rng.integers(1 << 30)))
    context = series[:length].copy()
    if k % 4 == 3:
        start = int(rng.integers(length // 4, length // 2))
        context[start:start + int(rng.integers(5, 40))] = np.nan
    return context, series[length:]


class _FracastCore:
    """Stands in for the Fracast encoder: records ``values`` and ``valid`` and answers zeros of its
    (batch, 2048, 64) shape."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.feeds: list[dict[str, np.ndarray]] = []

    def to(self, **_: Any) -> _FracastCore:
        return self

    def eval(self) -> _FracastCore:
        return self

    def __call__(self, values: Any, valid: Any, coverage: Any) -> Any:
        import torch

        assert bool((coverage == valid.to(torch.float32)).all()), "coverage is valid as float"
        self.feeds.append({"values": values.numpy().copy(), "valid": valid.numpy().copy()})
        return torch.zeros((values.shape[0], values.shape[2], self.width))


class _FracastHead:
    """Stands in for the Fracast quantile head: zeros of (batch, horizon, quantiles)."""

    def __init__(self, horizon: int, quantiles: int) -> None:
        self.horizon, self.quantiles = horizon, quantiles

    def to(self, **_: Any) -> _FracastHead:
        return self

    def eval(self) -> _FracastHead:
        return self

    def forward_horizon(self, hidden: Any, **_: Any) -> Any:
        import torch

        return torch.zeros((hidden.shape[0], self.horizon, self.quantiles))


@contextmanager
def fracast_modules() -> Iterator[dict[str, types.ModuleType]]:
    """The wheel's Fracast modules (``safetensors`` stubbed: :func:`read_safetensors` reads its files), by name."""
    for member in FRACAST.members:
        fetch.model_file(FRACAST, member)
    with wheel_modules(FRACAST, _FRACAST_MODULES, ("safetensors.torch",)):
        sys.modules["fracast._core.safetensors_io"].load_file = read_safetensors  # type: ignore[attr-defined]
        yield {name: sys.modules[name] for name in _FRACAST_MODULES}


def read_safetensors(path: str | Path, device: str = "cpu") -> dict[str, Any]:
    """``safetensors.torch.load_file``: an 8-byte little-endian header length, a JSON header of dtype, shape and
    byte offsets, then the data."""
    import torch

    assert device == "cpu", device
    raw = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + size])
    dtypes = {"F32": np.float32, "F16": np.float16, "I8": np.int8, "I32": np.int32, "I64": np.int64}
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, stop = entry["data_offsets"]
        array = np.frombuffer(raw[8 + size + start:8 + size + stop], dtypes[entry["dtype"]]).reshape(entry["shape"])
        tensors[name] = torch.from_numpy(array.copy())
    return tensors


def fracast_config() -> dict[str, Any]:
    return json.loads(fetch.model_file(FRACAST, _FRA + "weights/config.json").read_text(encoding="utf-8"))


def fracast_recorder() -> tuple[Any, _FracastCore]:
    """The package's ``FracastModel``, as ``from_pretrained`` makes it, around a recording core and head; the core's
    ``feeds`` hold what each ``forecast`` fed the network."""
    config = fracast_config()
    model = config["model"]
    core = _FracastCore(int(model["d_model"]))
    head = _FracastHead(int(model["horizon"]), len(model["quantiles"]))
    with fracast_modules() as modules:
        return modules["fracast.inference"].FracastModel(core, head, config, device="cpu"), core


def fracast_feed(predictor: Any, core: _FracastCore, context: np.ndarray) -> dict[str, np.ndarray]:
    """What ``predictor.forecast(context)`` feeds its network: ``values`` (1, 1, 2048) float32, min-max normalized
    over the finite steps of the last 2048, zero where padded or missing, and ``valid`` (1, 1, 2048) bool."""
    before = len(core.feeds)
    predictor.forecast(context)
    (feed,) = core.feeds[before:]
    return feed


def fracast_series(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """values (N, 1, 2048) float32 and valid (N, 1, 2048) bool: series of six kinds as the package feeds them."""
    predictor, core = fracast_recorder()
    rng = np.random.default_rng(seed)
    feeds = [fracast_feed(predictor, core, series_sample(k, rng)[0]) for k in range(count)]
    return {"values": np.concatenate([f["values"] for f in feeds]).astype(np.float32),
            "valid": np.concatenate([f["valid"] for f in feeds])}


def fracast_network() -> Any:
    """Fracast-0 as one module of ``values`` and ``valid``: the package's ``load_fracast`` (the W8 weights,
    dequantized) and the calls its ``_predict_rows`` makes."""
    import torch

    with fracast_modules() as modules:
        folder = fetch.model_file(FRACAST, _FRA + "weights/config.json").parent
        core, head = modules["fracast.inference"].load_fracast(folder, weights="w8")

    class Fracast(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.core, self.head = core, head

        def forward(self, values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
            hidden = self.core(values, valid, valid.to(torch.float32))
            return self.head.forward_horizon(hidden, last_obs=values[:, 0, -1:], ctx=values[:, 0],
                                             ctx_mask=valid[:, 0])

    return Fracast().eval()


def export_fracast(path: Path) -> None:
    """``torch.onnx.export`` of :func:`fracast_network` (the dynamo exporter: the TorchScript one has no rFFT),
    opset 18, static shapes, one file."""
    import torch

    values = torch.zeros((1, 1, FRACAST_CONTEXT))
    valid = torch.ones((1, 1, FRACAST_CONTEXT), dtype=torch.bool)
    with torch.no_grad():
        torch.onnx.export(fracast_network(), (values, valid), str(path), dynamo=True, opset_version=18,
                          external_data=False, input_names=["values", "valid"], output_names=["quantiles"],
                          verbose=False)


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


# --------------------------------------------------------------------------------------------- PhysNet (rPPG)

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


def _keras_tools() -> str:
    import keras
    import tensorflow as tf
    import tf2onnx

    return f"keras-{keras.__version__}-tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


@lru_cache(maxsize=1)
def face_photo() -> tuple[np.ndarray, np.ndarray]:
    """The ``astronaut`` photograph, uint8 (512, 512, 3), and where its skin is (:func:`skin_mask`); read-only."""
    from tests.formats.images import sample_images

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

# Batch 15, held out: added before any vendor tool saw them.
BATCH15_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("ecg_quality_oscnn", ECG_QUALITY, _ECG_H5,
                 "ecg-quality's Omni-Scale CNN ECG signal-quality grader, a Keras 2.12 HDF5 Functional model: "
                 "parallel Conv1D branches of prime kernel sizes joined by Concatenate, BatchNorm, ReLU, a sigmoid "
                 "score; 2 s windows (500 samples at 250 Hz, mV) of synthetic ECG at six noise levels, cleaned and "
                 "cut by the package's checker", _npz(ecg_windows)),
    Exported("fracast_w8", FRACAST, _FRA + "weights/model.int8.safetensors",
             "Fracast-0 zero-shot time-series forecaster (fracast), W8 weights dequantized, PyTorch dynamo export at "
             "opset 18: a shared causal dilated separable Conv + SwiGLU + RMSNorm block over ten dilations with FiLM, "
             "an rFFT periodogram (DFT, TopK, Round) for phase features, a period-folding gather head (GatherElements, "
             "batched MatMul), 9 quantiles over 48 steps; float values and a bool valid mask (1, 1, 2048) of six "
             "kinds of series as the package feeds them", _npz(fracast_series),
             {"input_shapes": {"values": [1, 1, FRACAST_CONTEXT], "valid": [1, 1, FRACAST_CONTEXT]}},
             export=export_fracast, tools=_torch_tools),
    Exported("physnet_rppg", OPEN_RPPG, _RPPG + "weights/physnet.rlap.weights.h5",
             "open-rppg's PhysNet remote-photoplethysmography 3-D CNN (RLAP weights), Keras 3 on TensorFlow "
             "exported by tf2onnx at opset 17: input standardization, Conv3D + BatchNorm + ReLU, MaxPool3D, two "
             "temporal ConvTranspose with ELU, AvgPool3D, a 128-sample pulse out; NDHWC (1, 128, 32, 32, 3) clips "
             "of a face with a synthetic blood-volume pulse", _npz(face_clips),
             {"input_shapes": {"frames": [1, RPPG_FRAMES, RPPG_SIDE, RPPG_SIDE, 3]}},
             export=export_physnet, tools=_keras_tools),
)
