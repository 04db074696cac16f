"""Calibration and evaluation data: safe loading and every check against the model's signature."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import load_dataset
from edgepipe.errors import DataError
from edgepipe.tensors import Signature, TensorSpec

SIG = Signature(inputs=(TensorSpec("input", (None, 8, 8, 1), np.dtype(np.float32)),),
                outputs=(TensorSpec("logits", (None, 10), np.dtype(np.float32)),))


def _save(tmp_path: Path, name: str = "d.npz", **arrays: np.ndarray) -> Path:
    path = tmp_path / name
    np.savez(path, **arrays)
    return path


def test_reads_bundled_evaluation_split(reference_data: Path) -> None:
    data = load_dataset(reference_data / "evaluation.npz", SIG, role="evaluation", need_labels=True, num_classes=10)
    assert len(data) == 400
    assert data.inputs[0].shape == (400, 8, 8, 1) and data.inputs[0].dtype == np.float32
    assert data.labels is not None and set(np.unique(data.labels)) == set(range(10))
    first = next(data.samples())
    assert first[0].shape == (1, 8, 8, 1)


def test_bundled_splits_are_disjoint(reference_data: Path) -> None:
    seen: dict[bytes, str] = {}
    overlaps = 0
    for split in ("train", "calibration", "selection", "evaluation"):
        with np.load(reference_data / f"{split}.npz", allow_pickle=False) as npz:
            for image in npz["input"]:
                key = image.tobytes()
                overlaps += key in seen and seen[key] != split
                seen.setdefault(key, split)
    # load_digits has a handful of pixel-identical images; the splits must not share more than those.
    assert overlaps <= 5


def test_pickled_object_array_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "evil.npy"
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="pickled Python objects"):
        load_dataset(path, SIG, role="calibration")


def test_wrong_sample_shape_names_both_shapes(tmp_path: Path) -> None:
    path = _save(tmp_path, input=np.zeros((5, 28, 28, 1), np.float32))
    with pytest.raises(DataError, match=r"\(28, 28, 1\).*8x8x1"):
        load_dataset(path, SIG, role="calibration")


def test_nan_is_refused(tmp_path: Path) -> None:
    x = np.zeros((3, 8, 8, 1), np.float32)
    x[1, 2, 3, 0] = np.nan
    with pytest.raises(DataError, match="NaN or Inf"):
        load_dataset(_save(tmp_path, input=x), SIG, role="calibration")


def test_missing_labels_for_evaluation(tmp_path: Path) -> None:
    path = _save(tmp_path, input=np.zeros((3, 8, 8, 1), np.float32))
    with pytest.raises(DataError, match="no 'labels' array"):
        load_dataset(path, SIG, role="evaluation", need_labels=True)


def test_labels_count_must_match(tmp_path: Path) -> None:
    path = _save(tmp_path, input=np.zeros((3, 8, 8, 1), np.float32), labels=np.array([1, 2]))
    with pytest.raises(DataError, match="must be 3 integer class ids"):
        load_dataset(path, SIG, role="evaluation", need_labels=True)


def test_labels_outside_classes(tmp_path: Path) -> None:
    path = _save(tmp_path, input=np.zeros((2, 8, 8, 1), np.float32), labels=np.array([1, 12]))
    with pytest.raises(DataError, match="outside the model's 10 classes"):
        load_dataset(path, SIG, role="evaluation", need_labels=True, num_classes=10)


def test_missing_file_says_which_option(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="--calib"):
        load_dataset(tmp_path / "nope.npz", SIG, role="calibration")


def test_not_an_npz(tmp_path: Path) -> None:
    path = tmp_path / "junk.npz"
    path.write_text("hello")
    with pytest.raises(DataError, match="not a .npz"):
        load_dataset(path, SIG, role="calibration")


def test_plain_npy_is_one_input(tmp_path: Path) -> None:
    path = tmp_path / "x.npy"
    np.save(path, np.zeros((3, 8, 8, 1), np.float32))
    assert load_dataset(path, SIG, role="calibration").inputs[0].shape == (3, 8, 8, 1)


def test_float64_is_cast_to_model_dtype(tmp_path: Path) -> None:
    data = load_dataset(_save(tmp_path, input=np.ones((2, 8, 8, 1))), SIG, role="calibration")
    assert data.inputs[0].dtype == np.float32


def test_multi_input_matched_by_name(tmp_path: Path) -> None:
    sig = Signature(inputs=(TensorSpec("a", (1, 2), np.dtype(np.float32)), TensorSpec("b", (1, 3), np.dtype(np.int64))),
                    outputs=())
    path = _save(tmp_path, b=np.zeros((4, 3), np.int64), a=np.zeros((4, 2), np.float32))
    data = load_dataset(path, sig, role="calibration")
    assert [a.shape for a in data.inputs] == [(4, 2), (4, 3)]
    with pytest.raises(DataError, match="no array for model input"):
        load_dataset(_save(tmp_path, "e.npz", a=np.zeros((4, 2), np.float32)), sig, role="calibration")
