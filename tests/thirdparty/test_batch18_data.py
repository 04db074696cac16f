"""Held-out batch 18 (tests/thirdparty/heldout_batch18.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them, and each model doing its job
on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch18 import (
    BATCH18_MODELS,
    EEG_CAP,
    EEG_RATE,
    EEG_SECONDS,
    IC_CLASSES,
    IC_SOURCES,
    IC_VIEWS,
    IMU_RATE,
    IMU_SETTLE,
    RIANN_STATE,
    THAI_LENGTH,
    THAI_SENTENCES,
    THAI_THRESHOLD,
    component_views,
    eeg_recording,
    iclabel_labeller,
    imu_motion,
    inclination_error,
    riann_stepper,
    thai_line,
    thai_tokenizer,
    word_starts,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"riann_attitude": ["rk3588", "rk3576"]}


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch18_is_registered_held_out_on_every_target() -> None:
    for model in BATCH18_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- ICLabel


def test_ic_feed_is_what_the_packages_feature_code_makes() -> None:
    """The package's ONNX backend feeds four rows per component (the map, negated, mirrored left to right, both;
    the spectra repeated), component c's rows every 12th; the features are its ``get_iclabel_features`` scaled by
    0.99: maps of peak 0.99 and zero outside the head, PSDs of peak 0.99, autocorrelations from a lag of 10 ms
    (negative there for the mains, positive for alpha)."""
    raw, ica = eeg_recording(3)
    assert raw.get_data().shape == (len(EEG_CAP), EEG_RATE * EEG_SECONDS) and np.abs(raw.get_data()).max() < 1e-3
    with iclabel_labeller() as feed:
        fed = feed(raw, ica)
        topo, psd, autocorr = feed.modules["iclabel.features"].get_iclabel_features(raw, ica)
    count = len(IC_SOURCES)
    assert {key: value.shape for key, value in fed.items()} == {
        "topo": (IC_VIEWS * count, 1, 32, 32), "psds": (IC_VIEWS * count, 1, 1, 100),
        "autocorr": (IC_VIEWS * count, 1, 1, 100)}
    assert all(value.dtype == np.float32 for value in fed.values())
    maps = np.transpose(topo, (3, 2, 0, 1))
    np.testing.assert_array_equal(fed["topo"][:count], maps)
    np.testing.assert_array_equal(fed["topo"][count : 2 * count], -maps)
    np.testing.assert_array_equal(fed["topo"][2 * count : 3 * count], maps[..., ::-1])
    np.testing.assert_array_equal(fed["topo"][3 * count :], -maps[..., ::-1])
    for view in range(IC_VIEWS):
        np.testing.assert_array_equal(fed["psds"][view * count : (view + 1) * count], np.transpose(psd, (3, 2, 0, 1)))
        np.testing.assert_array_equal(fed["autocorr"][view * count : (view + 1) * count],
                                      np.transpose(autocorr, (3, 2, 0, 1)))
    np.testing.assert_allclose(np.abs(fed["topo"]).max(axis=(1, 2, 3)), 0.99, rtol=1e-6)
    assert fed["topo"][0, 0, 0, 0] == 0 and fed["topo"][0, 0, 16, 16] != 0  # the corners lie outside the head
    np.testing.assert_allclose(np.abs(fed["psds"]).max(axis=(1, 2, 3)), 0.99, rtol=1e-6)
    lag_10ms = fed["autocorr"][:count, 0, 0, 0]  # mains: half a 50 Hz (or 0.6 of a 60 Hz) cycle; alpha: a tenth
    assert np.abs(fed["autocorr"]).max() < 1.2 and lag_10ms[3] < 0 < lag_10ms[6]
    views = component_views(fed, 2)
    np.testing.assert_array_equal(views["topo"], fed["topo"][2::count])


def test_iclabel_labels_the_components_by_what_made_them() -> None:
    """On six recordings: the blinks and the saccades are eye, the mains line noise, the temporalis muscle, each
    with probability above 0.8; the ECG is heart in at least five; at least 90 % of the cortical components are
    brain; and the loose electrode's channel-noise probability is the highest of the twelve in at least four, the
    second highest at worst (its label itself wavers: ICLabel calls a lone electrode's drift and pops channel noise,
    other, brain or muscle, so the label is not asserted)."""
    session = _session("iclabel")
    kinds = [kind for kind, _ in IC_SOURCES]
    heart = brain = brains = loose_first = 0
    with iclabel_labeller() as feed:
        for seed in range(40, 46):
            fed = feed(*eeg_recording(seed))
            probs = np.concatenate([session.run(["labels"], component_views(fed, c))[0]
                                    for c in range(len(IC_SOURCES))])
            for component, kind in enumerate(kinds):
                if kind in ("eye", "line_noise", "muscle"):
                    assert probs[component, IC_CLASSES.index(kind)] > 0.8, (seed, IC_SOURCES[component])
            heart += int(probs[kinds.index("heart")].argmax() == IC_CLASSES.index("heart"))
            cortical = [c for c, kind in enumerate(kinds) if kind == "brain"]
            brain += int((probs[cortical].argmax(axis=1) == 0).sum())
            brains += len(cortical)
            noise = probs[:, IC_CLASSES.index("channel_noise")]
            above = int((noise > noise[kinds.index("channel_noise")]).sum())
            assert above <= 1, (seed, noise)
            loose_first += int(above == 0)
    assert heart >= 5 and brain / brains >= 0.9 and loose_first >= 4, (heart, brain, brains, loose_first)


def test_iclabel_batch_of_four_is_the_packages_mean_over_views() -> None:
    """The network takes a component's four views and answers one row: the package's whole feed (12 components,
    48 rows) gives the rows the per-component (4, ...) inputs give."""
    session = _session("iclabel")
    with iclabel_labeller() as feed:
        fed = feed(*eeg_recording(7))
    whole = session.run(["labels"], fed)[0]
    single = np.concatenate([session.run(["labels"], component_views(fed, c))[0] for c in range(len(IC_SOURCES))])
    assert whole.shape == (len(IC_SOURCES), len(IC_CLASSES))
    np.testing.assert_allclose(single, whole, atol=1e-6)
    np.testing.assert_allclose(whole.sum(axis=1), 1, atol=1e-5)


# --------------------------------------------------------------------------------------------- AttaCut


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



# --------------------------------------------------------------------------------------------- RIANN


def test_imu_feed_is_what_the_packages_predict_step_feeds() -> None:
    """Each step feeds (1, 1, 7) float32, the accelerometer, the gyroscope and the sample period, with the state
    the network returned on the step before (zeros on the first); the step-wise quaternions are the package's
    whole-sequence ``predict``'s."""
    import onnxruntime as ort

    from tests.thirdparty import fetch
    from tests.thirdparty.heldout_batch18 import RIANN

    acc, gyr, _ = imu_motion(3)
    with riann_stepper() as feed:
        quaternions, feeds = feed(acc, gyr)
        whole = feed.estimator.predict(acc, gyr, fs=IMU_RATE)
    assert len(feeds) == len(acc) and quaternions.shape == (len(acc), 4)
    for step in (0, 1, 250):
        fed = feeds[step]
        assert fed["input"].shape == (1, 1, 7) and fed["input"].dtype == np.float32
        assert fed["h0"].shape == RIANN_STATE and fed["h0"].dtype == np.float32
        np.testing.assert_array_equal(fed["input"][0, 0], np.float32([*acc[step], *gyr[step], 1 / IMU_RATE]))
    assert not feeds[0]["h0"].any() and feeds[1]["h0"].any()
    session = ort.InferenceSession(str(fetch.model_file(RIANN, "riann/riann.onnx")), providers=["CPUExecutionProvider"])
    _, state = session.run(None, feeds[249])
    np.testing.assert_array_equal(state, feeds[250]["h0"])
    np.testing.assert_allclose(quaternions, whole, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(quaternions, axis=1), 1, atol=1e-5)


