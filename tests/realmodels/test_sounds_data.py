"""Held-out models of environmental sound: bird song and bicycle bells (tests/realmodels/models/sounds.py): their data
made as each package feeds its model, deterministic and shaped as the model reads them, and the models doing their
job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.sounds import (
    BELL_RATE,
    BELL_THRESHOLD,
    BELL_WINDOW,
    SCENE_KINDS,
    bell_listener,
    bell_saved_model,
    street_scene,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


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


@pytest.mark.parametrize("name", ["bicycle_bell_crnn"])
def test_bicycle_bell_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    # 16 kHz audio in [-1, 1]: rumble and street sounds, bells in two of three
    waveform = first["waveform"]
    assert np.abs(waveform).max() <= 1 and 0.005 < waveform.std(axis=1).min()
    # one probability per window: its spread is over a scene of each kind
    outputs = [np.concatenate([session.run(None, {"waveform": first["waveform"][k : k + 1]})[0] for k in range(3)])]
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)


@pytest.mark.parametrize("name", ["birdnet_meta"])
def test_birdnet_meta_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    expected = {"birdnet_meta": ("serving_default_MNET_INPUT:0", (3,))}[name]
    (key, value), = first.items()
    assert (key, value.shape[1:]) == expected and np.array_equal(value, again[key]) and np.isfinite(value).all()
    # latitude, longitude and a week of BirdNET's 48-week year
    assert (np.abs(value[:, 0]) <= 90).all() and (np.abs(value[:, 1]) <= 180).all()
    assert set(value[:, 2]) <= set(range(1, 49))
