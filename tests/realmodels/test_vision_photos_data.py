"""Held-out vision models of whole photographs: detection, content moderation and copy detection
(tests/realmodels/models/vision_photos.py): their data made as each package feeds its model, deterministic and shaped
as the model reads them, and the models doing their job on them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models.vision_photos import SSCD_SIZE, nsfw_images, sscd_edit, sscd_photos, sscd_pixels


def _session(name: str) -> Any:
    """A CPU onnxruntime session on the registered model file of ``name``."""
    import onnxruntime as ort

    return ort.InferenceSession(str(BY_NAME[name].fetch()), providers=["CPUExecutionProvider"])


def test_open_nsfw_finds_the_photographs_safe() -> None:
    """scikit-image's photographs are all safe for work: fed as the package's ``preprocess`` makes them, the
    classifier says so for nearly all of them (BGR order or means wrong would scatter its scores)."""
    import onnxruntime as ort

    session = ort.InferenceSession(str(BY_NAME["open_nsfw"].fetch()), providers=["CPUExecutionProvider"])
    images = nsfw_images(None, 8, 5)["input:0"]  # type: ignore[arg-type]
    scores = session.run(None, {"input:0": images})[0]
    assert np.allclose(scores.sum(axis=1), 1, atol=1e-4)
    assert np.median(scores[:, 1]) < 0.2 and (scores[:, 1] < 0.5).mean() >= 0.75


@pytest.mark.parametrize("name", ["open_nsfw"])
def test_open_nsfw_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(spec.name for spec in session.get_inputs()) == sorted(shapes)
    types = {spec.name: spec.type for spec in session.get_inputs()}
    feed = {}
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:], (key, value.shape)
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        assert value.dtype == (np.int32 if types[key] == "tensor(int32)" else np.float32)
        feed[key] = value[:1]
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


@pytest.mark.parametrize("name", ["sscd_int8", "sscd_distilled"])
def test_sscd_finds_the_original_of_each_edited_copy(name: str) -> None:
    """Copies made as the data are made (a crop, a flip, an overlay) of eight photographs: each copy's nearest
    original by descriptor similarity is its own, well above the others (the package's match threshold is 0.75); the
    descriptors come out unit-length."""
    session = _session(name)
    photos = [photo for name, photo in sscd_photos() if name != "cat"][:8]  # "cat" is a copy of "chelsea"
    rng = np.random.default_rng(0)

    def describe(images: list[Any]) -> np.ndarray:
        return np.concatenate([session.run(None, {"image": sscd_pixels(image)[None]})[0] for image in images])

    originals = describe(photos)
    assert np.allclose(np.linalg.norm(originals, axis=1), 1, atol=1e-3)
    for edit in ("crop", "flip_lr", "overlay"):
        similarity = describe([sscd_edit(photo, edit, rng) for photo in photos]) @ originals.T
        assert (similarity.argmax(axis=1) == np.arange(len(photos))).all(), edit
        assert np.median(np.diag(similarity)) > 0.75, edit


@pytest.mark.parametrize("name", ["sscd_int8", "sscd_distilled"])
def test_sscd_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    import onnxruntime as ort

    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "model.onnx"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    specs = {spec.name: spec for spec in session.get_inputs()}
    shapes = model.config["input_shapes"]
    assert sorted(first) == sorted(specs) and set(shapes) <= set(specs)
    feed = {}
    for key, value in first.items():
        rank = len(specs[key].shape)
        assert value.ndim == max(rank, 1), (key, value.shape)
        assert value.dtype == {"tensor(float)": np.float32, "tensor(uint8)": np.uint8}[specs[key].type]
        if key in shapes:
            assert list(value.shape[1:]) == shapes[key][1:]
        assert len(value) == zoo.SMALL.evaluation and np.array_equal(value, again[key])
        feed[key] = np.asarray(value[0]) if rank == 0 else value[:1]  # a rank-0 tensor, not a numpy scalar
    # photographs, not flat fields: every image spans a wide range of values
    assert first["image"].shape[1:] == (SSCD_SIZE, SSCD_SIZE, 3)
    assert (np.ptp(first["image"].reshape(len(first["image"]), -1), axis=1) > 100).all()
    outputs = session.run(None, feed)
    assert all(np.isfinite(out).all() for out in outputs)
