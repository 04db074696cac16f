"""Image folders through the ``[preprocess]`` spec: size, layout, mean/std, dtype, taken from the model's input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from edgepipe.config import PreprocessConfig
from edgepipe.data.dataset import load_dataset
from edgepipe.data.preprocess import ImageSpec, infer_layout, load_image_folder
from edgepipe.errors import DataError
from edgepipe.tensors import Signature, TensorSpec
from tests.fixtures.images import write_sample_images

F32 = np.dtype(np.float32)


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_images(tmp_path_factory.mktemp("photos"))


def test_layout_is_inferred_from_the_input_shape() -> None:
    assert infer_layout(TensorSpec("x", (1, 3, 64, 48), F32)) == ("NCHW", (64, 48), 3)
    assert infer_layout(TensorSpec("x", (1, 128, 128, 3), F32)) == ("NHWC", (128, 128), 3)
    with pytest.raises(ValueError, match="not an image"):
        infer_layout(TensorSpec("x", (1, 576), F32))


def test_mean_std_give_minus_one_to_one(photos: Path) -> None:
    spec = ImageSpec(size=(128, 128), mean=(0.5,), std=(0.5,))
    arrays = load_image_folder(photos, spec)
    assert arrays.shape == (16, 128, 128, 3) and arrays.dtype == np.float32
    assert arrays.min() >= -1.0 and arrays.max() <= 1.0 and arrays.min() < -0.9 and arrays.max() > 0.9


def test_nchw_and_per_channel_normalisation(photos: Path) -> None:
    mean, std = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
    nchw = load_image_folder(photos, ImageSpec(size=(32, 40), layout="NCHW", mean=mean, std=std))
    plain = load_image_folder(photos, ImageSpec(size=(32, 40)))
    assert nchw.shape == (16, 3, 32, 40)
    expected = (plain.transpose(0, 3, 1, 2) - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    np.testing.assert_allclose(nchw, expected, atol=1e-5)


def test_folder_as_calibration_data_follows_the_model(photos: Path) -> None:
    signature = Signature(inputs=(TensorSpec("image", (1, 3, 64, 64), F32),), outputs=())
    data = load_dataset(photos, signature, role="calibration", preprocess=PreprocessConfig(limit=5))
    assert len(data) == 5 and data.inputs[0].shape == (5, 3, 64, 64)
    uint8 = load_dataset(photos, Signature(inputs=(TensorSpec("image", (1, 64, 64, 3), np.dtype(np.uint8)),),
                                            outputs=()), role="calibration", preprocess=PreprocessConfig())
    assert uint8.inputs[0].dtype == np.uint8 and uint8.inputs[0].max() > 200


def test_unreadable_image_and_empty_folder_are_user_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no images"):
        load_image_folder(tmp_path / "empty", ImageSpec(size=(8, 8)))
    (tmp_path / "bad").mkdir()
    Image.new("RGB", (4, 4)).save(tmp_path / "bad" / "a.png")
    (tmp_path / "bad" / "b.png").write_bytes(b"not a png")
    with pytest.raises(DataError, match="cannot read image"):
        load_image_folder(tmp_path / "bad", ImageSpec(size=(8, 8)))
