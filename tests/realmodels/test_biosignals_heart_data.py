"""Held-out models of the heart's electrical signal: ECG quality grading and sleep staging from heartbeats
(tests/realmodels/models/biosignals_heart.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import fetch, zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.biosignals_heart import (
    _ECG_H5,
    ECG_LEVELS,
    ECG_QUALITY,
    ECG_RATE,
    ECG_SECONDS,
    REM,
    SLEEP_CLASSES,
    SLEEP_EPOCHS,
    SLEEP_FEATURES,
    WAKE,
    ecg_checker,
    ecg_clean,
    ecg_like,
    ecg_noise,
    ecg_record_windows,
    sleep_classifier_info,
    sleep_network,
    sleep_record,
    sleep_stager,
)


def _keras(path: Path) -> Any:
    """The Keras HDF5 model at ``path``, loaded as edgepipe loads it (Keras 3, safe mode)."""
    import keras

    return keras.models.load_model(str(path), compile=False, safe_mode=True)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_ecg_windows_are_what_the_packages_checker_feeds() -> None:
    """The wheel's checker with its defaults cleans the whole record, then feeds 2 s windows every 1 s: three for a
    4 s record, each the cleaned record's slice."""
    checker = ecg_checker()
    assert (checker.input_length, checker.stride, checker.sampling_rate) == (2 * ECG_RATE, ECG_RATE, ECG_RATE)
    record = ecg_noise(ecg_like(ECG_SECONDS, 5), 0.5, 5)
    windows = ecg_record_windows(checker, record)
    cleaned = ecg_clean(record, ECG_RATE)
    assert windows.shape == (3, 2 * ECG_RATE) and windows.dtype == np.float32
    for k, window in enumerate(windows):
        np.testing.assert_allclose(window, cleaned[k * ECG_RATE:k * ECG_RATE + 2 * ECG_RATE], atol=1e-6)


def test_ecg_quality_grades_clean_ecg_clean_and_noisy_ecg_worse() -> None:
    """The package calls a window clean below 0.1 (oscnn2s's first threshold): the clean synthetic ECG's median
    score is below it, and the median rises with the noise level, above 0.5 once electrode motion artefacts are
    strong."""
    model, checker = _keras(fetch.model_file(ECG_QUALITY, _ECG_H5)), ecg_checker()
    medians = {}
    for level in (ECG_LEVELS[0], ECG_LEVELS[2], ECG_LEVELS[4]):
        windows = np.concatenate([ecg_record_windows(checker, ecg_noise(ecg_like(ECG_SECONDS, seed), level, seed))
                                  for seed in range(6)])
        medians[level] = float(np.median(np.asarray(model(windows[..., None]))))
    scores = list(medians.values())
    assert scores[0] < 0.1 and scores[0] < scores[1] < scores[2] and scores[2] > 0.5, medians


@pytest.mark.parametrize("name", ["ecg_quality_oscnn"])
def test_ecg_quality_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    keras_model = _keras(path)
    (key, value), = first.items()
    assert key == keras_model.inputs[0].name == "input_1" and value.dtype == np.float32
    assert value.shape[1:] == tuple(keras_model.inputs[0].shape[1:]) == (2 * ECG_RATE, 1)
    # ECG in mV with its R waves: every window spans more than the checker's 0.1 mV floor
    assert (np.ptp(value[..., 0], axis=1) > 0.5).all()
    scores = np.asarray(keras_model(value))
    assert scores.shape == (len(value), 1) and ((scores >= 0) & (scores <= 1)).all()


def test_sleep_feed_is_what_the_packages_extractor_makes() -> None:
    """``stage`` feeds the wheel's ``extract_features`` (its ``info.yml`` parameters: 120 s back, 150 s forward)
    of the record, 960 epochs of 36 features for an 8 h night, any NaN or inf set to the mask value -1; the
    metadata columns are the start time in seconds, the age and the gender."""
    info = sleep_classifier_info()
    assert info["mask_value"] == -1 and info["stages_mode"] == "wake-rem-nrem"
    with sleep_stager() as feed:
        record, stages = sleep_record(feed.modules, 7)
        features = feed(record)
        theirs, _, names = feed.modules["feature_extraction"].extract_features(
            [record], **info["feature_extraction_params"]
        )
    assert features.shape == (1, SLEEP_EPOCHS, SLEEP_FEATURES) and len(stages) == SLEEP_EPOCHS
    assert names[-3:] == ["recording_start_time", "age", "gender"] and len(names) == SLEEP_FEATURES
    want = np.where(np.isfinite(theirs[0]), theirs[0], -1).astype(np.float32)
    np.testing.assert_array_equal(features[0], want)
    start = record.recording_start_time
    assert features[0, 0, -3] == start.hour * 3600 + start.minute * 60
    assert features[0, 0, -2] == record.subject_data.age and features[0, 0, -1] == record.subject_data.gender
    assert (features == -1).mean() < 0.1  # a window the package cannot score is masked, not dropped


def test_sleepecg_export_is_the_packages_keras_model() -> None:
    """The ONNX export gives what the wheel's ``classifier.keras`` gives on a night, masked epochs included."""
    with sleep_stager() as feed:
        features = feed(sleep_record(feed.modules, 8)[0])
    want = sleep_network().predict(features, verbose=0)
    got = _session("sleepecg_gru").run(["stage_probs"], {"features": features})[0]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_sleepecg_stages_the_nights_as_they_were_slept() -> None:
    """On four synthetic nights, scored as wake, REM or NREM: at least 70 % of epochs right, more than 80 % of NREM
    and of wake epochs found, and the REM probability on REM epochs more than twice what it is on the others."""
    session = _session("sleepecg_gru")
    with sleep_stager() as feed:
        for seed in range(30, 34):
            record, stages = sleep_record(feed.modules, seed)
            probs = session.run(["stage_probs"], {"features": feed(record)})[0][0]
            truth = np.select([stages == WAKE, stages == REM], [3, 2], 1)
            predicted = probs.argmax(-1)
            recall = {SLEEP_CLASSES[c]: float((predicted[truth == c] == c).mean()) for c in (1, 2, 3)}
            assert (predicted == truth).mean() > 0.7 and recall["NREM"] > 0.8 and recall["WAKE"] > 0.8, recall
            rem = probs[:, 2]
            assert rem[truth == 2].mean() > 2 * rem[truth != 2].mean(), (seed, rem[truth == 2].mean())


@pytest.mark.parametrize("name", ["sleepecg_gru"])
def test_sleepecg_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    # HRV features, the mask value where a window cannot be scored, metadata constant over the night
    features = first["features"]
    assert (features == -1).mean() < 0.1
    assert all(len(np.unique(night[:, -3:], axis=0)) == 1 for night in features)
    heart_rate = features[:, :, 16]  # meanHR
    assert 40 < np.median(heart_rate[heart_rate > 0]) < 90
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
