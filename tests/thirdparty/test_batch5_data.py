"""The fifth held-out batch (tests/thirdparty/heldout_batch5.py): its data makers and its one export.

The inputs must be what the wheels' own code feeds their networks (the g2p-id encodings, PLCMOS's spectrum,
BeatNet's 272 madmom features), of the shapes the networks take, and the same on every run; the BeatNet export
must give what the wheel's PyTorch module gives.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import heldout_batch5 as batch5
from tests.thirdparty import zoo
from tests.thirdparty.audio import speech_like
from tests.thirdparty.heldout_batch4 import example_inputs, export

pytestmark = [pytest.mark.thirdparty]

BY_NAME = {model.name: model for model in batch5.BATCH5_MODELS}
MAKERS = {"g2p_id_encoder": batch5._g2p_encoder, "g2p_id_decoder": batch5._g2p_decoder,  # noqa: SLF001
          "g2p_id_bert": batch5._g2p_bert, "plcmos_v2": batch5._plcmos,  # noqa: SLF001
          "dnsmos_p835": batch5.dnsmos_windows, "beatnet": batch5._beatnet}  # noqa: SLF001


def test_encoder_one_hot_is_the_packages_encoding() -> None:
    seq = batch5.encoder_one_hot("kerja")
    assert seq.shape == (24, 28) and np.array_equal(seq.sum(axis=1), np.ones(24))
    g2id = batch5._json("lstm/g2id.json")  # noqa: SLF001
    assert [int(i) for i in seq[:5].argmax(axis=1)] == [g2id[c] for c in "kerja"]
    assert set(seq[5:].argmax(axis=1)) == {g2id[" "]}, "padded with the pad letter"


def test_bert_tokens_mask_every_e_and_spell_x_as_ks() -> None:
    token2id = batch5._json("bert/token2id.json")  # noqa: SLF001
    tokens = batch5.bert_tokens("teks")
    assert tokens.dtype == np.int64 and tokens.shape == (32,)
    assert list(tokens[:5]) == [token2id[c] for c in ("t", "[mask]", "k", "s")] + [0]
    assert list(batch5.bert_tokens("ekstra")[:1]) == [token2id["[mask]"]]
    assert list(batch5.bert_tokens("taxi")[:5]) == [token2id[c] for c in "taksi"]


def test_decoder_steps_follow_the_greedy_loop_to_its_end() -> None:
    steps = batch5.decoder_steps(["makan"])
    assert 2 <= len(steps) <= 26
    p2id = batch5._json("lstm/p2id.json")  # noqa: SLF001
    assert int(steps[0]["input_2"].argmax()) == p2id["\t"], "starts from the begin token"
    assert all(s["input_3"].shape == (256,) and s["input_4"].shape == (256,) for s in steps)
    assert not np.array_equal(steps[0]["input_3"], steps[-1]["input_3"]), "the states move on"


def test_plcmos_features_are_its_log_power_spectrum_of_lost_packets() -> None:
    wave = batch5.lost_packets(speech_like(batch5.PLC_SECONDS, seed=0), seed=0)
    assert (wave.reshape(-1, batch5.PACKET) == 0).all(axis=1).mean() == pytest.approx(0.125, abs=0.06)
    feats = batch5.plcmos_features(wave)
    assert feats.shape == (126, 257) and feats.dtype == np.float32 and np.isfinite(feats).all()


def test_beatnet_features_are_the_272_values_its_network_reads() -> None:
    feats = batch5.BEATNET_FEATURES(np.zeros(22_050, np.float32))
    assert feats.shape == (50, 272), "1 s at 50 fps; 136 log bands and their difference"


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_data_has_the_networks_shapes_and_is_deterministic(name: str) -> None:
    ctx = zoo.Context(model=Path("unused"), folder=Path("unused"), size=zoo.SMALL)
    first, again = MAKERS[name](ctx, 3, 1), MAKERS[name](ctx, 3, 1)
    shapes = BY_NAME[name].config["input_shapes"]
    assert sorted(first) == sorted(shapes)
    for key, value in first.items():
        assert value.shape == (3, *shapes[key][1:]) and np.array_equal(value, again[key]), key
        assert np.isfinite(value).all()


def test_beatnet_export_matches_the_wheels_pytorch_module(tmp_path: Path) -> None:
    import onnxruntime as ort
    import torch

    model = BY_NAME["beatnet"]
    assert isinstance(model, batch5.TorchExport)
    path = export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = example_inputs(model, seed=5)
    (got,) = session.run(None, {"data": inputs[0].numpy()})
    with torch.no_grad():
        want = model.network()(*inputs)
    assert got.shape == (1, 3, batch5.BEATNET_FRAMES) and np.abs(got - want.numpy()).max() < 1e-4
