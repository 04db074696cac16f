"""Held-out batch 17 (tests/thirdparty/heldout_batch17.py): registered and held out on every target, its data made
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
from tests.thirdparty.heldout_batch17 import (
    BATCH17_MODELS,
    BELL_RATE,
    BELL_THRESHOLD,
    BELL_WINDOW,
    CR_SIDE,
    FIELD_KINDS,
    REM,
    SCENE_KINDS,
    SLEEP_CLASSES,
    SLEEP_EPOCHS,
    SLEEP_FEATURES,
    WAKE,
    bell_listener,
    bell_saved_model,
    deepcr_engine,
    deepcr_feed,
    hst_field,
    sleep_classifier_info,
    sleep_network,
    sleep_record,
    sleep_stager,
    street_scene,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {
    "sleepecg_gru": ["mobile-npu"],
    "bicycle_bell_crnn": ["mobile-npu", "rk3588", "rk3576"],
}


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch17_is_registered_held_out_on_every_target() -> None:
    for model in BATCH17_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- deepCR


def test_cr_feed_is_what_the_packages_clean_feeds() -> None:
    """``clean`` feeds the exposure itself (ACS-WFC's scale is 1, 256 px needs no padding) as (1, 1, H, W); a side
    that is not a multiple of 4 is zero-padded at the top and left."""
    engine = deepcr_engine()
    exposure, _ = hst_field("extragalactic", 3)
    feed = deepcr_feed(engine, exposure)
    assert feed.shape == (1, 1, CR_SIDE, CR_SIDE) and feed.dtype == np.float32
    np.testing.assert_array_equal(feed[0, 0], exposure)
    odd = deepcr_feed(engine, exposure[:254, :255])
    assert odd.shape == (1, 1, 256, 256) and not odd[0, 0, :2].any() and not odd[0, 0, :, :1].any()
    np.testing.assert_array_equal(odd[0, 0, 2:, 1:], exposure[:254, :255])


def test_deepcr_export_is_the_packages_network() -> None:
    """The ONNX export gives the probabilities the package's own ``maskNet`` (PyTorch) gives."""
    import torch

    engine = deepcr_engine()
    feed = deepcr_feed(engine, hst_field("globular_cluster", 4)[0])
    with torch.no_grad():
        want = engine.maskNet(torch.from_numpy(feed)).numpy()
    got = _session("deepcr_acs_wfc").run(["cr_probability"], {"image": feed})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_deepcr_finds_the_cosmic_rays_and_leaves_the_stars_and_galaxies() -> None:
    """On two exposures of each kind of field, at the package's 0.5 threshold, at least 85 % of the pixels hit by
    100 e- or more of cosmic-ray charge are masked (95 % over all six), and fewer than 0.2 % of the pixels more than
    one pixel from any hit are: not the stars' cores, the cluster's crowding or the galaxies' light. Sharp hits
    score near 1, the sky near 0."""
    from scipy.ndimage import binary_dilation

    session, engine = _session("deepcr_acs_wfc"), deepcr_engine()
    found = total = 0
    for kind in FIELD_KINDS:
        for seed in (50, 51):
            exposure, truth = hst_field(kind, seed)
            probability = session.run(["cr_probability"], {"image": deepcr_feed(engine, exposure)})[0][0, 0]
            masked = probability > 0.5
            far = ~binary_dilation(truth, iterations=1)
            recall = (masked & truth).sum() / truth.sum()
            assert recall > 0.85 and (masked & far).sum() / far.sum() < 0.002, (kind, seed, recall)
            assert np.median(probability[truth]) > 0.9 and np.median(probability[far]) < 0.01, kind
            found, total = found + int((masked & truth).sum()), total + int(truth.sum())
    assert found / total > 0.95, found / total


# --------------------------------------------------------------------------------------------- sleepecg


def test_sleep_feed_is_what_the_packages_extractor_makes() -> None:
    """``stage`` feeds the wheel's ``extract_features`` (its ``info.yml`` parameters: 120 s back, 150 s forward)
    of the record, 960 epochs of 36 features for an 8 h night, any NaN or inf set to the mask value -1; the
    metadata columns are the start time in seconds, the age and the gender."""
    info = sleep_classifier_info()
    assert info["mask_value"] == -1 and info["stages_mode"] == "wake-rem-nrem"
    with sleep_stager() as feed:
        record, stages = sleep_record(feed.modules, 7)
        features = feed(record)
        theirs, _, names = feed.modules["feature_extraction"].extract_features(
            [record], **info["feature_extraction_params"]
        )
    assert features.shape == (1, SLEEP_EPOCHS, SLEEP_FEATURES) and len(stages) == SLEEP_EPOCHS
    assert names[-3:] == ["recording_start_time", "age", "gender"] and len(names) == SLEEP_FEATURES
    want = np.where(np.isfinite(theirs[0]), theirs[0], -1).astype(np.float32)
    np.testing.assert_array_equal(features[0], want)
    start = record.recording_start_time
    assert features[0, 0, -3] == start.hour * 3600 + start.minute * 60
    assert features[0, 0, -2] == record.subject_data.age and features[0, 0, -1] == record.subject_data.gender
    assert (features == -1).mean() < 0.1  # a window the package cannot score is masked, not dropped


def test_sleepecg_export_is_the_packages_keras_model() -> None:
    """The ONNX export gives what the wheel's ``classifier.keras`` gives on a night, masked epochs included."""
    with sleep_stager() as feed:
        features = feed(sleep_record(feed.modules, 8)[0])
    want = sleep_network().predict(features, verbose=0)
    got = _session("sleepecg_gru").run(["stage_probs"], {"features": features})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_sleepecg_stages_the_nights_as_they_were_slept() -> None:
    """On four synthetic nights, scored as wake, REM or NREM: at least 70 % of epochs right, more than 80 % of NREM
    and of wake epochs found, and the REM probability on REM epochs more than twice what it is on the others."""
    session = _session("sleepecg_gru")
    with sleep_stager() as feed:
        for seed in range(30, 34):
            record, stages = sleep_record(feed.modules, seed)
            probs = session.run(["stage_probs"], {"features": feed(record)})[0][0]
            truth = np.select([stages == WAKE, stages == REM], [3, 2], 1)
            predicted = probs.argmax(-1)
            recall = {SLEEP_CLASSES[c]: float((predicted[truth == c] == c).mean()) for c in (1, 2, 3)}
            assert (predicted == truth).mean() > 0.7 and recall["NREM"] > 0.8 and recall["WAKE"] > 0.8, recall
            rem = probs[:, 2]
            assert rem[truth == 2].mean() > 2 * rem[truth != 2].mean(), (seed, rem[truth == 2].mean())


# --------------------------------------------------------------------------------------------- bicycle bell


def test_bell_feed_is_what_the_packages_listener_feeds() -> None:
    """The package's default ``AudioConfig`` is a 16000-sample window of 1000 frames of 16; its listener feeds the
    window's samples unchanged (no resampling at 16 kHz) with a batch axis, as float32."""
    with bell_listener() as feed:
        config = feed.config
        assert (config.window_size, config.chunk_size, config.frame_size) == (BELL_WINDOW, 1000, 16)
        scene = street_scene("trill", 5)
        fed = feed(scene)
    assert fed.shape == (1, BELL_WINDOW) and fed.dtype == np.float32 and config.sample_rate == BELL_RATE
    np.testing.assert_array_equal(fed[0], scene)
    assert np.abs(scene).max() <= 1


def test_bicycle_bell_export_is_the_packages_saved_model() -> None:
    """The ONNX export gives the probability the wheel's SavedModel (its ``serving_default``) gives."""
    import tensorflow as tf

    signature = tf.saved_model.load(str(bell_saved_model())).signatures["serving_default"]
    session = _session("bicycle_bell_crnn")
    for kind, seed in zip(SCENE_KINDS, (6, 7, 8), strict=True):
        scene = street_scene(kind, seed)[None]
        want = signature(wav_16000_mono_input=tf.constant(scene))["class_output"].numpy()
        got = session.run(["bell_probability"], {"waveform": scene})[0]
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_bicycle_bell_hears_the_bells_and_not_the_street() -> None:
    """On twelve scenes of each kind, at the package's 0.5 threshold: at least 75 % of the ring-ring trills and of
    the ding-dings are heard (85 % over both) and no bell-less street scene is (none above 0.1: the engine, the
    horn and the voices are not taken for a bell); the median probability is above 0.9 with a bell."""
    session = _session("bicycle_bell_crnn")
    probability = {
        kind: np.array([session.run(["bell_probability"], {"waveform": street_scene(kind, seed)[None]})[0][0]
                        for seed in range(60, 72)])
        for kind in SCENE_KINDS
    }
    heard = {kind: float((values > BELL_THRESHOLD).mean()) for kind, values in probability.items()}
    assert heard["trill"] >= 0.75 and heard["ding"] >= 0.75, heard
    assert (heard["trill"] + heard["ding"]) / 2 >= 0.85, heard
    assert probability["street"].max() < 0.1, probability["street"]
    assert np.median(np.concatenate([probability["trill"], probability["ding"]])) > 0.9


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH17_MODELS])
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
        assert value.dtype == np.float32 and np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    if name == "deepcr_acs_wfc":  # electrons: sky of tens to a hundred, stars and cosmic rays of thousands
        image = first["image"]
        assert 10 < np.median(image) < 200 and image.max() > 2000 and image.min() > -50
    elif name == "bicycle_bell_crnn":  # 16 kHz audio in [-1, 1]: rumble and street sounds, bells in two of three
        waveform = first["waveform"]
        assert np.abs(waveform).max() <= 1 and 0.005 < waveform.std(axis=1).min()
    else:  # HRV features, the mask value where a window cannot be scored, metadata constant over the night
        features = first["features"]
        assert (features == -1).mean() < 0.1
        assert all(len(np.unique(night[:, -3:], axis=0)) == 1 for night in features)
        heart_rate = features[:, :, 16]  # meanHR
        assert 40 < np.median(heart_rate[heart_rate > 0]) < 90
    if name == "bicycle_bell_crnn":  # one probability per window: its spread is over a scene of each kind
        outputs = [np.concatenate([session.run(None, {"waveform": first["waveform"][k : k + 1]})[0] for k in range(3)])]
    else:
        outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
