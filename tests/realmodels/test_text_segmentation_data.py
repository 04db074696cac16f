"""Held-out text segmenters: Chinese words (Baidu LAC), Russian morphemes (slovorez) and Thai words
(tests/realmodels/models/text_segmentation.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.text_segmentation import (
    SLOVOREZ_LEN,
    THAI_LENGTH,
    THAI_SENTENCES,
    THAI_THRESHOLD,
    slovorez_config,
    slovorez_dictionary,
    slovorez_ids,
    slovorez_tokenizer,
    thai_line,
    thai_tokenizer,
    word_starts,
)


def _gold_tags(morphemes: list[tuple[str, int]], label2id: dict[str, int], type_names: dict[int, str]) -> list[int]:
    """The BIES tag ids of a word's gold morphemes (S- for a one-letter morpheme, else B-, I-..., E-)."""
    tags = []
    for text, kind in morphemes:
        name = type_names[kind]
        if len(text) == 1:
            tags.append(label2id[f"S-{name}"])
        else:
            tags += [label2id[f"B-{name}"], *[label2id[f"I-{name}"]] * (len(text) - 2), label2id[f"E-{name}"]]
    return tags


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_slovorez_segments_the_dictionary_words_and_ignores_padding() -> None:
    """The ids made here reproduce the wheel's gold segmentations for most characters (the package reports 98 %
    tag accuracy on its test split), and padding to ``SLOVOREZ_LEN`` tags each word as padding to the package's
    ``maxlen`` (64) does. Padding matters: a word fed alone, unpadded, loses about three points of accuracy."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(BY_NAME["slovorez_morphemes"].fetch()), providers=["CPUExecutionProvider"])
    tokenizer, config = slovorez_tokenizer(), slovorez_config()
    label2id = config["mapping"]["label2id"]
    type_names = {2: "PREF", 3: "ROOT", 4: "SUFF", 5: "END", 6: "POSTFIX", 7: "LINK", 8: "HYPH"}
    dictionary = slovorez_dictionary()
    words = list(dictionary)[:: max(1, len(dictionary) // 64)][:64]
    padded = session.run(None, {"input_layer": slovorez_ids(tokenizer, words)})[0].argmax(-1)
    right = total = 0
    for row, word in zip(padded, words, strict=True):
        gold = _gold_tags(dictionary[word], label2id, type_names)
        assert len(gold) == len(word) <= SLOVOREZ_LEN
        right += int((row[:len(word)] == np.array(gold)).sum())
        total += len(word)

    longest = np.pad(slovorez_ids(tokenizer, words), ((0, 0), (0, config["model_specs"]["maxlen"] - SLOVOREZ_LEN)))
    assert np.array_equal(session.run(None, {"input_layer": longest})[0].argmax(-1)[:, :SLOVOREZ_LEN], padded)
    assert right / total > 0.9


@pytest.mark.parametrize("name", ["slovorez_morphemes"])
def test_slovorez_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    feed = {}
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        assert value.dtype == (np.int32 if types[key] == "tensor(int32)" else np.float32)
        feed[key] = value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


def test_thai_feed_is_what_the_packages_tokenizer_feeds() -> None:
    """``tokenize`` feeds (1, len(text)) int64 ids of ``characters.json`` (a space and Thai letters known, ASCII
    punctuation ``<PUNC>``, anything else ``<UNK>``); the feed pads it with ``<PAD>`` (0) to 128."""
    with thai_tokenizer() as feed:
        chars = feed.tokenizer.dataset.dict
        words = thai_line(5)
        text = "".join(words)
        fed = feed(text)
        marked = feed(text[:20] + "!" + "\u20ac")
    assert fed.shape == (1, THAI_LENGTH) and fed.dtype == np.int64 and chars["<PAD>"] == 0
    np.testing.assert_array_equal(fed[0, : len(text)], [chars[c] for c in text])
    assert not fed[0, len(text) :].any() and fed[0, : len(text)].all()
    assert list(marked[0, 20:23]) == [chars["<PUNC>"], chars["<UNK>"], 0]
    assert " " in words and all(len("".join(thai_line(seed))) <= THAI_LENGTH for seed in range(50))


def test_attacut_export_is_the_packages_network() -> None:
    """The ONNX export gives the logits the package's own network gives on the unpadded line: the padding does not
    change them."""
    import torch

    session = _session("attacut_thai")
    with thai_tokenizer() as feed:
        for seed in (6, 7, 8):
            text = "".join(thai_line(seed))
            fed = feed(text)
            ids = torch.from_numpy(fed[:, : len(text)])
            with torch.no_grad():
                want = feed.tokenizer.model((ids, torch.tensor([len(text)]))).numpy()
            got = session.run(["boundary_logits"], {"characters": fed})[0][0, : len(text)]
            np.testing.assert_allclose(got, want, atol=1e-4)


def test_attacut_finds_the_word_boundaries() -> None:
    """On 40 lines, at the package's threshold, the word starts found have an F1 above 0.93 against the words the
    lines were written in, and the words are the package's own ``tokenize``'s; the spaces between sentences and the
    sentences' first words always start words. (The model was trained on BEST-2010, which splits some dictionary
    words the sentences keep whole:
    นัก|เรียน, ต้น|ไม้; those count as misses here.)"""
    from scipy.special import expit

    session = _session("attacut_thai")
    found = wanted = hits = 0
    with thai_tokenizer() as feed:
        for seed in range(100, 140):
            words = thai_line(seed)
            text = "".join(words)
            logits = session.run(["boundary_logits"], {"characters": feed(text)})[0][0, : len(text)]
            starts = set(np.flatnonzero(expit(logits) >= THAI_THRESHOLD)) - {0}
            truth = set(word_starts(words).tolist()) - {0}
            found, wanted, hits = found + len(starts), wanted + len(truth), hits + len(starts & truth)
            spaces = [i for i, c in enumerate(text) if c == " "]
            assert {*spaces, *(i + 1 for i in spaces)} <= starts, (seed, text)
            ours = [text[a:b] for a, b in zip([0, *sorted(starts)], [*sorted(starts), len(text)], strict=True)]
            assert feed.tokenizer.tokenize(text) == ours
    precision, recall = hits / found, hits / wanted
    assert 2 * precision * recall / (precision + recall) > 0.93, (precision, recall)
    assert len(THAI_SENTENCES) == 30


@pytest.mark.parametrize("name", ["attacut_thai"])
def test_attacut_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    # Thai character ids, padded with <PAD>
    characters = first["characters"]
    assert characters.dtype == np.int64 and list(characters.shape[1:]) == shapes["characters"][1:]
    assert (characters[:, 0] > 0).all() and (characters == 0).any() and characters.max() < 139
    outputs = session.run(None, {"characters": characters[:1]})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
