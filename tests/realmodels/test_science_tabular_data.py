"""Held-out models of tabular and time-series data: a hyperparameter surrogate, a time-series forecaster
(tests/realmodels/models/science_tabular.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import fetch, zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.science_tabular import (
    FRACAST,
    FRACAST_CONTEXT,
    FRACAST_HORIZON,
    KNN_ALGORITHMS,
    KNN_DATASETS,
    SERIES_KINDS,
    _opal_checkpoint,
    export_opal,
    fracast_config,
    fracast_feed,
    fracast_modules,
    fracast_recorder,
    knn_accuracy,
    knn_configurations,
    opal_pairs,
    opal_predictor,
    opal_vocabulary,
    series_like,
    series_sample,
    surrogate_loader,
    surrogate_metadata,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def _keras(path: Path) -> Any:
    """The Keras HDF5 model at ``path``, loaded as edgepipe loads it (Keras 3, safe mode)."""
    import keras

    return keras.models.load_model(str(path), compile=False, safe_mode=True)


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


@pytest.mark.parametrize("name", ["fracast_w8"])
def test_fracast_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) == sorted(shapes)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] == specs[key].shape[1:]
        assert value.dtype == {"tensor(float)": np.float32, "tensor(bool)": np.bool_}[specs[key].type]
    # min-max normalized where valid, zero where padded or missing
    values, valid = first["values"], first["valid"]
    assert values.min() == 0 and values.max() == 1 and (values[~valid] == 0).all()
    assert valid.all(axis=(1, 2)).any() and not valid.all()
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs)


def test_knn_feed_is_what_the_librarys_loader_feeds() -> None:
    """``SurrogateLoader.predict`` feeds (1, 5) float32 in the ``.meta.json``'s order (n_neighbors, algorithm,
    dataset, cv, fidelity), the categories by its encodings."""
    meta = surrogate_metadata()
    assert meta["param_names"] == ["n_neighbors", "algorithm", "dataset", "cv", "__fidelity__"]
    assert set(meta["param_encodings"]["algorithm"]) == set(KNN_ALGORITHMS)
    assert set(meta["param_encodings"]["dataset"]) == set(KNN_DATASETS)
    with surrogate_loader() as feed:
        fed = feed({"n_neighbors": 13, "algorithm": "kd_tree", "dataset": "wine", "cv": 5}, 0.7)
        real = feed.loader.predict({"n_neighbors": 13, "algorithm": "kd_tree", "dataset": "wine", "cv": 5}, 0.7)
    assert fed.shape == (1, 5) and fed.dtype == np.float32
    np.testing.assert_allclose(fed[0], [13, 3, 3, 5, 0.7])
    assert 0.5 < real < 1
    for params, fidelity in knn_configurations(4, 20):
        assert params["n_neighbors"] <= KNN_DATASETS[params["dataset"]] * fidelity * (params["cv"] - 1) / params["cv"]


def test_surrogate_predicts_the_cross_validated_accuracy() -> None:
    """On 24 configurations at fidelity 1 (four data sets, cv 3 and 5, three neighbour counts each), the registered
    model's predictions are within 0.05 of scikit-learn's real cross-validated accuracy (0.015 on average) and rank
    them alike (Spearman above 0.9); fewer neighbours score higher on digits."""
    from scipy.stats import spearmanr

    session = _session("knn_accuracy_surrogate")
    neighbors = {"digits": (3, 48, 148), "iris": (3, 23, 48), "wine": (3, 23, 48), "breast_cancer": (3, 48, 148)}
    predicted, real = [], []
    with surrogate_loader() as feed:
        for dataset, counts in neighbors.items():
            for cv in (3, 5):
                for count in counts:
                    params = {"n_neighbors": count, "algorithm": "auto", "dataset": dataset, "cv": cv}
                    predicted.append(float(session.run(["variable"], {"input": feed(params, 1.0)})[0][0, 0]))
                    real.append(knn_accuracy(params))
    predicted_, real_ = np.array(predicted), np.array(real)
    error = np.abs(predicted_ - real_)
    assert error.max() < 0.05 and error.mean() < 0.015, (predicted, real)
    assert spearmanr(predicted_, real_)[0] > 0.9
    assert predicted_[0] > predicted_[1] > predicted_[2]  # digits, cv 3: 3, 48, 148 neighbours


@pytest.mark.parametrize("name", ["knn_accuracy_surrogate"])
def test_knn_surrogate_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert value.dtype == np.float32 and list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    # encoded configurations: integers but for the fidelity
    rows = first["input"]
    np.testing.assert_array_equal(rows[:, :4], np.round(rows[:, :4]))
    assert set(rows[:, 3]) <= {2, 3, 5, 10} and set(rows[:, 4]) <= set(np.float32(surrogate_metadata()
                                                                                   ["fidelity_levels"]))
    outputs = [np.concatenate([session.run(None, {"input": rows[k : k + 1]})[0] for k in range(len(rows))])]
    assert ((outputs[0] > 0) & (outputs[0] <= 1.05)).all()
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)


def test_opal_feed_is_what_the_packages_predict_feeds() -> None:
    """``OpalNet.predict`` feeds each player and map as its index in the checkpoint's sorted vocabulary, (N, 1)
    int64."""
    players, maps = opal_vocabulary()
    assert len(players) == 34928 and len(maps) == 22246
    assert all(p.count("/") == 1 for p in players[:50]) and {m.split("/")[1] for m in maps} == {"-1", "0", "1"}
    with opal_predictor() as feed:
        uid, mid = feed([str(players[0]), str(players[-1])], [str(maps[1]), str(maps[-2])])
    assert uid.dtype == mid.dtype == np.int64 and uid.shape == mid.shape == (2, 1)
    np.testing.assert_array_equal(uid[:, 0], [0, len(players) - 1])
    np.testing.assert_array_equal(mid[:, 0], [1, len(maps) - 2])
    pairs = opal_pairs(20, 5)
    assert pairs == opal_pairs(20, 5) and len(set(pairs)) == 20


def test_opal_predicts_plausible_accuracies_lower_at_double_time() -> None:
    """On 60 seeded player and map pairs whose map the vocabulary has at normal and double time, the registered
    model's outputs, mapped back by the checkpoint's QuantileTransformer (the package's inverse transform), are the
    package's own predictions (to 1e-4) and accuracies between 85 and 100 %; double time is predicted harder than
    normal time for at least three in four of them (52 of 60 seen)."""
    transformer = _opal_checkpoint()["hyper_parameters"]["transformer"]
    players, maps = opal_vocabulary()
    speeds: dict[str, set[str]] = defaultdict(set)
    for name in maps:
        map_id, speed = str(name).split("/")
        speeds[map_id].add(speed)
    both = sorted(map_id for map_id, seen in speeds.items() if {"0", "1"} <= seen)
    rng = np.random.default_rng(11)
    session = _session("opal_accuracy_ncf")
    harder = 0
    with opal_predictor() as feed:
        for _ in range(60):
            player, map_id = str(players[rng.integers(len(players))]), both[rng.integers(len(both))]
            queries = [player, player], [f"{map_id}/0", f"{map_id}/1"]
            uid, mid = feed(*queries)
            normal = [session.run(["accuracy_normal"], {"uid": uid[k : k + 1], "mid": mid[k : k + 1]})[0]
                      for k in range(2)]
            accuracy = transformer.inverse_transform(np.concatenate(normal)).ravel()
            np.testing.assert_allclose(accuracy, feed.net.predict(*queries), atol=1e-4)
            assert ((accuracy > 0.85) & (accuracy <= 1.0)).all(), accuracy
            harder += accuracy[1] < accuracy[0]
    assert harder >= 45, harder


@pytest.mark.parametrize("name", ["opal_accuracy_ncf"])
def test_opal_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    # indices into the vocabulary
    players, maps = opal_vocabulary()
    assert first["uid"].dtype == first["mid"].dtype == np.int64
    assert 0 <= first["uid"].min() and first["uid"].max() < len(players)
    assert 0 <= first["mid"].min() and first["mid"].max() < len(maps)
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:2]])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0


def test_cached_export_is_this_modules_export(tmp_path: Path) -> None:
    """The registered file is the export of this module (the cache holds what ``export`` wrote)."""
    import onnx

    for name, export in (("opal_accuracy_ncf", export_opal),):
        export(tmp_path / f"{name}.onnx")
        fresh, registered = onnx.load(str(tmp_path / f"{name}.onnx")), onnx.load(str(BY_NAME[name].fetch()))
        assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in registered.graph.node]
        assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input]
