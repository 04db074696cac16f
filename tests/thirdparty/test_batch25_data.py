"""Held-out batch 25 (tests/thirdparty/heldout_batch25.py): registered and held out on every target, its data made
as the package feeds its model, deterministic and shaped as the model reads them, and the model doing its job on
them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout_batch25 import (
    ACC_RATE,
    ACTIVITIES,
    BATCH25_MODELS,
    BINS,
    FRAMES,
    HAR_SCALE,
    HEART_RATE,
    HUMANACTIVITY,
    MADE,
    MAX_HZ,
    MIN_HZ,
    PPG_RATE,
    RATE,
    WINDOW,
    G,
    accelerometer_window,
    beliefppg_feeder,
    beliefppg_reference,
    bin_bpm,
    export_beliefppg,
    export_har,
    har_feeder,
    har_network,
    spectra_with_truth,
    windows_with_truth,
    wrist_recording,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]
BY_NAME = {model.name: model for model in BATCH25_MODELS}

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"humanactivity_har_cnn": ["rk3588"], "beliefppg_spectral": ["rk3588", "rk3576"]}

_NAME = "humanactivity_har_cnn"
_BELIEF = "beliefppg_spectral"


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch25_is_registered_held_out_on_every_target() -> None:
    from tests.thirdparty.heldout import BY_NAME as REGISTERED

    for model in BATCH25_MODELS:
        assert REGISTERED[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


def test_feed_is_what_the_packages_recognizer_feeds() -> None:
    """The recognizer standardizes each reading per axis by the scale file it ships (mean and standard deviation of
    x, y and z) and feeds the last 90 readings as one (1, 90, 3) batch, in reading order; its model is loaded from
    the package's architecture and weights files and the scale file is read by name."""
    raw = accelerometer_window("walking", 3)
    with har_feeder() as feed:
        fed = feed(raw)
        loaded = dict(feed.loaded)
    scale = np.loadtxt(fetch.model_file(HUMANACTIVITY, HAR_SCALE), delimiter=",")
    assert scale.shape == (3, 2)
    assert fed.shape == (1, WINDOW, 3) and fed.dtype == np.float32
    np.testing.assert_allclose(fed[0], (raw - scale[:, 0]) / scale[:, 1], rtol=1e-6, atol=1e-6)
    assert loaded == {"csv": "har_scale_parameters.csv", "open": "har_model_json",
                      "json": fetch.model_file(HUMANACTIVITY, HAR_SCALE).with_name("har_model_json").read_text(),
                      "weights": "har_model_save"}


def test_windows_are_the_activities_and_deterministic() -> None:
    """Standing holds about 1 g along the thigh (y), sitting across it; walking and jogging swing around 1 g along
    it at their cadence, jogging about twice as hard; windows are the same for the same seed."""
    for k, activity in enumerate(MADE):
        window = accelerometer_window(activity, k)
        assert window.shape == (WINDOW, 3) and np.array_equal(window, accelerometer_window(activity, k))
        mean, spread = window.mean(axis=0), window.std(axis=0)
        assert 0.85 * G < np.linalg.norm(mean) < 1.15 * G, (activity, mean)
        if activity == "standing":
            assert mean[1] > 0.9 * G and spread.max() < 0.05 * G
        elif activity == "sitting":
            assert mean[2] > 0.8 * G and mean[1] < 0.5 * G and spread.max() < 0.05 * G
        else:
            assert mean[1] > 0.8 * G and spread[1] > (0.2 if activity == "walking" else 0.5) * G, (activity, spread)
            # the dominant frequency along the thigh is the step rate (or its harmonic)
            spectrum = np.abs(np.fft.rfft(window[:, 1] - window[:, 1].mean()))
            peak = np.fft.rfftfreq(WINDOW, 1 / RATE)[int(np.argmax(spectrum))]
            assert 1.5 < peak < 6.5, (activity, peak)
    data = windows_with_truth(8, 3)
    again = windows_with_truth(8, 3)
    assert all(np.array_equal(data[key], again[key]) for key in data)
    assert sorted(set(data["activity"].tolist())) == sorted(ACTIVITIES.index(a) for a in MADE)


