"""Held-out models, batch 22: a domain no batch had, camera raw processing, from a package the zoo does not pin,
registered before any vendor tool saw them.

- demosaicnet 0.0.14 (MIT): the released networks of Gharbi, Chaurasia, Paris and Durand's "Deep Joint Demosaicking
  and Denoising" (SIGGRAPH Asia 2016), trained on their dataset of hard natural-image patches (sRGB in [0, 1]) to
  rebuild the full-colour image from a colour filter array's mosaic (the noise-free variants). The mosaic comes in
  as three channels, each holding the pixels of its colour and zero elsewhere (the package's ``bayer`` and
  ``xtrans`` masks), and every convolution is unpadded (``pad=False``, as the package builds them), so the output
  is smaller than the input by the networks' receptive field.

  - ``demosaicnet_bayer``: ``BayerDemosaick`` (``demosaicnet/data/bayer.pth``, 2.2 MB: a PyTorch state dict,
    561k parameters) for the Bayer pattern (``G r / b G``): a 2 x 2 stride-2 Conv of 4 packs the mosaic to half
    resolution, fifteen 3 x 3 Conv of 64 + Relu (the last of 128), its two halves multiplied (filters by masks), a
    1 x 1 Conv of 12, a grouped (3) 2 x 2 stride-2 ConvTranspose back to full resolution, a Concat with the centre
    of the mosaic, a 3 x 3 Conv of 64 + Relu and a 1 x 1 Conv of 3. Exported by torch.onnx (TorchScript exporter,
    opset 17, static shapes, 2.2 MB) at 126 x 126: 19 Conv, 16 Relu, a ConvTranspose, 4 Slice (the split into
    filters and masks, the crop of the mosaic), a Mul and a Concat (the skip). ``mosaic`` (1, 3, 126, 126) float32
    NCHW in; ``rgb`` (1, 3, 64, 64), the centre of the image (31 pixels in from each side), out.
  - ``demosaicnet_xtrans``: ``XTransDemosaick`` (``demosaicnet/data/xtrans.pth``, 1.6 MB, 410k parameters) for
    Fujifilm's 6 x 6 X-Trans pattern: eleven 3 x 3 Conv of 64 + Relu at full resolution, a Concat with the centre
    of the mosaic, a 3 x 3 Conv of 64 + Relu and a 1 x 1 Conv of 3. Exported the same way (1.6 MB) at 126 x 126:
    13 Conv, 12 Relu, a Slice pair and a Concat. ``mosaic`` (1, 3, 126, 126) float32 NCHW in; ``rgb`` (1, 3, 102,
    102), the centre of the image (12 pixels in from each side), out.

Data are made as the package feeds its networks, with the package's own code from the pinned wheel, its networks
replaced by recorders of what they are fed: the wheel's demo script (``demosaicnet_demo``: the image read as float
in [0, 1], cut to a multiple of 6, made channel-first and mosaicked by the package's ``bayer`` and ``xtrans``, a
batch of one each) with ``demosaicnet.BayerDemosaick`` and ``XTransDemosaick`` recorders, ``imageio`` standing in
as the photograph handed over and a no-op writer, and ``pkg_resources.resource_filename`` as the cache's paths. Each
sample is a 126 x 126 cut of a colour photograph (scikit-image's seven colour photographs and the wheel's own test
image, each at a seeded scale of 0.5-1, the cut at a seeded corner on the 6-pixel grid so the mosaics keep their
phase, textured: a grey standard deviation of at least 0.05, else the most textured of 20 tries), mosaicked as the
demo does. The photograph cut is the truth the network's output is checked against.
"""

from __future__ import annotations

import importlib.util
import io
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch15 import Exported
from tests.thirdparty.heldout_batch18 import _standing_in

_DM = "demosaicnet/"
BAYER_PTH = _DM + "data/bayer.pth"
XTRANS_PTH = _DM + "data/xtrans.pth"
#: The wheel's demo script (installed as ``demosaicnet_demo.py``): how the package feeds its networks.
DEMO_SCRIPT = "demosaicnet-0.0.14.data/scripts/demosaicnet_demo.py"
#: The wheel's own test image (128 x 128 RGB), the demo's default input.
TEST_INPUT = _DM + "data/test_input.png"
DEMOSAICNET = fetch.Wheel(
    requirement="demosaicnet==0.0.14",
    filename="demosaicnet-0.0.14-py3-none-any.whl",
    sha256="e50d502a1336736fc83fdaca97c6e709c3114419083cb1854def3355fb6894c9",
    members=(BAYER_PTH, XTRANS_PTH, TEST_INPUT, _DM + "modules.py", _DM + "mosaic.py", DEMO_SCRIPT),
)
WHEELS = (DEMOSAICNET,)

#: The ONNX opset of this batch's exports.
OPSET = 17

