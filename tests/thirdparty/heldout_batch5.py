"""Held-out models, batch 5 (session 9): recurrent and attention networks from three wheels the zoo does not use.

Batch 5, held out: chosen by kind to put many operators on the Rockchip CPUs (LSTM and GRU layers from three
exporters, a small Keras transformer, a raw-waveform CNN) and added before any vendor tool saw them.

- g2p-id-py (Bookbot's Indonesian grapheme-to-phoneme): three tf2onnx 1.9.3 exports of Keras models, opset 14. The
  LSTM encoder reads a word as one-hot letters, the LSTM decoder is one greedy step with its two states, and the
  phoneme BERT predicts the masked ``e`` of a word. The data are words of the wheel's own lexicon, encoded as the
  package encodes them; the decoder's steps are those of the package's greedy loop on those words, run here on
  the float encoder and decoder.
- speechmos (Microsoft's DNSMOS and PLCMOS): PLCMOS v2, a PyTorch 1.11 export (Conv, two GRUs, a rater
  embedding, one scalar out) on the log power spectrum the package computes of speech-like audio with lost
  packets; DNSMOS P.835, a keras2onnx export that takes 9.01 s of raw audio (its spectrogram is computed by
  Conv, Pow, Sqrt and Log inside) and gives three scores.
- BeatNet: the beat/downbeat CRNN (Conv1d, a dense, a 2-layer LSTM of 150 cells), PyTorch weights exported at
  opset 17 from the wheel's own module; on BeatNet's madmom features (22.05 kHz, 64 ms frames every 20 ms,
  24 bands per octave, log spectrogram and its positive difference: 272 values a frame) of music-like audio.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from tests.thirdparty import fetch, music, zoo
from tests.thirdparty.audio import RATE, speech_like
from tests.thirdparty.heldout_batch4 import TorchExport, wheel_modules

_G2P = "g2p_id/models/"
G2P_ID = fetch.Wheel(
    requirement="g2p-id-py==0.4.2",
    filename="g2p_id_py-0.4.2-py3-none-any.whl",
    sha256="0b9ce7e76be2e8d1738c604751d05e0a8aa1b2ce2199fce27a115d350468e671",
    members=(_G2P + "bert/bert_mlm.onnx", _G2P + "bert/config.json", _G2P + "bert/token2id.json",
             _G2P + "lstm/encoder_model.onnx", _G2P + "lstm/decoder_model.onnx", _G2P + "lstm/config.json",
             _G2P + "lstm/g2id.json", _G2P + "lstm/p2id.json", "g2p_id/resources/lexicon_id.tsv"),
)
SPEECHMOS = fetch.Wheel(
    requirement="speechmos==0.0.1.1",
    filename="speechmos-0.0.1.1-py3-none-any.whl",
    sha256="31c4c9d3234f6ee10102edff74333014c50006a3f389daf7ecacae34e68ebbf7",
    members=("speechmos/plcmos.py", "speechmos/plcmos_models/plcmos_v2.onnx",
             "speechmos/dnsmos_models/sig_bak_ovr.onnx"),
)
BEATNET = fetch.Wheel(
    requirement="BeatNet==1.1.3",
    filename="BeatNet-1.1.3-py3-none-any.whl",
    sha256="1ecfa17bdcbe899975a88bdb6efebd6970d846a4f3b6cfd5c6f320647c641c7e",
    members=("BeatNet/model.py", "BeatNet/models/model_1_weights.pt"),
)
WHEELS = (G2P_ID, SPEECHMOS, BEATNET)

# --------------------------------------------------------------------------------------------- g2p-id


def _json(member: str) -> dict[str, Any]:
    return json.loads(fetch.model_file(G2P_ID, _G2P + member).read_text(encoding="utf-8"))


def lexicon_words(alphabet: set[str], longest: int) -> list[str]:
    """The words of the wheel's lexicon (first column of ``lexicon_id.tsv``) written in ``alphabet`` and no longer
    than ``longest`` letters, in the lexicon's order."""
    lines = fetch.model_file(G2P_ID, "g2p_id/resources/lexicon_id.tsv").read_text(encoding="utf-8").splitlines()
    words = (line.split("\t")[0] for line in lines if "\t" in line)
    return [w for w in words if w and len(w) <= longest and set(w) <= alphabet]