def test_the_model_recognizes_the_activities() -> None:
    """On 96 windows (24 of each activity made), the registered model's argmax is the activity on 90 % or more
    (95-98 % seen over three seeds): sitting and standing always, walking on 20 of 24 or more (23-24 seen; its one
    miss is downstairs, its nearest WISDM class), jogging on 18 or more (20-23 seen); a moving window is never taken
    for a posture, nor a posture for moving."""
    session = _session(_NAME)
    data = windows_with_truth(96, 7)
    probs = np.concatenate([session.run(["activity_probs"], {"acceleration": data["acceleration"][k:k + 1]})[0]
                            for k in range(96)])
    assert probs.shape == (96, len(ACTIVITIES)) and ((probs >= 0) & (probs <= 1)).all()
    predicted, truth = probs.argmax(axis=1), data["activity"]
    assert (predicted == truth).mean() >= 0.9, (predicted, truth)
    postures = {ACTIVITIES.index("sitting"), ACTIVITIES.index("standing")}
    for activity in MADE:
        index = ACTIVITIES.index(activity)
        hits = int((predicted[truth == index] == index).sum())
        assert hits >= {"sitting": 24, "standing": 24, "walking": 20, "jogging": 18}[activity], (activity, hits)
    still = np.isin(truth, list(postures))
    assert np.array_equal(np.isin(predicted, list(postures)), still)


def test_export_is_the_packages_network() -> None:
    """The registered model computes what the package's model (built by its own ``model_from_json`` and
    ``load_weights``) computes."""
    data = windows_with_truth(4, 5)
    expected = har_network().predict(data["acceleration"], verbose=0)
    session = _session(_NAME)
    got = np.concatenate([session.run(["activity_probs"], {"acceleration": data["acceleration"][k:k + 1]})[0]
                          for k in range(4)])
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_cached_export_is_this_modules_export(tmp_path: Path) -> None:
    import onnx

    export_har(tmp_path / f"{_NAME}.onnx")
    fresh, registered = onnx.load(str(tmp_path / f"{_NAME}.onnx")), onnx.load(str(BY_NAME[_NAME].fetch()))
    # the same ops (tf2onnx does not keep one topological order from run to run)
    assert sorted(n.op_type for n in fresh.graph.node) == sorted(n.op_type for n in registered.graph.node)
    assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input] == ["acceleration"]
    assert [o.name for o in registered.graph.output] == ["activity_probs"]


# --------------------------------------------------------------------------------------------- beliefppg


def test_recordings_are_pulses_at_the_heart_rate_and_deterministic() -> None:
    for seed in range(6):
        recording = wrist_recording(seed)
        again = wrist_recording(seed)
        assert all(np.array_equal(recording[key], again[key]) for key in ("ppg", "acc"))
        assert recording["ppg"].shape == (20 * PPG_RATE, 1) and recording["acc"].shape == (20 * ACC_RATE, 3)
        assert 0.95 * HEART_RATE[0] < recording["bpm"] < 1.05 * HEART_RATE[1]
        # the PPG's strongest frequency in 0.5-3.5 Hz is the heart rate (or, slow, its second harmonic)
        ppg = recording["ppg"][:, 0] - recording["ppg"][:, 0].mean()
        spectrum = np.abs(np.fft.rfft(ppg * np.hanning(len(ppg))))
        frequency = np.fft.rfftfreq(len(ppg), 1 / PPG_RATE)
        band = (frequency > MIN_HZ) & (frequency < MAX_HZ)
        peak = frequency[band][int(np.argmax(spectrum[band]))] * 60
        assert min(abs(peak - recording["bpm"]), abs(peak - 2 * recording["bpm"])) < 8, (seed, peak, recording["bpm"])
        # the wrist: 1 g of gravity
        assert 0.8 < np.linalg.norm(recording["acc"].mean(axis=0)) < 1.2