#: The side of the mosaic fed to the networks (the package feeds whole images cut to a multiple of 6; pinned to a
#: cut an NPU can hold, a multiple of the X-Trans period 6) and how far in from each side their output starts (the
#: unpadded convolutions' border: 2 + 2 x 15 - 1 for Bayer, 11 + 1 for X-Trans).
SIDE = 126
BORDER = {"bayer": 31, "xtrans": 12}
PATTERNS = ("bayer", "xtrans")
#: scikit-image's colour photographs the samples are cut from (with the wheel's test image).
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "immunohistochemistry", "retina", "colorwheel")
#: The least grey standard deviation (in [0, 1]) of a cut: flat cuts (sky, the black around a retina) are skipped.
MIN_TEXTURE = 0.05


def _resource_filename(package: str, relative: str) -> str:
    """Stands in for ``pkg_resources.resource_filename`` on the package's data: the pinned member in the cache."""
    return str(fetch.model_file(DEMOSAICNET, package.split(".")[0] + "/" + relative))


@contextmanager
def demosaicnet_modules() -> Iterator[dict[str, Any]]:
    """The wheel's ``demosaicnet.mosaic`` and ``demosaicnet.modules`` (the package's ``__init__``, which imports its
    dataset downloader, does not run), ``pkg_resources`` standing in by :func:`_resource_filename`; ``sys.modules``
    is restored on exit."""
    stand_ins = {"pkg_resources": {"resource_filename": _resource_filename}}
    with _standing_in(DEMOSAICNET, ("demosaicnet.mosaic", "demosaicnet.modules"), stand_ins):
        yield {name: sys.modules[f"demosaicnet.{name}"] for name in ("mosaic", "modules")}


@contextmanager
def demo_feeder() -> Iterator[Any]:
    """``feed(image) -> {"bayer": (1, 3, H, W), "xtrans": (1, 3, H, W)}`` float32: what the wheel's demo script feeds
    ``BayerDemosaick`` and ``XTransDemosaick`` for ``image`` ((H, W, 3) uint8 RGB; H and W cut down to a multiple
    of 6), its networks recorders, ``imageio`` standing in as ``image`` read and a no-op writer."""
    import torch

    fed: dict[str, np.ndarray] = {}
    current: list[np.ndarray] = []

    def recorder(pattern: str) -> type:
        class Recorder(torch.nn.Module):
            def forward(self, mosaic: Any) -> Any:
                fed[pattern] = mosaic.numpy().copy()
                return torch.zeros_like(mosaic)

        return Recorder

    def imread(path: str) -> np.ndarray:
        (image,) = current
        return image

    stand_ins = {"imageio": {"imread": imread, "imsave": lambda *args, **kwargs: None}}
    with demosaicnet_modules() as modules, _standing_in(DEMOSAICNET, (), stand_ins):
        package = sys.modules["demosaicnet"]
        for name in ("bayer", "xtrans"):
            setattr(package, name, getattr(modules["mosaic"], name))
        package.BayerDemosaick, package.XTransDemosaick = recorder("bayer"), recorder("xtrans")  # type: ignore[attr-defined]
        spec = importlib.util.spec_from_file_location("demosaicnet_demo", fetch.model_file(DEMOSAICNET, DEMO_SCRIPT))
        assert spec is not None and spec.loader is not None
        demo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(demo)

        def feed(image: np.ndarray) -> dict[str, np.ndarray]:
            assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
            current[:] = [image]
            fed.clear()
            with tempfile.TemporaryDirectory() as out, redirect_stdout(io.StringIO()):
                demo.main(types.SimpleNamespace(input="photo.png", output=out))
            return {pattern: fed[pattern].astype(np.float32) for pattern in PATTERNS}

        feed.demo = demo  # type: ignore[attr-defined]
        yield feed


def colour_photos() -> dict[str, np.ndarray]:
    """Name -> (H, W, 3) uint8: scikit-image's colour photographs (:data:`PHOTOS`) and the wheel's test image."""
    from PIL import Image

    from tests.formats.images import sample_images

    images = sample_images()
    photos = {name: images[name] for name in PHOTOS}
    photos["test_input"] = np.asarray(Image.open(fetch.model_file(DEMOSAICNET, TEST_INPUT)).convert("RGB"))
    return photos