def test_riann_tracks_the_inclination_through_motion() -> None:
    """On six recordings of free motion with 2 m/s^2 of linear acceleration, stepping the registered model from a
    zero state as the package does: after the first second the inclination error averages under 6 degrees (its
    95th percentile under 12), under half the accelerometer's own tilt error (14 degrees)."""
    from scipy.spatial.transform import Rotation

    session = _session("riann_attitude")
    for seed in range(60, 66):
        acc, gyr, truth = imu_motion(seed)
        state = np.zeros(RIANN_STATE, np.float32)
        estimate = []
        for a, g in zip(acc, gyr, strict=True):
            step = np.float32([*a, *g, 1 / IMU_RATE]).reshape(1, 1, 7)
            quaternion, state = session.run(None, {"input": step, "h0": state})
            estimate.append(quaternion[0, 0])
        error = inclination_error(np.array(estimate), truth)[IMU_SETTLE:]
        up = Rotation.from_quat(truth[:, [1, 2, 3, 0]]).inv().apply([0.0, 0.0, 1.0])
        tilt = np.degrees(np.arccos(np.clip((acc / np.linalg.norm(acc, axis=1, keepdims=True) * up).sum(1), -1, 1)))
        assert error.mean() < 6 and np.percentile(error, 95) < 12, (seed, error.mean())
        assert error.mean() < tilt[IMU_SETTLE:].mean() / 2, (seed, error.mean(), tilt.mean())


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH18_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    if name == "riann_attitude":  # one step: IMU readings and the carried state, a whole (2, 1, 1, 200) input
        assert list(first["input"].shape[1:]) == shapes["input"][1:] and list(first["h0"].shape[1:]) == shapes["h0"]
        assert all(value.dtype == np.float32 for value in first.values())
        np.testing.assert_allclose(first["input"][:, 0, 6], 1 / IMU_RATE)
        assert 5 < np.linalg.norm(first["input"][:, 0, :3], axis=1).min() and np.abs(first["h0"]).max() <= 1
        outputs = session.run(None, {"input": first["input"][:1], "h0": first["h0"][0]})
    elif name == "iclabel":  # each sample is a whole (4, ...) input: one component's four views
        for key, value in first.items():
            assert value.dtype == np.float32 and list(value.shape[1:]) == shapes[key], (key, value.shape)
        np.testing.assert_array_equal(first["topo"][:, 1], -first["topo"][:, 0])
        outputs = [np.concatenate([session.run(None, {key: value[k] for key, value in first.items()})[0]
                                   for k in range(len(first["topo"]))])]
        assert outputs[0].shape == (zoo.SMALL.evaluation, len(IC_CLASSES))
    else:  # Thai character ids, padded with <PAD>
        characters = first["characters"]
        assert characters.dtype == np.int64 and list(characters.shape[1:]) == shapes["characters"][1:]
        assert (characters[:, 0] > 0).all() and (characters == 0).any() and characters.max() < 139
        outputs = session.run(None, {"characters": characters[:1]})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
