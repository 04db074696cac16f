"""Held-out batch 13 (tests/thirdparty/heldout_batch13.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch13 import (
    BATCH13_MODELS,
    CHARS2VEC_LEN,
    TASHKEEL_LEN,
    _typo,
    chars2vec_inputs,
    chars2vec_model,
    english_words,
    tashkeel_backend,
    tashkeel_ids,
    tashkeel_module,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Al-Fatiha, verses 2 and 4-6, fully diacritized: the gold the bilstm's marks are compared with.
FATIHA = ("الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ مَالِكِ يَوْمِ الدِّينِ "
          "إِيَّاكَ نَعْبُدُ وَإِيَّاكَ نَسْتَعِينُ اهْدِنَا الصِّرَاطَ الْمُسْتَقِيمَ")
#: The Basmala as the package's docstring says its models diacritize it.
BASMALA = "بِسْمِ اللَّهِ الرَّحْمَنِ الرَّحِيمِ"


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"tashkeel_bilstm": ["mobile-npu"], "tashkeel_rawi_v3": ["mobile-npu"]}


def test_batch13_is_registered_held_out_on_every_target() -> None:
    for model in BATCH13_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


def test_chars2vec_puts_misspelled_words_next_to_their_spelling() -> None:
    """Words encoded as the package encodes them and padded to ``CHARS2VEC_LEN``: each misspelling's nearest
    correct word (cosine) is its own spelling for nearly all of sixteen words (one-hot order or width wrong would
    scatter them)."""
    session, model = _session("chars2vec_en300"), chars2vec_model()
    rng = np.random.default_rng(1)
    words = english_words()
    right = [words[int(i)] for i in rng.integers(len(words), size=16)]
    wrong = [_typo(word, rng) for word in right]

    def vectors(batch: list[str]) -> np.ndarray:
        fed = chars2vec_inputs(model, batch)
        padded = np.stack([np.pad(fed[w][0], ((0, CHARS2VEC_LEN - fed[w].shape[1]), (0, 0))) for w in batch])
        out = np.concatenate([session.run(None, {"lstm_input": row[None]})[0] for row in padded])
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    similarity = vectors(right) @ vectors(wrong).T
    assert (similarity.argmax(axis=0) == np.arange(16)).mean() >= 0.85


def test_tashkeel_bilstm_marks_the_fatiha_where_the_gold_does() -> None:
    """The ids the bilstm backend makes from the undiacritized verses: its classes put a mark on a letter where the
    gold text has one for most letters (about 91 %)."""
    models = tashkeel_module()
    backend = tashkeel_backend("bilstm")
    bare = models._strip(FATIHA)  # noqa: SLF001
    ids = tashkeel_ids(backend, "bilstm", bare)
    classes = _session("tashkeel_bilstm").run(None, {"input_ids": ids})[0][0].argmax(-1)
    assert len(classes) == len(bare)
    assert ((classes != 0) == models._marks_of(FATIHA)).mean() > 0.85  # noqa: SLF001


def test_tashkeel_rawi_v3_diacritizes_the_basmala_as_the_package_documents() -> None:
    """rawi V3's presence and value heads on the ids its backend makes, decoded as the backend decodes them, give
    the Basmala of the package's docstring."""
    import unicodedata

    backend = tashkeel_backend("rawi_v3")
    text = "بسم الله الرحمن الرحيم"
    ids = tashkeel_ids(backend, "rawi_v3", text)
    presence, value = _session("tashkeel_rawi_v3").run(["presence", "value"], {"input": ids})
    bare = "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")
    out = "".join(ch + (backend.i2d[int(v)] if p > 0 and unicodedata.category(ch).startswith("L") else "")
                  for ch, p, v in zip(bare, presence[0], value[0].argmax(-1), strict=True))
    assert unicodedata.normalize("NFC", out) == BASMALA == backend.diacritize(text)


@pytest.mark.parametrize("name", [model.name for model in BATCH13_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(spec.name for spec in session.get_inputs()) == sorted(shapes)
    types = {spec.name: spec.type for spec in session.get_inputs()}
    dtypes = {"tensor(int64)": np.int64, "tensor(float)": np.float32}
    feed = {}
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        assert value.dtype == dtypes[types[key]]
        if value.dtype == np.int64:
            assert shapes[key][1] == TASHKEEL_LEN and (value > 1).mean() > 0.95  # known characters, no padding
        feed[key] = value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")