def photo_cut(photo: np.ndarray, seed: int) -> np.ndarray:
    """A (:data:`SIDE`, :data:`SIDE`, 3) uint8 cut of ``photo`` at a seeded scale of 0.5-1 (Pillow's anti-aliased
    bicubic; at least the cut's side) and a seeded corner on the 6-pixel grid, textured (grey standard deviation at
    least :data:`MIN_TEXTURE`; the most textured of 20 tries otherwise)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    height, width = photo.shape[:2]
    scale = max(rng.uniform(0.5, 1.0), (SIDE + 6) / min(height, width))
    size = (max(SIDE, round(width * scale)), max(SIDE, round(height * scale)))
    scaled = np.asarray(Image.fromarray(photo).resize(size, Image.Resampling.BICUBIC)) if scale < 1 else photo
    best, texture = None, -1.0
    for _ in range(20):
        top = 6 * int(rng.integers((scaled.shape[0] - SIDE) // 6 + 1))
        left = 6 * int(rng.integers((scaled.shape[1] - SIDE) // 6 + 1))
        cut = scaled[top : top + SIDE, left : left + SIDE]
        spread = float((cut.astype(np.float32) / 255).mean(axis=2).std())
        if spread > texture:
            best, texture = cut, spread
        if spread >= MIN_TEXTURE:
            break
    assert best is not None
    return np.ascontiguousarray(best)


def mosaics_with_truth(count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """``count`` samples: ``bayer`` and ``xtrans`` (1, 3, 126, 126) float32 as the package's demo feeds its
    networks, and ``rgb`` (3, 126, 126) float32 in [0, 1], the photograph cut they were made from. The photographs
    are cycled in a seeded order."""
    photos = colour_photos()
    names = sorted(photos)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(names))
    samples = []
    with demo_feeder() as feed:
        for k in range(count):
            cut = photo_cut(photos[names[order[k % len(names)]]], int(rng.integers(1 << 30)))
            samples.append({**feed(cut), "rgb": cut.transpose(2, 0, 1).astype(np.float32) / 255.0})
    return samples


def _mosaics(pattern: str) -> Any:
    def make(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
        """mosaic (N, 3, 126, 126) float32: colour photograph cuts mosaicked as the package's demo feeds them."""
        return {"mosaic": np.concatenate([s[pattern] for s in mosaics_with_truth(count, seed)])}

    make.__name__ = f"{pattern}_mosaics"
    return make


bayer_mosaics = _mosaics("bayer")
xtrans_mosaics = _mosaics("xtrans")


def _export(pattern: str, path: Path) -> None:
    """``torch.onnx.export`` of the package's ``BayerDemosaick()`` or ``XTransDemosaick()`` as the package builds
    it (its pretrained weights loaded by its own code; unpadded) at one (1, 3, 126, 126) mosaic (TorchScript
    exporter, opset 17, static shapes), input ``mosaic``, output ``rgb``."""
    import torch

    with demosaicnet_modules() as modules:
        network = getattr(modules["modules"], {"bayer": "BayerDemosaick", "xtrans": "XTransDemosaick"}[pattern])()
    network.eval()
    one = torch.zeros((1, 3, SIDE, SIDE))
    with torch.no_grad():
        torch.onnx.export(network, (one,), str(path), opset_version=OPSET, dynamo=False, do_constant_folding=True,
                          input_names=["mosaic"], output_names=["rgb"])


def export_bayer(path: Path) -> None:
    _export("bayer", path)


def export_xtrans(path: Path) -> None:
    _export("xtrans", path)


def _torch_tools() -> str:
    import torch

    return f"torch-{torch.__version__}"


_npz = zoo._npz  # noqa: SLF001
_INPUT = {"input_shapes": {"mosaic": [1, 3, SIDE, SIDE]}}

# Batch 22, held out: added before any vendor tool saw them.
BATCH22_MODELS: tuple[zoo.ZooModel, ...] = (
    Exported(
        "demosaicnet_bayer",
        DEMOSAICNET,
        BAYER_PTH,
        "demosaicnet's Bayer demosaicking CNN (Gharbi et al. 2016, a PyTorch state dict) exported by torch.onnx at "
        "opset 17: a 2x2 stride-2 Conv packing the mosaic, fifteen unpadded 3x3 Conv + Relu, the product of their "
        "two halves, a grouped stride-2 ConvTranspose back to full resolution, a skip Concat and two Conv; "
        "(1, 3, 126, 126) Bayer mosaics of colour photographs in, (1, 3, 64, 64) RGB out, as the package's demo "
        "feeds them",
        _npz(bayer_mosaics),
        _INPUT,
        export=export_bayer,
        tools=_torch_tools,
    ),
    Exported(
        "demosaicnet_xtrans",
        DEMOSAICNET,
        XTRANS_PTH,
        "demosaicnet's X-Trans demosaicking CNN (a PyTorch state dict) exported by torch.onnx at opset 17: eleven "
        "unpadded 3x3 Conv + Relu of 64 at full resolution, a skip Concat and two Conv; (1, 3, 126, 126) X-Trans "
        "mosaics of colour photographs in, (1, 3, 102, 102) RGB out, as the package's demo feeds them",
        _npz(xtrans_mosaics),
        _INPUT,
        export=export_xtrans,
        tools=_torch_tools,
    ),
)