def _choose(words: list[str], count: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [words[int(i)] for i in rng.choice(len(words), size=count, replace=False)]


def encoder_one_hot(word: str) -> np.ndarray:
    """(24, 28) the LSTM encoder's input for ``word``, as ``g2p_id.lstm.LSTM.predict`` builds it: one-hot letters,
    then the pad letter to the end."""
    config, g2id = _json("lstm/config.json"), _json("lstm/g2id.json")
    seq = np.zeros((config["max_encoder_seq_length"], config["num_encoder_tokens"]), np.float32)
    for i, char in enumerate(word):
        seq[i, g2id[char]] = 1.0
    seq[len(word):, g2id[config["pad_token"]]] = 1.0
    return seq


def _encoder_words(count: int, seed: int) -> list[str]:
    config, g2id = _json("lstm/config.json"), _json("lstm/g2id.json")
    alphabet = set(g2id) - {config["pad_token"]}
    return _choose(lexicon_words(alphabet, config["max_encoder_seq_length"]), count, seed)


def _g2p_encoder(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    return {"input_1": np.stack([encoder_one_hot(w) for w in _encoder_words(count, seed)])}


def decoder_steps(words: list[str]) -> list[dict[str, np.ndarray]]:
    """Every step of the package's greedy decoding of ``words`` (float encoder and decoder, ONNX Runtime): the
    one-hot previous phoneme and the two LSTM states, each without its batch axis."""
    import onnxruntime as ort

    config, p2id = _json("lstm/config.json"), _json("lstm/p2id.json")
    eos = p2id[config["eos_token"]]
    session = {part: ort.InferenceSession(str(fetch.model_file(G2P_ID, f"{_G2P}lstm/{part}_model.onnx")),
                                          providers=["CPUExecutionProvider"]) for part in ("encoder", "decoder")}
    steps: list[dict[str, np.ndarray]] = []
    for word in words:
        memory, carry = session["encoder"].run(None, {"input_1": encoder_one_hot(word)[None]})
        token = p2id[config["bos_token"]]
        for _ in range(config["max_decoder_seq_length"] + 1):
            previous = np.zeros((1, config["num_decoder_tokens"]), np.float32)
            previous[0, token] = 1.0
            steps.append({"input_2": previous, "input_3": memory[0], "input_4": carry[0]})
            out, memory, carry = session["decoder"].run(
                None, {"input_2": previous[None], "input_3": memory, "input_4": carry})
            token = int(np.argmax(out[0, -1]))
            if token == eos:
                break
    return steps


def _g2p_decoder(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """``count`` steps drawn from the greedy decoding of lexicon words (every step of a word is equally likely)."""
    steps = decoder_steps(_encoder_words(max(4, count // 3), seed))
    rng = np.random.default_rng(seed)
    chosen = [steps[int(i)] for i in rng.choice(len(steps), size=count, replace=len(steps) < count)]
    return {name: np.stack([step[name] for step in chosen]) for name in ("input_2", "input_3", "input_4")}


def bert_tokens(word: str) -> np.ndarray:
    """(32,) int64 the phoneme BERT's input for ``word``, as ``g2p_id.bert.BERT.predict`` builds it: ``x`` written
    ``ks``, every ``e`` masked, letters to ids, padded with the pad id."""
    config, token2id = _json("bert/config.json"), _json("bert/token2id.json")
    letters = [c if c != "e" else config["mask_token"] for c in word.replace("x", "ks")]
    tokens = [token2id[c] for c in letters]
    tokens += [token2id[config["pad_token"]]] * (config["max_seq_length"] - len(tokens))
    return np.array(tokens, np.int64)


def _g2p_bert(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Lexicon words with at least one ``e`` (the letter the package asks the BERT about)."""
    config, token2id = _json("bert/config.json"), _json("bert/token2id.json")
    alphabet = {c for c in token2id if len(c) == 1} | {"e", "x"}
    words = [w for w in lexicon_words(alphabet, config["max_seq_length"] // 2)
             if "e" in w and len(w.replace("x", "ks")) <= config["max_seq_length"]]
    return {"input_1": np.stack([bert_tokens(w) for w in _choose(words, count, seed)])}


# --------------------------------------------------------------------------------------------- speechmos

#: PLCMOS clips: 2 s of 16 kHz audio, 20 ms packets of which about one in eight is lost (zeroed).
PLC_SECONDS = 2.0
PACKET = 320


def plcmos_features(wave: np.ndarray) -> np.ndarray:
    """(frames, 257) PLCMOS v2's input by the wheel's own ``PLCMOS.stft_transform``: log power of a 512-point
    Hamming STFT every 256 samples, floored, divided by 20."""
    with wheel_modules(SPEECHMOS, ("speechmos.plcmos",), ()):
        cls = sys.modules["speechmos.plcmos"].PLCMOS
        return np.float32(cls.stft_transform(object.__new__(cls), wave.astype(np.float64)))


def lost_packets(wave: np.ndarray, seed: int, share: float = 0.125) -> np.ndarray:
    """``wave`` with about ``share`` of its 20 ms packets zeroed, as a packet-loss concealer with nothing to
    conceal would leave them."""
    rng = np.random.default_rng(seed)
    out = wave.copy()
    for start in range(0, len(out), PACKET):
        if rng.random() < share:
            out[start:start + PACKET] = 0.0
    return out


def _plcmos(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Clips of one stream of speech-like audio with lost packets; a random rater embedding each, as the package
    draws one per round (``np.random.normal(size=(1, 64))``)."""
    samples = int(PLC_SECONDS * RATE)
    wave = lost_packets(speech_like(PLC_SECONDS * count + 0.1, seed), seed)
    feats = np.stack([plcmos_features(wave[i * samples:(i + 1) * samples])[None] for i in range(count)])
    raters = np.random.default_rng(seed + 7).normal(size=(count, 1, 64)).astype(np.float32)
    return {"degraded_audio": feats, "rater_embed": raters[:, 0]}


#: DNSMOS P.835 reads 9.01 s of 16 kHz audio; the package moves its window by 1 s.
DNSMOS_SAMPLES = int(9.01 * RATE)


def dnsmos_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Windows of 9.01 s, one every second, of speech-like audio under a little noise, as the package slides
    them over a clip."""
    rng = np.random.default_rng(seed)
    wave = speech_like(9.01 + count, seed)
    wave = np.clip(wave + 0.01 * rng.normal(size=len(wave)), -1, 1).astype(np.float32)
    return {"input_1": np.stack([wave[i * RATE:i * RATE + DNSMOS_SAMPLES] for i in range(count)])}


# --------------------------------------------------------------------------------------------- BeatNet

#: BeatNet's features (log_spect.py, BeatNet.py): madmom at 22.05 kHz, 1411-sample frames every 441 samples
#: (50 fps), 24 bands per octave from 30 Hz, log10(1 + x), its positive difference beside it: 272 values a frame.
BEATNET_FEATURES = music.Features((1411,), (24,), fps=50, rate=22_050)
BEATNET_FRAMES = 128


def beatnet_bda() -> Any:
    """BeatNet's ``BDA(272, 150, 2)`` with the wheel's ``model_1_weights.pt``, loaded as ``BeatNet`` loads it."""
    import torch

    with wheel_modules(BEATNET, ("BeatNet.model",), ()):
        model = sys.modules["BeatNet.model"].BDA(272, 150, 2, "cpu")
    weights = torch.load(fetch.model_file(BEATNET, "BeatNet/models/model_1_weights.pt"), map_location="cpu",
                         weights_only=True)
    model.load_state_dict(weights)  # BeatNet passes strict=False; every key matches, and strict says so
    return model.eval()


def _beatnet(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    return {"data": music.feature_windows(BEATNET_FEATURES, BEATNET_FRAMES, count, seed)}


# --------------------------------------------------------------------------------------------- the models


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


# Batch 5, held out: added before any vendor tool saw them.
BATCH5_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("g2p_id_encoder", G2P_ID, _G2P + "lstm/encoder_model.onnx",
                 "Bookbot g2p-id LSTM encoder, tf2onnx 1.9.3 opset 14 (Keras LSTM of 256): [1, 24, 28] one-hot "
                 "letters of lexicon words, the two final states out", zoo._npz(_g2p_encoder),  # noqa: SLF001
                 _shapes(input_1=[1, 24, 28])),
    zoo.ZooModel("g2p_id_decoder", G2P_ID, _G2P + "lstm/decoder_model.onnx",
                 "Bookbot g2p-id LSTM decoder step, tf2onnx 1.9.3 opset 14: previous phoneme and two 256-d states "
                 "in, softmax over 32 phonemes and the states out; steps of the package's greedy loop",
                 zoo._npz(_g2p_decoder),  # noqa: SLF001
                 _shapes(input_2=[1, 1, 32], input_3=[1, 256], input_4=[1, 256])),
    zoo.ZooModel("g2p_id_bert", G2P_ID, _G2P + "bert/bert_mlm.onnx",
                 "Bookbot g2p-id phoneme BERT (Keras MLM), tf2onnx 1.9.3 opset 14: embeddings, attention by Einsum "
                 "and MatMul, LayerNorm as GlobalAveragePool; [1, 32] int64 letters with every e masked",
                 zoo._npz(_g2p_bert), _shapes(input_1=[1, 32])),  # noqa: SLF001
    zoo.ZooModel("plcmos_v2", SPEECHMOS, "speechmos/plcmos_models/plcmos_v2.onnx",
                 "Microsoft PLCMOS v2, PyTorch 1.11 export opset 11: Conv + LeakyReLU, two GRUs, Gemm head with a "
                 "64-d rater embedding, one scalar MOS; log power spectra of speech-like audio with lost packets",
                 zoo._npz(_plcmos), _shapes(degraded_audio=[1, 1, 126, 257], rater_embed=[1, 64])),  # noqa: SLF001
    zoo.ZooModel("dnsmos_p835", SPEECHMOS, "speechmos/dnsmos_models/sig_bak_ovr.onnx",
                 "Microsoft DNSMOS P.835, keras2onnx 1.8.1 opset 12: spectrogram by Conv, Pow, Sqrt and Log inside, "
                 "CNN, three scores; 9.01 s windows of speech-like audio", zoo._npz(dnsmos_windows),  # noqa: SLF001
                 _shapes(input_1=[1, DNSMOS_SAMPLES])),
    TorchExport("beatnet", BEATNET, "BeatNet/models/model_1_weights.pt",
                "BeatNet beat/downbeat CRNN, PyTorch weights exported at opset 17: Conv1d, MaxPool, dense, 2-layer "
                f"LSTM (150), dense; [1, {BEATNET_FRAMES}, 272] madmom features of music-like audio at 22.05 kHz",
                zoo._npz(_beatnet), _shapes(data=[1, BEATNET_FRAMES, 272]),  # noqa: SLF001
                network=beatnet_bda, inputs={"data": (1, BEATNET_FRAMES, 272)}, outputs=("activations",)),
)
