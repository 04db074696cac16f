"""Held-out speech-quality models: Microsoft's DNSMOS, PLCMOS and AECMOS (speechmos)
(tests/realmodels/models/speech_quality.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.data.audio import speech_like
from tests.realmodels.data.speech_frontends import mel_bank
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import speech_quality

MAKERS = {"plcmos_v2": speech_quality._plcmos, "dnsmos_p835": speech_quality.dnsmos_windows}  # noqa: SLF001


def test_plcmos_features_are_its_log_power_spectrum_of_lost_packets() -> None:
    wave = speech_quality.lost_packets(speech_like(speech_quality.PLC_SECONDS, seed=0), seed=0)
    assert (wave.reshape(-1, speech_quality.PACKET) == 0).all(axis=1).mean() == pytest.approx(0.125, abs=0.06)
    feats = speech_quality.plcmos_features(wave)
    assert feats.shape == (126, 257) and feats.dtype == np.float32 and np.isfinite(feats).all()


@pytest.mark.parametrize("name", ["dnsmos_p835", "plcmos_v2"])
def test_speechmos_data_has_the_networks_shapes_and_is_deterministic(name: str) -> None:
    ctx = zoo.Context(model=Path("unused"), folder=Path("unused"), size=zoo.SMALL)
    first, again = MAKERS[name](ctx, 3, 1), MAKERS[name](ctx, 3, 1)
    shapes = BY_NAME[name].config["input_shapes"]
    assert sorted(first) == sorted(shapes)
    for key, value in first.items():
        assert value.shape == (3, *shapes[key][1:]) and np.array_equal(value, again[key]), key
        assert np.isfinite(value).all()


def test_an_odd_fft_has_its_own_bin_frequencies() -> None:
    """librosa's n_fft = 513 (AECMOS): 257 bins, the last at 256 * 16000 / 513 Hz, short of 8 kHz."""
    bank = mel_bank(513, 4, 0, 8000, lambda f: f, lambda m: m)
    assert bank.shape == (4, 257) and bank[-1, -1] > 0  # the top triangle still reaches the last bin


def test_aecmos_log_mel_is_db_against_the_clip_maximum() -> None:
    mel = speech_quality.aecmos_log_mel(speech_quality.echo_scene("dt", 0)[1])
    assert mel.shape == (speech_quality.AEC_FRAMES, 160) and mel.dtype == np.float32
    assert mel.max() == pytest.approx(1.0) and mel.min() >= -1.0 - 1e-6, "(0 dB + 40) / 40 at the top, 80 dB range"


@pytest.mark.parametrize("talk", speech_quality.TALK_TYPES)
def test_echo_scenes_follow_the_talk_type(talk: str) -> None:
    far, mic, enh = speech_quality.echo_scene(talk, 3)
    loud = lambda x: float(np.sqrt(np.mean(x.astype(np.float64) ** 2)))  # noqa: E731
    assert (loud(far) > 0.01) == (talk != "nst")
    if talk != "nst":
        assert loud(enh) < loud(mic), "the canceller removes most of the echo"


def test_aecmos_markers_are_the_packages_scenario_frames() -> None:
    feats = speech_quality.aecmos_features("st", 1, markers=True)
    assert feats.shape == (3, speech_quality.AEC_FRAMES + speech_quality.MARKER_FRAMES, 160)
    tail = feats[:, speech_quality.AEC_FRAMES:speech_quality.AEC_FRAMES + 20, 0]
    assert list(tail[:, 0]) == [1.0, 0.0, 1.0], "far-end single talk: loopback 1, microphone 1 - fe_st = 0, output 1"
    assert not feats[:, -20:].any()


@pytest.mark.parametrize("name", ["aecmos_16k", "aecmos_scenarioless"])
def test_aecmos_data_has_the_networks_shapes_and_is_deterministic(name: str, tmp_path: Path) -> None:
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


@pytest.mark.parametrize("name", ["pdnsmos_p835"])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    """The personalized DNSMOS reads 9.01 s of audio."""
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
    assert list(first) == [spec.name] and value.shape[1:] == {"pdnsmos_p835": (144160,)}[name]
    assert np.array_equal(value, again[spec.name]) and np.isfinite(value).all()