def test_beliefppg_feed_is_what_the_package_feeds() -> None:
    """``infer_hr_uncertainty`` without the time-domain backbone loads the package's no-time-backbone model and
    feeds it, for 20 s of PPG and accelerometer, one input: the package's ``prepare_session_spec`` (band-passed,
    resampled to 25 Hz, 535-point FFT amplitudes between 0.5 and 3.5 Hz, 8 s windows 2 s apart, PPG and
    accelerometer channels, standardized over the recording)."""
    recording = wrist_recording(4)
    with beliefppg_feeder() as feed:
        fed = feed(recording["ppg"], recording["acc"])
        loaded = list(feed.loaded)
        expected = feed.inference.prepare_session_spec(recording["ppg"], recording["acc"], PPG_RATE, ACC_RATE, 8, 2,
                                                       BINS, MIN_HZ, MAX_HZ)
    assert fed.shape == (1, FRAMES, BINS, 2) and fed.dtype == np.float32
    np.testing.assert_array_equal(fed[0], expected)
    assert abs(fed.mean()) < 1e-5 and abs(fed.std() - 1) < 1e-4
    assert len(loaded) == 1 and loaded[0].endswith("inference_model_notimebackbone")
    # the PPG channel's last frame peaks at the heart rate (FFT bin k is k x 25 / 535 Hz, the band from k = 11)
    peak = (11 + int(np.argmax(fed[0, -1, :, 0]))) * 25 / 535 * 60
    assert abs(peak - recording["bpm"]) < 6, (peak, recording["bpm"])


def test_beliefppg_estimates_the_heart_rate() -> None:
    """On 48 recordings (45-160 BPM, a third with the wrist swinging), the registered model's most probable bin is
    the heart rate of the last 8 s: within 4 BPM at the median (1.8 seen) and within 10 BPM on 90 % or more (47 of
    48 seen; its miss a 46 BPM pulse read at its second harmonic)."""
    session = _session(_BELIEF)
    data = spectra_with_truth(48, 25)
    probs = np.concatenate([session.run(["hr_probs"], {"spectrum": data["spectrum"][k:k + 1]})[0] for k in range(48)])
    assert probs.shape == (48, BINS)
    np.testing.assert_allclose(probs.sum(axis=1), 1, atol=1e-4)
    errors = np.abs(bin_bpm(probs.argmax(axis=1)) - data["bpm"])
    assert np.median(errors) < 4, errors
    assert (errors < 10).mean() >= 0.9, errors


def test_beliefppg_export_is_the_packages_network(tmp_path: Path) -> None:
    """The registered model computes what the package's own model (built by its ``load_inference_model``, in a
    legacy-Keras process) computes, up to its prior layer; and the cache holds this module's export."""
    import onnx

    spectra = spectra_with_truth(4, 5)["spectrum"]
    expected = beliefppg_reference(spectra, tmp_path)
    session = _session(_BELIEF)
    got = np.concatenate([session.run(["hr_probs"], {"spectrum": spectra[k:k + 1]})[0] for k in range(4)])
    np.testing.assert_allclose(got, expected, atol=1e-5)
    export_beliefppg(tmp_path / f"{_BELIEF}.onnx")
    fresh, registered = onnx.load(str(tmp_path / f"{_BELIEF}.onnx")), onnx.load(str(BY_NAME[_BELIEF].fetch()))
    # the same ops (tf2onnx does not keep one topological order from run to run)
    assert sorted(n.op_type for n in fresh.graph.node) == sorted(n.op_type for n in registered.graph.node)
    assert [i.name for i in registered.graph.input] == ["spectrum"]
    assert [o.name for o in registered.graph.output] == ["hr_probs"]


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH25_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        # standardized: the readings by the training data's statistics, the spectra over their recording
        assert np.abs(value).max() < 12 and np.abs(value).mean() < 2, (key, np.abs(value).max())
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:4]])
    assert outputs.shape[0] == 4
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0
