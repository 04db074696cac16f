"""Held-out models of how words are written and said: grapheme-to-phoneme, transliteration and
(tests/realmodels/models/text_spelling.py): their data made as each package feeds its model, deterministic and shaped
as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import text_spelling
from tests.realmodels.models.text_spelling import TASHKEEL_LEN, tashkeel_backend, tashkeel_ids, tashkeel_module

#: Al-Fatiha, verses 2 and 4-6, fully diacritized: the gold the bilstm's marks are compared with.
FATIHA = ("الْحَمْدُ لِلَّهِ رَبِّ الْعَالَمِينَ مَالِكِ يَوْمِ الدِّينِ "
          "إِيَّاكَ نَعْبُدُ وَإِيَّاكَ نَسْتَعِينُ اهْدِنَا الصِّرَاطَ الْمُسْتَقِيمَ")


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


#: The Basmala as the package's docstring says its models diacritize it.
BASMALA = "بِسْمِ اللَّهِ الرَّحْمَنِ الرَّحِيمِ"


MAKERS = {"g2p_id_encoder": text_spelling._g2p_encoder, "g2p_id_decoder": text_spelling._g2p_decoder,  # noqa: SLF001
          "g2p_id_bert": text_spelling._g2p_bert}  # noqa: SLF001


@pytest.mark.parametrize("name", ["name_romanizer_encoder"])
def test_romanizer_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] and np.array_equal(value, again[key])
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


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


@pytest.mark.parametrize("name", ["tashkeel_bilstm", "tashkeel_rawi_v3"])
def test_tashkeel_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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


def test_encoder_one_hot_is_the_packages_encoding() -> None:
    seq = text_spelling.encoder_one_hot("kerja")
    assert seq.shape == (24, 28) and np.array_equal(seq.sum(axis=1), np.ones(24))
    g2id = text_spelling._json("lstm/g2id.json")  # noqa: SLF001
    assert [int(i) for i in seq[:5].argmax(axis=1)] == [g2id[c] for c in "kerja"]
    assert set(seq[5:].argmax(axis=1)) == {g2id[" "]}, "padded with the pad letter"


def test_bert_tokens_mask_every_e_and_spell_x_as_ks() -> None:
    token2id = text_spelling._json("bert/token2id.json")  # noqa: SLF001
    tokens = text_spelling.bert_tokens("teks")
    assert tokens.dtype == np.int64 and tokens.shape == (32,)
    assert list(tokens[:5]) == [token2id[c] for c in ("t", "[mask]", "k", "s")] + [0]
    assert list(text_spelling.bert_tokens("ekstra")[:1]) == [token2id["[mask]"]]
    assert list(text_spelling.bert_tokens("taxi")[:5]) == [token2id[c] for c in "taksi"]


def test_decoder_steps_follow_the_greedy_loop_to_its_end() -> None:
    steps = text_spelling.decoder_steps(["makan"])
    assert 2 <= len(steps) <= 26
    p2id = text_spelling._json("lstm/p2id.json")  # noqa: SLF001
    assert int(steps[0]["input_2"].argmax()) == p2id["\t"], "starts from the begin token"
    assert all(s["input_3"].shape == (256,) and s["input_4"].shape == (256,) for s in steps)
    assert not np.array_equal(steps[0]["input_3"], steps[-1]["input_3"]), "the states move on"


@pytest.mark.parametrize("name", ["g2p_id_bert", "g2p_id_decoder", "g2p_id_encoder"])
def test_data_has_the_networks_shapes_and_is_deterministic(name: str) -> None:
    ctx = zoo.Context(model=Path("unused"), folder=Path("unused"), size=zoo.SMALL)
    first, again = MAKERS[name](ctx, 3, 1), MAKERS[name](ctx, 3, 1)
    shapes = BY_NAME[name].config["input_shapes"]
    assert sorted(first) == sorted(shapes)
    for key, value in first.items():
        assert value.shape == (3, *shapes[key][1:]) and np.array_equal(value, again[key]), key
        assert np.isfinite(value).all()
