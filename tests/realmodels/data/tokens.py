"""Token-id inputs for a BERT-style encoder, from real English sentences (standard-library docstrings).

The wheel ships no vocabulary, so each word gets a stable id in the WordPiece range
(``[CLS]`` 101 and ``[SEP]`` 102 kept, words hashed with SHA-256 into 1,000…30,521):
real sentence lengths, repeated words and padding, without claiming a real tokenizer.
"""

from __future__ import annotations

import hashlib

import numpy as np

from tests.realmodels.data.text_images import prose_lines

CLS, SEP, VOCAB = 101, 102, 30522


def _word_id(word: str) -> int:
    return 1000 + int.from_bytes(hashlib.sha256(word.lower().encode()).digest()[:4], "little") % (VOCAB - 1000)


def bert_inputs(count: int, length: int, seed: int = 0) -> dict[str, np.ndarray]:
    """``input_ids``, ``attention_mask``, ``token_type_ids``: int64 (N, length), padded with zeros."""
    ids = np.zeros((count, length), np.int64)
    mask = np.zeros((count, length), np.int64)
    rng = np.random.default_rng(seed)
    for i, line in enumerate(prose_lines(count, width=int(rng.integers(30, 6 * length)), seed=seed)):
        tokens = [CLS, *[_word_id(w) for w in line.split()][: length - 2], SEP]
        ids[i, :len(tokens)] = tokens
        mask[i, :len(tokens)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
