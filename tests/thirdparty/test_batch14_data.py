"""Held-out batch 14 (tests/thirdparty/heldout_batch14.py): registered and held out on every target, its data made
as each package feeds its model (SSCD: its published square recipe), deterministic and shaped as each model reads
them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch14 import (
    BATCH14_MODELS,
    SSCD_SIZE,
    SWIFT_RATE,
    SWIFT_SAMPLES,
    VOICE_BAND,
    sscd_edit,
    sscd_photos,
    sscd_pixels,
    swift_core,
    swift_feed,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"swift_f0": ["rk3588", "rk3576"]}


def test_batch14_is_registered_held_out_on_every_target() -> None:
    for model in BATCH14_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


def test_swift_f0_follows_the_known_pitch_of_speech_like_audio() -> None:
    """speech_like's glottal pulses run at 120 + 40 sin(2 pi 0.9 t) Hz: on clips fed as the package feeds them, the
    frames the model calls voiced are most of the speaking frames and their pitch is within 3 % of that contour
    (median about 0.5 %); a wrong sample rate, scale or band would move it."""
    from tests.thirdparty.audio import speech_like

    session, core = _session("swift_f0"), swift_core()
    wave = speech_like(3.0, 3)
    errors, voiced = [], []
    for start in (0, 8000, 16000):
        feed = swift_feed(core, wave[start:start + SWIFT_SAMPLES])
        pitch, confidence = session.run(["pitch", "confidence"], feed)
        t = (start + 256 * np.arange(pitch.shape[1])) / SWIFT_RATE
        contour = 120 + 40 * np.sin(2 * np.pi * 0.9 * t)
        sure = confidence[0] >= 0.5
        voiced.append(sure.mean())
        errors.extend(np.abs(pitch[0][sure] / contour[sure] - 1))
    assert np.mean(voiced) > 0.4 and np.median(errors) < 0.03


def test_swift_f0_keeps_pitch_inside_the_band_it_is_fed() -> None:
    """The rank-0 ``fmin``/``fmax`` inputs restrict the pitch bins: on music-like audio every frame's pitch lies in
    the singing-voice band, and narrowing the band changes what the model answers."""
    from tests.thirdparty.music import music_like

    session, core = _session("swift_f0"), swift_core()
    clip = music_like(2.0, 1, rate=SWIFT_RATE)[:SWIFT_SAMPLES]
    feed = swift_feed(core, clip, VOICE_BAND)
    assert feed["fmin"].shape == () and feed["fmin"].dtype == np.float32
    pitch = session.run(["pitch"], feed)[0][0]
    assert pitch.dtype == np.float64 and len(pitch) == SWIFT_SAMPLES // 256
    assert (pitch >= VOICE_BAND[0] * 0.97).all() and (pitch <= VOICE_BAND[1] * 1.03).all()
    default = session.run(["pitch"], swift_feed(core, clip))[0][0]
    narrow = session.run(["pitch"], swift_feed(core, clip, (300.0, 600.0)))[0][0]
    assert not np.allclose(default, narrow) and (narrow >= 290).all() and (narrow <= 620).all()


@pytest.mark.parametrize("name", ["sscd_int8", "sscd_distilled"])
def test_sscd_finds_the_original_of_each_edited_copy(name: str) -> None:
    """Copies made as the data are made (a crop, a flip, an overlay) of eight photographs: each copy's nearest
    original by descriptor similarity is its own, well above the others (the package's match threshold is 0.75); the
    descriptors come out unit-length."""
    session = _session(name)
    photos = [photo for name, photo in sscd_photos() if name != "cat"][:8]  # "cat" is a copy of "chelsea"
    rng = np.random.default_rng(0)

    def describe(images: list[Any]) -> np.ndarray:
        return np.concatenate([session.run(None, {"image": sscd_pixels(image)[None]})[0] for image in images])

    originals = describe(photos)
    assert np.allclose(np.linalg.norm(originals, axis=1), 1, atol=1e-3)
    for edit in ("crop", "flip_lr", "overlay"):
        similarity = describe([sscd_edit(photo, edit, rng) for photo in photos]) @ originals.T
        assert (similarity.argmax(axis=1) == np.arange(len(photos))).all(), edit
        assert np.median(np.diag(similarity)) > 0.75, edit


@pytest.mark.parametrize("name", [model.name for model in BATCH14_MODELS])
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
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    feed = {}
    for key, value in first.items():
        rank = len(specs[key].shape)
        # (N, samples) for the (1, samples) audio, as the earlier batches store a batch-1 input; (N,) for a scalar
        assert value.ndim == max(rank, 1), (key, value.shape)
        assert value.dtype == {"tensor(float)": np.float32, "tensor(uint8)": np.uint8}[specs[key].type]
        if key in shapes:
            assert list(value.shape[1:]) == shapes[key][1:]
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        feed[key] = np.asarray(value[0]) if rank == 0 else value[:1]  # a rank-0 tensor, not a numpy scalar
    if name == "swift_f0":
        assert first["audio"].shape[1] == SWIFT_SAMPLES and (np.abs(first["audio"]).max(axis=1) > 0.01).all()
        assert (first["fmin"] < first["fmax"]).all() and len(set(first["fmin"].tolist())) == 2
    else:  # photographs, not flat fields: every image spans a wide range of values
        assert first["image"].shape[1:] == (SSCD_SIZE, SSCD_SIZE, 3)
        assert (np.ptp(first["image"].reshape(len(first["image"]), -1), axis=1) > 100).all()
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs)
