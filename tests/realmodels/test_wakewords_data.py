"""Held-out wake-word and hotword models: openWakeWord's classifiers and EfficientWord-Net
(tests/realmodels/models/wakewords.py): their data made as each package feeds its model, deterministic and shaped as
the model reads them, and the models doing their job on them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.data.audio import speech_like
from tests.realmodels.data.speech_frontends import logfbank
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.package_code import wheel_modules
from tests.realmodels.models.wakewords import EFFICIENTWORD


@pytest.mark.parametrize("name", ["oww_weather"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    """The weather classifier reads 22 embeddings (not hey_jarvis's 16)."""
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    (spec,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_inputs()
    (value,) = first.values()
    assert list(first) == [spec.name] and value.shape[1:] == {"oww_weather": (22, 96)}[name]
    assert np.array_equal(value, again[spec.name]) and np.isfinite(value).all()


def test_logfbank_is_efficientword_nets_own() -> None:
    """EfficientWord-Net's ``logfbank`` (python_speech_features' code, in the wheel) on the same 1.5 s window."""
    wave = speech_like(1.5, 7)
    with wheel_modules(EFFICIENTWORD, ("eff_word_net.audio_utils",), ()):
        theirs = sys.modules["eff_word_net.audio_utils"].logfbank(
            wave, samplerate=16000, winlen=0.025, winstep=0.01, nfilt=64, nfft=512, preemph=0.0)
    np.testing.assert_allclose(logfbank(wave), theirs, atol=1e-4)
    assert logfbank(wave).shape == (149, 64)
