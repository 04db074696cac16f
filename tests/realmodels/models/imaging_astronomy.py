"""Held-out scientific imaging model: cosmic-ray detection in Hubble exposures.

- deepCR 0.3.1 (BSD 3-Clause, an sdist: no wheel is published): deepCR-mask, Zhang and Bloom's cosmic-ray detector
  for Hubble ACS/WFC images (``learned_models/mask/ACS-WFC.pth``, 417 kB, a PyTorch state dict of 101k parameters,
  the package's default mask model, trained on F435W, F606W and F814W flat-fielded exposures of extragalactic
  fields, globular clusters and resolved galaxies). ``UNet2SigmoidBatchNorm`` from the package's
  ``unet_batchnorm.py``: a two-level U-Net, 32 and 64 channels (3 x 3 Conv + BatchNorm + ReLU pairs, a 2 x 2 MaxPool,
  a stride-2 ConvTranspose, the skip Concat, a 1 x 1 Conv) and a sigmoid. Built by the package's ``deepCR`` class
  and exported by ``torch.onnx.export`` (TorchScript, opset 17, static shapes, the BatchNorms folded into the
  convolutions; 400 kB: 7 Conv, 6 Relu, MaxPool, ConvTranspose, Concat, Sigmoid): ``image`` (1, 1, 256, 256)
  float32 in electrons in, ``cr_probability`` (1, 1, 256, 256) out, the per-pixel probability of a cosmic-ray hit.

Data are made as the package feeds its model, with the package's own code from the pinned archive, its model
replaced by a recorder of what it is fed: the package's ``deepCR(mask="ACS-WFC").clean`` (its division by the model's
scale, 1 for ACS-WFC, and its padding to a multiple of 4: none at 256 px) with ``maskNet`` a recorder, on 256 x 256
ACS/WFC-like exposures in electrons (:func:`hst_field`) of the three kinds of field deepCR was trained on, cycled per
sample (:data:`FIELD_KINDS`: a sparse extragalactic field of galaxies and a few stars, a globular cluster's crowded
stars, a resolved galaxy's diffuse light and faint stars): Sersic galaxies and Moffat stars of the 0.05" pixel scale
convolved with the PSF, sky, Poisson and read noise, and cosmic rays as the detector records them (single pixel hits
and tracks of 200-4000 e- per pixel, sharp, a little charge shared with neighbours, their number set by a seeded
exposure time).
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
from tests.realmodels.models.package_code import Exported, torch_tools

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

#: The ONNX opset of the exports written here.
OPSET = 17

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


_npz = zoo._npz  # noqa: SLF001


MODELS: tuple[zoo.ZooModel, ...] = (
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
        tools=torch_tools,
    ),
)
