"""Held-out speech models that tell when someone speaks: voice activity detectors and turn-end detection
(tests/realmodels/models/speech_activity.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.data.audio import speech_like
from tests.realmodels.data.speech_frontends import flashvad_features, int16_windows, whisper_log_mel
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import package_code, speech_activity
from tests.realmodels.models.package_code import wheel_modules
from tests.realmodels.models.speech_activity import PIPECAT


def test_javad_windows_are_its_log_mel() -> None:
    mels = speech_activity.javad_log_mels(speech_like(0.64, seed=0))
    assert mels.shape == (64, 64) and np.isfinite(mels).all()
    assert np.isclose(mels.max() - mels.min(), 2.0, atol=1e-5), "floored at max - 8 (in log10), scaled by 1/4"


@pytest.mark.parametrize("name", ["javad_tiny"])
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


def test_whisper_log_mel_is_pipecats_own() -> None:
    """pipecat's vendored Whisper feature extractor (the wheel's ``_whisper_features.py``) on a 5 s turn."""
    wave = speech_like(5.0, 8)
    module = "pipecat.audio.turn.smart_turn._whisper_features"
    with wheel_modules(PIPECAT, (module,), ()):
        theirs = sys.modules[module].compute_whisper_log_mel_features(wave, do_normalize=True)
    np.testing.assert_allclose(whisper_log_mel(wave), theirs, atol=1e-5)


@pytest.mark.parametrize("name", ["smart_turn_v3"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    expected = {"smart_turn_v3": ("input_features", (80, 800))}[name]
    (key, value), = first.items()
    assert (key, value.shape[1:]) == expected and np.array_equal(value, again[key]) and np.isfinite(value).all()


def test_flashvad_features_separate_speech_from_silence() -> None:
    """43 features per 10 ms frame; the log RMS (feature 40) is higher in the vowels than in the pauses."""
    wave = speech_like(1.8, seed=0)  # 1.2 s of syllables, then 0.6 s of near-silence
    features = flashvad_features(wave)
    assert features.shape[1] == 43 and np.isfinite(features).all()
    assert features[20:100, 40].mean() > features[130:170, 40].mean() + 1.5


def test_int16_windows_use_the_full_range() -> None:
    windows = int16_windows(1600, 3, seed=0)
    assert windows.shape == (3, 1, 1, 1600) and windows.dtype == np.int16
    assert (np.abs(windows.reshape(3, -1)).max(axis=1) == 32767).all()
