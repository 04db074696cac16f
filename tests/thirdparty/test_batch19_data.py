"""Held-out batch 19 (tests/thirdparty/heldout_batch19.py): registered and held out on every target, its data made
as each package feeds its model, deterministic and shaped as each model reads them, and each model doing its job
on them."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.thirdparty import zoo
from tests.thirdparty.heldout import BY_NAME
from tests.thirdparty.heldout_batch19 import (
    BATCH19_MODELS,
    BRAIN_THRESHOLD,
    KNN_ALGORITHMS,
    KNN_DATASETS,
    MRI_SHAPE,
    MRI_SIDE,
    brain_extractor,
    head_phantom,
    knn_accuracy,
    knn_configurations,
    surrogate_loader,
    surrogate_metadata,
)

LISTED = tomllib.loads((Path(__file__).parents[2] / "benchmarks" / "agreement_models.toml").read_text())["models"]

#: Where a first-run miss was then used to fix a profile (benchmarks/agreement_models.toml's tuned_on).
TUNED: dict[str, list[str]] = {"knn_accuracy_surrogate": ["rk3588", "rk3576", "mobile-npu"]}


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_batch19_is_registered_held_out_on_every_target() -> None:
    for model in BATCH19_MODELS:
        assert BY_NAME[model.name] is model and LISTED[model.name]["role"] == "held_out"
        assert len(LISTED[model.name]["targets"]) == 5
        assert LISTED[model.name].get("tuned_on", []) == TUNED.get(model.name, [])


# --------------------------------------------------------------------------------------------- deepbrain


def test_mri_feed_is_what_the_packages_extractor_feeds() -> None:
    """``Extractor.run`` feeds the volume resized by skimage to 128^3 (anti-aliased) and divided by its maximum,
    (1, 128, 128, 128, 1); the intensity scale of the scanner does not change the feed."""
    from skimage.transform import resize

    volume, brain = head_phantom(3)
    assert volume.shape == MRI_SHAPE and brain.shape == MRI_SHAPE and 0.1 < brain.mean() < 0.4
    with brain_extractor() as feed:
        fed = feed(volume)
        scaled = feed(volume * 7.5)
    want = resize(volume, (MRI_SIDE,) * 3, mode="constant", anti_aliasing=True)
    assert fed.shape == (1, MRI_SIDE, MRI_SIDE, MRI_SIDE, 1) and fed.dtype == np.float32
    np.testing.assert_allclose(fed[0, ..., 0], want / want.max(), atol=1e-6)
    np.testing.assert_allclose(scaled, fed, atol=1e-6)
    assert fed.max() == 1 and fed.min() >= 0


def test_deepbrain_strips_the_skull() -> None:
    """On three synthetic T1 heads, the registered model's mask (resized back and thresholded as the package's
    ``run`` and ``pred`` do) overlaps the brain the head was made with at a Dice above 0.9, and under 10 % of it lies
    outside the brain (the bright scalp and the neck are left out)."""
    from skimage.transform import resize

    session = _session("deepbrain_extractor")
    with brain_extractor() as feed:
        for seed in (50, 51, 52):
            volume, brain = head_phantom(seed)
            prob = session.run(["brain_prob"], {"t1": feed(volume)})[0]
            assert prob.shape == (1, MRI_SIDE, MRI_SIDE, MRI_SIDE, 1)
            mask = resize(prob[0, ..., 0], MRI_SHAPE, mode="constant", anti_aliasing=True) > BRAIN_THRESHOLD
            dice = 2 * (mask & brain).sum() / (mask.sum() + brain.sum())
            outside = (mask & ~brain).sum() / mask.sum()
            assert dice > 0.9 and outside < 0.1, (seed, dice, outside)


# --------------------------------------------------------------------------------------------- surrogate


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


# --------------------------------------------------------------------------------------------- all


@pytest.mark.parametrize("name", [model.name for model in BATCH19_MODELS])
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
    for key, value in first.items():
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key]) and np.isfinite(value).all()
        assert np.ptp(value, axis=0).max() > 0, key
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) == set(specs)
    for key, value in first.items():
        assert value.dtype == np.float32 and list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
    if name == "deepbrain_extractor":  # volumes divided by their maximum
        np.testing.assert_allclose(first["t1"].max(axis=(1, 2, 3, 4)), 1)
        assert first["t1"].min() >= 0
    else:  # encoded configurations: integers but for the fidelity
        rows = first["input"]
        np.testing.assert_array_equal(rows[:, :4], np.round(rows[:, :4]))
        assert set(rows[:, 3]) <= {2, 3, 5, 10} and set(rows[:, 4]) <= set(np.float32(surrogate_metadata()
                                                                                       ["fidelity_levels"]))
        outputs = [np.concatenate([session.run(None, {"input": rows[k : k + 1]})[0] for k in range(len(rows))])]
        assert ((outputs[0] > 0) & (outputs[0] <= 1.05)).all()
    if name == "deepbrain_extractor":
        outputs = session.run(None, {"t1": first["t1"][:1]})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)
