"""Held-out text embedders: a sentence encoder and a character-level word embedder
(tests/realmodels/models/text_embeddings.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.text_embeddings import (
    CHARS2VEC_LEN,
    _typo,
    chars2vec_inputs,
    chars2vec_model,
    english_words,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


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


@pytest.mark.parametrize("name", ["chars2vec_en300"])
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
        feed[key] = value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")
