"""Held-out vision models of faces, hands, bodies and fingerprints (tests/realmodels/models/vision_people.py): their
data made as each package feeds its model, deterministic and shaped as the model reads them, and the models doing
their job on them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.realmodels import zoo
from tests.realmodels.heldout import BY_NAME
from tests.realmodels.models import package_code, vision_people


@pytest.mark.parametrize("name", ["leader_minutiae"])
def test_leader_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
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
    for key, value in first.items():
        assert list(value.shape[1:]) == shapes[key][1:] and np.array_equal(value, again[key])
    outputs = session.run(None, {key: value[:1] for key, value in first.items()})
    assert all(np.isfinite(out).all() for out in outputs if out.dtype.kind == "f")


@pytest.mark.parametrize(("height", "width", "crop"), [(120, 160, False), (24, 24, True), (48, 48, True)])
def test_mtcnn_images_are_normalised_as_mtcnn_does(height: int, width: int, crop: bool) -> None:
    images = vision_people.mtcnn_images(height, width, 3, seed=1, crop=crop)
    assert images.shape == (3, 3, height, width) and images.dtype == np.float32
    assert images.min() >= -127.5 / 128 and images.max() <= 127.5 / 128
    assert np.array_equal(images, vision_people.mtcnn_images(height, width, 3, seed=1, crop=crop))


@pytest.mark.parametrize("name", ["mtcnn_onet", "mtcnn_pnet", "mtcnn_rnet"])
def test_export_matches_the_wheels_pytorch_module(name: str, tmp_path: Path) -> None:
    import onnxruntime as ort
    import torch

    model = BY_NAME[name]
    path = package_code.export(model, tmp_path / "model.onnx")
    assert path.read_bytes() == package_code.export(model, tmp_path / "again.onnx").read_bytes(), "deterministic export"
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == list(model.inputs)
    assert [tuple(i.shape) for i in session.get_inputs()] == list(model.inputs.values()), "static shapes"
    inputs = package_code.example_inputs(model, seed=5)
    got = session.run(None, {k: v.numpy() for k, v in zip(model.inputs, inputs)})
    with torch.no_grad():
        want = model.network()(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want) == len(model.outputs)
    for g, w in zip(got, want):
        assert g.shape == tuple(w.shape) and np.isfinite(g).all()
        assert np.abs(g - w.numpy()).max() < 1e-4


@pytest.mark.parametrize("name", ["fer_emotion"])
def test_fer_data_is_deterministic_and_shaped_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    model = BY_NAME[name]
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / f"model{model.suffix}"
    path.write_bytes(model.fetch().read_bytes())
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        model.data(zoo.Context(model=path, folder=tmp_path / folder, size=zoo.SMALL))
    first, again = (dict(np.load(tmp_path / f / "evaluation.npz")) for f in ("a", "b"))
    expected = {"fer_emotion": ("input_1", (64, 64, 1))}[name]
    (key, value), = first.items()
    assert (key, value.shape[1:]) == expected and np.array_equal(value, again[key]) and np.isfinite(value).all()
    assert value.min() >= -1 and value.max() <= 1
