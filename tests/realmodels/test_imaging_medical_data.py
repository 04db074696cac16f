"""Held-out medical imaging models: skull stripping of brain MRI and anatomy-guided PET reconstruction
(tests/realmodels/models/imaging_medical.py): their data made as each package feeds its model, deterministic and
shaped as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.imaging_medical import (
    BRAIN_THRESHOLD,
    MRI_SHAPE,
    MRI_SIDE,
    PET_HEAD_SHAPE,
    PET_PERCENTILE,
    PET_SIDE,
    TISSUES,
    brain_extractor,
    export_pyapetnet,
    head_phantom,
    pet_mr_head,
    pet_patches_with_truth,
    pet_preprocessor,
)


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered (exported) model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


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


@pytest.mark.parametrize("name", ["deepbrain_extractor"])
def test_deepbrain_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    # volumes divided by their maximum
    np.testing.assert_allclose(first["t1"].max(axis=(1, 2, 3, 4)), 1)
    assert first["t1"].min() >= 0
    outputs = session.run(None, {"t1": first["t1"][:1]})
    assert all(np.isfinite(out).all() and np.ptp(out) > 0 for out in outputs)


def test_pet_feed_is_what_the_packages_preprocessing_feeds() -> None:
    """``preprocess_volumes`` crops both volumes to the MR's bounding box above a tenth of its maximum and divides
    each by its 99.99th percentile; the scanners' units do not change the feed."""
    from scipy.ndimage import find_objects

    head = pet_mr_head(3)
    assert all(head[key].shape == PET_HEAD_SHAPE for key in ("labels", "uptake", "mr", "pet"))
    assert set(np.unique(head["labels"])) == set(range(len(TISSUES)))
    with pet_preprocessor() as feed:
        pet, mr, origin = feed(head["pet"], head["mr"])
        pet_scaled, mr_scaled, origin_scaled = feed(head["pet"] * 3.0, head["mr"] * 0.2)
    box = find_objects(head["mr"] > 0.1 * head["mr"].max(), max_label=1)[0]
    assert tuple(origin) == tuple(s.start for s in box) and mr.shape == pet.shape == tuple(s.stop - s.start
                                                                                             for s in box)
    assert pet.dtype == mr.dtype == np.float32
    np.testing.assert_allclose(mr, head["mr"][box] / np.percentile(head["mr"][box].astype(np.float32),
                                                                   PET_PERCENTILE), rtol=1e-5)
    np.testing.assert_allclose(pet, head["pet"][box] / np.percentile(head["pet"][box].astype(np.float32),
                                                                     PET_PERCENTILE), rtol=1e-5)
    np.testing.assert_allclose(pet_scaled, pet, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mr_scaled, mr, rtol=1e-5, atol=1e-6)
    assert tuple(origin_scaled) == tuple(origin)
    assert (head["pet"][head["labels"] == 4].mean() > 2 * head["pet"][head["labels"] == 5].mean())


def test_pyapetnet_brings_the_pet_closer_to_the_true_uptake() -> None:
    """On four cubes, inside the network's full field of view (8 voxels from the faces), the registered model's
    output is closer to the true uptake (scaled to the input by least squares) than the noisy, blurred input PET:
    its RMS error at most 0.85 of the input's in each and 0.78 on average (0.65-0.79 seen), and it correlates
    better with the truth."""
    session = _session("pyapetnet_pet_mr")
    inner = (slice(8, -8),) * 3
    ratios = []
    for sample in pet_patches_with_truth(4, 40):
        out = session.run(["pet_map"], {"pet": sample["pet"], "mr": sample["mr"]})[0]
        assert out.shape == (1, PET_SIDE, PET_SIDE, PET_SIDE, 1)
        given, made, truth = sample["pet"][0, ..., 0][inner], out[0, ..., 0][inner], sample["uptake"][inner]
        truth = truth * (given * truth).sum() / (truth * truth).sum()
        error_in = np.sqrt(((given - truth) ** 2).mean())
        error_out = np.sqrt(((made - truth) ** 2).mean())
        ratios.append(error_out / error_in)
        assert error_out < 0.85 * error_in, ratios
        assert np.corrcoef(made.ravel(), truth.ravel())[0, 1] > np.corrcoef(given.ravel(), truth.ravel())[0, 1]
    assert np.mean(ratios) < 0.78, ratios


@pytest.mark.parametrize("name", ["pyapetnet_pet_mr"])
def test_pyapetnet_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    # volumes divided by their 99.99th percentile: cubes of them in [0, ~1.5]
    assert all(first[key].dtype == np.float32 for key in first)
    assert first["pet"].min() >= 0 and 0.5 < first["pet"].max() < 1.5 and 0.5 < first["mr"].max() < 1.5
    rows = [{key: value[k : k + 1] for key, value in first.items()} for k in range(len(first[next(iter(first))]))]
    outputs = np.concatenate([session.run(None, row)[0] for row in rows[:2]])
    assert np.isfinite(outputs).all() and np.ptp(outputs) > 0


def test_cached_export_is_this_modules_export(tmp_path: Path) -> None:
    """The registered file is the export of this module (the cache holds what ``export`` wrote)."""
    import onnx

    for name, export in (("pyapetnet_pet_mr", export_pyapetnet),):
        export(tmp_path / f"{name}.onnx")
        fresh, registered = onnx.load(str(tmp_path / f"{name}.onnx")), onnx.load(str(BY_NAME[name].fetch()))
        assert [n.op_type for n in fresh.graph.node] == [n.op_type for n in registered.graph.node]
        assert [i.name for i in fresh.graph.input] == [i.name for i in registered.graph.input]
