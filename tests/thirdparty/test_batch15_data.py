"""Held-out batch 15 (tests/thirdparty/heldout_batch15.py): registered and held out on every target, its data made
as each package feeds its model (PhysNet: its video path followed), deterministic and shaped as each model reads
them, and each model doing its job on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import fetch, zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch15 import (
    _ECG_H5,
    BATCH15_MODELS,
    ECG_LEVELS,
    ECG_QUALITY,
    ECG_RATE,
    ECG_SECONDS,
    FRACAST,
    FRACAST_CONTEXT,
    FRACAST_HORIZON,
    RPPG_FRAMES,
    RPPG_SIDE,
    SERIES_KINDS,
    clip_rate_bpm,
    ecg_checker,
    ecg_clean,
    ecg_like,
    ecg_noise,
    ecg_record_windows,
    face_clip,
    fracast_config,
    fracast_feed,
    fracast_modules,
    fracast_recorder,
    series_like,
    series_sample,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def _keras(path: Path) -> Any:
    """The Keras HDF5 model at ``path``, loaded as edgepipe loads it (Keras 3, safe mode)."""
    import keras

    return keras.models.load_model(str(path), compile=False, safe_mode=True)


#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {
    "ecg_quality_oscnn": ["rk3588"],
    "fracast_w8": ["mobile-npu", "rk3588", "rk3576"],
    "physnet_rppg": ["mobile-npu", "rk3588", "rk3576"],
}


def test_batch15_is_registered_held_out_on_every_target() -> None:
    for model in BATCH15_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


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


def test_fracast_export_forecasts_what_the_package_forecasts() -> None:
    """The exported network on the recorded feed, scaled back by the context's finite range, is the package's own
    ``FracastModel.forecast`` (its W8 weights, PyTorch): on a short daily context and a full hourly one, both with a
    gap of missing steps."""
    import torch

    session = _session("fracast_w8")
    predictor, core = fracast_recorder()
    with fracast_modules() as modules:
        folder = fetch.model_file(FRACAST, "fracast/weights/config.json").parent
        inference = modules["fracast.inference"]
        theirs = inference.FracastModel(*inference.load_fracast(folder, weights="w8"), fracast_config())
    for k in (3, 7):  # daily sales, hourly traffic
        context, _ = series_sample(k, np.random.default_rng(4))
        feed = fracast_feed(predictor, core, context)
        assert np.isnan(context).any() and not feed["valid"].all()
        with torch.no_grad():
            want = theirs.forecast(context)
        tail = context[-FRACAST_CONTEXT:]
        low, span = np.nanmin(tail), max(np.nanmax(tail) - np.nanmin(tail), 1e-5)
        got = session.run(["quantiles"], feed)[0][0] * span + low
        assert want.shape == got.shape == (FRACAST_HORIZON, 9)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * span)


@pytest.mark.parametrize("kind", SERIES_KINDS)
def test_fracast_forecasts_the_continuation_of_each_kind(kind: str) -> None:
    """On a 2048-step context of each seasonal kind the median forecast's error is under half that of repeating the
    context's mean or its last value, whichever is better (a random walk has nothing to forecast: about the last
    value's error), and the 10-90 % band holds at least half of the 48 true next steps."""
    session, (predictor, core) = _session("fracast_w8"), fracast_recorder()
    series = series_like(kind, FRACAST_CONTEXT + FRACAST_HORIZON, 11)
    context, future = series[:FRACAST_CONTEXT], series[FRACAST_CONTEXT:]
    quantiles = session.run(["quantiles"], fracast_feed(predictor, core, context))[0][0]
    quantiles = quantiles * (context.max() - context.min()) + context.min()
    error, last = np.abs(quantiles[:, 4] - future).mean(), np.abs(context[-1] - future).mean()
    if kind == "random_walk":
        assert error < 1.25 * last
    else:
        assert error < 0.5 * min(last, np.abs(context.mean() - future).mean()), kind
    assert np.mean((future >= quantiles[:, 0]) & (future <= quantiles[:, 8])) >= 0.5, kind


def test_physnet_recovers_the_pulse_rate_of_the_face_clips() -> None:
    """The pulse PhysNet reads from clips made as the data are made peaks within 4 beats a minute of the rate put
    into the skin (1 % of the green channel); without that pulse its peak does not follow the rate."""
    session = _session("physnet_rppg")

    def rate_of(clip: np.ndarray) -> float:
        return clip_rate_bpm(session.run(["bvp"], {"frames": clip[None]})[0][0])

    for rate in (55.0, 72.0, 90.0, 115.0):
        assert abs(rate_of(face_clip(rate, 0.01, 3)) - rate) <= 4, rate
    assert rate_of(face_clip(55.0, 0.0, 3)) == rate_of(face_clip(115.0, 0.0, 3))


@pytest.mark.parametrize("name", [model.name for model in BATCH15_MODELS])
def test_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    if model.suffix == ".h5":
        keras_model = _keras(path)
        (key, value), = first.items()
        assert key == keras_model.inputs[0].name == "input_1" and value.dtype == np.float32
        assert value.shape[1:] == tuple(keras_model.inputs[0].shape[1:]) == (2 * ECG_RATE, 1)
        # ECG in mV with its R waves: every window spans more than the checker's 0.1 mV floor
        assert (np.ptp(value[..., 0], axis=1) > 0.5).all()
        scores = np.asarray(keras_model(value))
        assert scores.shape == (len(value), 1) and ((scores >= 0) & (scores <= 1)).all()
        return
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) == sorted(shapes)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] == specs[key].shape[1:]
        assert value.dtype == {"tensor(float)": np.float32, "tensor(bool)": np.bool_}[specs[key].type]
    if name == "fracast_w8":  # min-max normalized where valid, zero where padded or missing
        values, valid = first["values"], first["valid"]
        assert values.min() == 0 and values.max() == 1 and (values[~valid] == 0).all()
        assert valid.all(axis=(1, 2)).any() and not valid.all()
    else:  # face clips: frames in [0, 1] that change over time
        frames = first["frames"]
        assert frames.shape[1:] == (RPPG_FRAMES, RPPG_SIDE, RPPG_SIDE, 3) and 0 <= frames.min() < frames.max() <= 1
        assert (np.abs(np.diff(frames, axis=1)).mean(axis=(1, 2, 3, 4)) > 0).all()
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs)
