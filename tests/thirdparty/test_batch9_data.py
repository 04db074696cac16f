"""Held-out batch 9 (tests/thirdparty/heldout_batch9.py): registered and held out, its front ends compute what the
packages' own code computes, and its data are deterministic and shaped as each model reads them."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.audio import speech_like
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch4 import wheel_modules
from tests.thirdparty.heldout_batch9 import BATCH9_MODELS, EFFICIENTWORD, PIPECAT
from tests.thirdparty.speech_frontends import logfbank, whisper_log_mel

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


def test_batch9_is_registered_held_out() -> None:
    """Held out on every target whose artifact the build makes: no TFLite from an int8 QDQ input (Smart Turn), no
    QDQ ONNX from a TFLite input (BirdNET, the siamese pair); the ResNet's first-run misses fixed the mobile-npu and
    Rockchip profiles, so it is tuning there; the species-range model's Sins fixed RK3576's, its Not -> Cast before a
    Mul by zero RK3588's (and the RKNN adapter)."""
    tuned_on = {"ewn_resnet50_arc": ["mobile-npu", "rk3588", "rk3576"], "birdnet_meta": ["rk3588", "rk3576"]}
    for model in BATCH9_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        tuned = tuned_on.get(model.name, [])
        assert LISTED[model.name].get("tuned_on", []) == tuned
        expected = {".onnx": 5, ".hdf5": 5, ".tflite": 4}[model.suffix] - (model.name == "smart_turn_v3") * 2
        assert len(LISTED[model.name]["targets"]) == expected


def test_logfbank_is_efficientword_nets_own() -> None:
    """EfficientWord-Net's ``logfbank`` (python_speech_features' code, in the wheel) on the same 1.5 s window."""
    wave = speech_like(1.5, 7)
    with wheel_modules(EFFICIENTWORD, ("eff_word_net.audio_utils",), ()):
        theirs = sys.modules["eff_word_net.audio_utils"].logfbank(
            wave, samplerate=16000, winlen=0.025, winstep=0.01, nfilt=64, nfft=512, preemph=0.0)
    np.testing.assert_allclose(logfbank(wave), theirs, atol=1e-4)
    assert logfbank(wave).shape == (149, 64)


def test_whisper_log_mel_is_pipecats_own() -> None:
    """pipecat's vendored Whisper feature extractor (the wheel's ``_whisper_features.py``) on a 5 s turn."""
    wave = speech_like(5.0, 8)
    module = "pipecat.audio.turn.smart_turn._whisper_features"
    with wheel_modules(PIPECAT, (module,), ()):
        theirs = sys.modules[module].compute_whisper_log_mel_features(wave, do_normalize=True)
    np.testing.assert_allclose(whisper_log_mel(wave), theirs, atol=1e-5)


@pytest.mark.parametrize("name", ["smart_turn_v3", "birdnet_meta", "fer_emotion"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    expected = {"smart_turn_v3": ("input_features", (80, 800)), "birdnet_meta": ("serving_default_MNET_INPUT:0", (3,)),
                "fer_emotion": ("input_1", (64, 64, 1))}[name]
    (key, value), = first.items()
    assert (key, value.shape[1:]) == expected and np.array_equal(value, again[key]) and np.isfinite(value).all()
    if name == "birdnet_meta":  # latitude, longitude and a week of BirdNET's 48-week year
        assert (np.abs(value[:, 0]) <= 90).all() and (np.abs(value[:, 1]) <= 180).all()
        assert set(value[:, 2]) <= set(range(1, 49))
    if name == "fer_emotion":
        assert value.min() >= -1 and value.max() <= 1
