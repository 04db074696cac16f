"""Held-out models of how words are written and said: grapheme-to-phoneme, transliteration and
diacritization.

- g2p-id-py (Bookbot's Indonesian grapheme-to-phoneme): three tf2onnx 1.9.3 exports of Keras models, opset 14. The
  LSTM encoder reads a word as one-hot letters, the LSTM decoder is one greedy step with its two states, and the
  phoneme BERT predicts the masked ``e`` of a word. The data are words of the wheel's own lexicon, encoded as the
  package encodes them; the decoder's steps are those of the package's greedy loop on those words, run here on
  the float encoder and decoder.
- arabic-name-romanizer 0.2.0: the encoder of its Arabic-to-Latin name transliterator (int64 characters and a
  boolean padding mask in, two GRU layers, a masked mean); on the most frequent names of its own name table,
  tokenised with its vocabulary.
- text2tashkeel 0.1.0: Arabic diacritization (tashkeel), two bundled INT8 networks (``onnx.quantize``, dynamic
  quantization: DynamicQuantizeLSTM, MatMulInteger, DynamicQuantizeLinear, opset 17 + com.microsoft) reading
  int64 character ids:

  - ``bilstm.int8.onnx``: a BiLSTM with Bahdanau attention (Tanh, Softmax, MatMul), 15 diacritic classes per
    character (github.com/Z-Mahmood/arabic-diacritizer-public-release).
  - ``rawi_v3.int8.onnx``: rawi V3, a shared BiLSTM feeding two heads: a presence logit (does this letter carry a
    mark) and 75 value logits (which mark), on the NFD base sequence (huggingface.co/TigreGotico/rawi-v3).

  Their data: the package's own code from the pinned wheel, its sessions replaced by a recorder of what they are
  fed, on running undiacritized Modern Standard Arabic written here (everyday sentences and the opening surah,
  Al-Fatiha), a window starting at a word encoded by the backend's own ``_predict`` (bilstm: NFC with marks
  stripped, its inlined 54-character vocabulary; rawi V3: NFD base characters, the wheel's ``rawi_v2.vocab.json``),
  cut to ``TASHKEEL_LEN`` ids: running text as the package reads it, no padding (neither model masks padding).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import wheel_modules

_G2P = "g2p_id/models/"

G2P_ID = fetch.Wheel(
    requirement="g2p-id-py==0.4.2",
    filename="g2p_id_py-0.4.2-py3-none-any.whl",
    sha256="0b9ce7e76be2e8d1738c604751d05e0a8aa1b2ce2199fce27a115d350468e671",
    members=(_G2P + "bert/bert_mlm.onnx", _G2P + "bert/config.json", _G2P + "bert/token2id.json",
             _G2P + "lstm/encoder_model.onnx", _G2P + "lstm/decoder_model.onnx", _G2P + "lstm/config.json",
             _G2P + "lstm/g2id.json", _G2P + "lstm/p2id.json", "g2p_id/resources/lexicon_id.tsv"),
)


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


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


_NAMES = "arabic_name_romanizer/resources/"

ROMANIZER = fetch.Wheel(
    requirement="arabic-name-romanizer==0.2.0",
    filename="arabic_name_romanizer-0.2.0-py3-none-any.whl",
    sha256="f70b89614d9b5866dcf911d098c5e45d2b1f559461f238e8c5259b731fcf2a7e",
    members=(_NAMES + "encoder.onnx", _NAMES + "vocab.json", _NAMES + "names.sqlite3"),
)

#: Encoder input length (names tokenised to at most this many ids, padded with <PAD>).
NAME_IDS = 24


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

_T2T = "text2tashkeel/models/"

TASHKEEL = fetch.Wheel(
    requirement="text2tashkeel==0.1.0",
    filename="text2tashkeel-0.1.0-py3-none-any.whl",
    sha256="dd1ad22b6b012a71f1467d95fbaceecc38b22f4882c31389a6d35cdc1669967c",
    members=(_T2T + "bilstm.int8.onnx", _T2T + "rawi_v3.int8.onnx", _T2T + "rawi_v2.vocab.json",
             "text2tashkeel/_models.py"),
)

#: Character ids per text2tashkeel window.
TASHKEEL_LEN = 48

#: Undiacritized Modern Standard Arabic: everyday sentences, then the Basmala and Al-Fatiha.
ARABIC_SENTENCES: tuple[str, ...] = (
    "ذهب الولد إلى المدرسة في الصباح",
    "قرأ الطالب الكتاب في المكتبة",
    "العلم نور والجهل ظلام",
    "تشرق الشمس من الشرق وتغرب في الغرب",
    "كتب المعلم الدرس على السبورة",
    "يحب الناس السفر في فصل الصيف",
    "اللغة العربية من أقدم اللغات في العالم",
    "شرب الرجل كوبا من الماء البارد",
    "تقع مدينة القاهرة على ضفاف نهر النيل",
    "في البيت حديقة كبيرة فيها أشجار كثيرة",
    "سافرت العائلة إلى البحر يوم الجمعة",
    "الصبر مفتاح الفرج",
    "بسم الله الرحمن الرحيم",
    "الحمد لله رب العالمين",
    "الرحمن الرحيم",
    "مالك يوم الدين",
    "إياك نعبد وإياك نستعين",
    "اهدنا الصراط المستقيم",
)


class _Recorder:
    """Stands in for an ``onnxruntime.InferenceSession``: keeps each feed and answers zeros of the given shapes
    (``-1`` for the fed sequence length), so a package's own encoding code runs unchanged."""

    def __init__(self, outputs: dict[str, tuple[int, ...]]) -> None:
        self.outputs = outputs
        self.feeds: list[dict[str, np.ndarray]] = []

    def run(self, names: list[str] | None, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """Record ``feed``; zeros for ``names`` (all outputs when None)."""
        self.feeds.append({key: np.asarray(value) for key, value in feed.items()})
        length = next(iter(feed.values())).shape[1]
        return [np.zeros(tuple(length if d == -1 else d for d in self.outputs[name]), np.float32)
                for name in (names or list(self.outputs))]


def tashkeel_module() -> Any:
    """The wheel's ``text2tashkeel._models`` (its backends, vocabularies and mark helpers)."""
    with wheel_modules(TASHKEEL, ("text2tashkeel._models",), ()):
        return sys.modules["text2tashkeel._models"]


def tashkeel_backend(kind: str) -> Any:
    """The package's backend for ``kind`` ("bilstm": ``_BilstmBackend``; "rawi_v3": ``_RawiV3Backend`` with the
    wheel's ``rawi_v2.vocab.json``, threshold 0.5) on the wheel's INT8 model."""
    models = tashkeel_module()
    if kind == "bilstm":
        return models._BilstmBackend(fetch.model_file(TASHKEEL, _T2T + "bilstm.int8.onnx"))  # noqa: SLF001
    return models._RawiV3Backend(fetch.model_file(TASHKEEL, _T2T + "rawi_v3.int8.onnx"),  # noqa: SLF001
                                 fetch.model_file(TASHKEEL, _T2T + "rawi_v2.vocab.json"), 0.5)


#: Each model's input name and its outputs' shapes (``-1``: the sequence length), for the recorder.
_TASHKEEL_IO: dict[str, tuple[str, dict[str, tuple[int, ...]]]] = {"bilstm": ("input_ids", {"logits": (1, -1, 15)}),
                "rawi_v3": ("input", {"presence": (1, -1), "value": (1, -1, 75)})}


def tashkeel_ids(backend: Any, kind: str, text: str) -> np.ndarray:
    """The (1, L) int64 ids ``backend._predict(text)`` feeds its session (its own normalization and vocabulary)."""
    name, outputs = _TASHKEEL_IO[kind]
    session, recorder = backend.sess, _Recorder(outputs)
    backend.sess = recorder
    try:
        backend._predict(text)  # noqa: SLF001
    finally:
        backend.sess = session
    return recorder.feeds[0][name]


def _arabic_window(rng: np.random.Generator) -> str:
    """Running text: the sentences in a seeded order, joined, from a random word on, long enough for a window."""
    order = rng.permutation(len(ARABIC_SENTENCES))
    words = " ".join(ARABIC_SENTENCES[int(i)] for i in np.concatenate([order, order])).split()
    start = int(rng.integers(len(words) // 2))
    return " ".join(words[start:start + TASHKEEL_LEN // 3])


def _tashkeel_text(kind: str, name: str) -> zoo.DataMaker:
    """The data maker for one text2tashkeel model: windows of ``TASHKEEL_LEN`` ids of running Arabic text."""

    def make(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
        backend = tashkeel_backend(kind)
        rng = np.random.default_rng(seed)
        rows = [tashkeel_ids(backend, kind, _arabic_window(rng))[0, :TASHKEEL_LEN] for _ in range(count)]
        assert all(len(row) == TASHKEEL_LEN for row in rows)
        return {name: np.stack(rows).astype(np.int64)}

    make.__doc__ = (f"{name} (N, {TASHKEEL_LEN}) int64: windows of undiacritized Arabic encoded by the package's "
                    f"{kind} backend.")
    return _npz(make)


MODELS: tuple[zoo.ZooModel, ...] = (
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
    zoo.ZooModel("name_romanizer_encoder", ROMANIZER, _NAMES + "encoder.onnx",
                 "arabic-name-romanizer's encoder, PyTorch 2.14 export, opset 17: int64 characters and a boolean "
                 "mask in, two GRU layers, masked mean; names of its own table", _npz(name_ids),
                 {"input_shapes": {"src": [1, NAME_IDS], "src_mask": [1, NAME_IDS]}}),
    zoo.ZooModel("tashkeel_bilstm", TASHKEEL, _T2T + "bilstm.int8.onnx",
                 "text2tashkeel Arabic diacritizer: BiLSTM + Bahdanau attention, dynamically quantized INT8 "
                 "(DynamicQuantizeLSTM, MatMulInteger), int64 character ids, 15 classes per character; running "
                 "Arabic text encoded by the package's bilstm backend", _tashkeel_text("bilstm", "input_ids"),
                 {"input_shapes": {"input_ids": [1, TASHKEEL_LEN]}}),
    zoo.ZooModel("tashkeel_rawi_v3", TASHKEEL, _T2T + "rawi_v3.int8.onnx",
                 "text2tashkeel rawi V3 Arabic diacritizer: shared BiLSTM with presence and value heads (75 "
                 "classes), dynamically quantized INT8, int64 NFD character ids; running Arabic text encoded by the "
                 "package's rawi-v3 backend", _tashkeel_text("rawi_v3", "input"),
                 {"input_shapes": {"input": [1, TASHKEEL_LEN]}}),
)
