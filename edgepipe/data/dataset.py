"""Calibration and evaluation data: ``.npz``/``.npy`` files read without pickle, checked against the model.

An ``.npz`` holds one array per model input (named like the input, or any name
when the model has one input) and, for evaluation, an integer ``labels`` array.
Arrays are sample-major: ``(N, *sample_shape)``. Every check that can fail does
so before any output is written, with one line naming the file and the fix.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.folders import folder_data, is_folder_data
from edgepipe.errors import DataError
from edgepipe.hashing import sha256_of
from edgepipe.tensors import Signature, TensorSpec

LABELS_KEY = "labels"
_ZIP_MAGIC = b"PK\x03\x04"
_NPY_MAGIC = b"\x93NUMPY"


@dataclass(frozen=True)
class Dataset:
    """Model inputs (one array per input, in the model's input order) and optional labels."""

    path: Path
    inputs: tuple[np.ndarray, ...]
    labels: np.ndarray | None
    sha256: str
    #: Per input: True when each sample is the whole input tensor, ``(N, *input_shape)``: inputs whose
    #: leading dimension is not a batch (a recurrent state ``[2, 1, 128]``) and scalars (``(N,)``).
    whole: tuple[bool, ...] = ()

    def __len__(self) -> int:
        return len(self.inputs[0])

    def samples(self, limit: int | None = None) -> Iterator[list[np.ndarray]]:
        """One batch-1 input list per sample, in file order."""
        whole = self.whole or (False,) * len(self.inputs)
        for i in range(len(self) if limit is None else min(limit, len(self))):
            yield [array[i] if full else array[i : i + 1] for array, full in zip(self.inputs, whole)]


def _read_arrays(path: Path, role: str) -> dict[str, np.ndarray]:
    if path.is_dir():
        state = "an empty folder" if not any(path.iterdir()) else "a folder"
        raise DataError(f"{role} data is {state}, not a .npz/.npy file", path=path,
                        fix=f"Give the {role} .npz file itself (write it with numpy.savez)")
    if not path.is_file():
        raise DataError(f"{role} data not found", path=path,
                        fix=f"Give the {role} .npz with --{'calib' if role == 'calibration' else 'eval'} "
                            f"or data.{role} in the config")
    with path.open("rb") as handle:
        magic = handle.read(6)
    if not (magic.startswith(_ZIP_MAGIC) or magic == _NPY_MAGIC):
        raise DataError("not a .npz/.npy file", path=path, fix="Write it with numpy.savez")
    from edgepipe.data.headers import check_declared_arrays

    check_declared_arrays(path, is_npy=magic == _NPY_MAGIC)  # pickles and absurd shapes: refused before allocation
    try:
        if magic == _NPY_MAGIC:
            return {"input": np.load(path, allow_pickle=False)}
        with np.load(path, allow_pickle=False) as loaded:
            return {key: loaded[key] for key in loaded.files}
    except ValueError as exc:
        if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
            raise DataError("holds pickled Python objects, which edgepipe never loads", path=path,
                            fix="Save plain numeric arrays with numpy.savez") from None
        raise DataError(f"not a readable .npz/.npy file ({exc})", path=path,
                        fix="Write it with numpy.savez") from None
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"not a readable .npz/.npy file ({exc})", path=path,
                        fix="Write it with numpy.savez") from None


def _match_inputs(arrays: dict[str, np.ndarray], signature: Signature, path: Path) -> list[np.ndarray]:
    specs = signature.inputs
    if len(specs) == 1 and len(arrays) == 1:
        return list(arrays.values())
    missing = [spec.name for spec in specs if spec.name not in arrays]
    if missing:
        raise DataError(f"no array for model input(s) {', '.join(missing)} (arrays: {', '.join(arrays) or 'none'})",
                        path=path, fix="Save one array per model input, named like the input")
    return [arrays[spec.name] for spec in specs]


def _is_whole(array: np.ndarray, spec: TensorSpec) -> bool:
    """True when ``array`` is ``(N, *input_shape)``: one whole input tensor per sample."""
    return array.ndim == len(spec.shape) + 1 and all(e is None or e == g for e, g in zip(spec.shape, array.shape[1:]))


def _check_array(array: np.ndarray, spec: TensorSpec, path: Path) -> np.ndarray:
    expected = spec.sample_shape()
    got = array.shape[1:]
    if _is_whole(array, spec):
        pass
    elif array.ndim != len(spec.shape) or any(e is not None and e != g for e, g in zip(expected, got)):
        want = "x".join("?" if d is None else str(d) for d in expected)
        raise DataError(f"array for input '{spec.name}' has samples of shape {tuple(got)}, the model takes {want}",
                        path=path, fix=f"Save the array as (N, {want.replace('x', ', ')})")
    if len(array) == 0:
        raise DataError("holds no samples", path=path, fix="Save at least one sample per input")
    if np.issubdtype(spec.dtype, np.floating):
        if not np.issubdtype(array.dtype, np.number) or np.issubdtype(array.dtype, np.complexfloating):
            raise DataError(f"array for input '{spec.name}' has dtype {array.dtype}, expected numbers",
                            path=path, fix="Save float32 arrays")
        array = array.astype(spec.dtype, copy=False)
        if not np.isfinite(array).all():
            raise DataError(f"array for input '{spec.name}' contains NaN or Inf", path=path,
                            fix="Remove or repair the non-finite samples")
    elif array.dtype != spec.dtype:
        raise DataError(f"array for input '{spec.name}' has dtype {array.dtype}, the model takes {spec.dtype}",
                        path=path, fix=f"Save it as {spec.dtype}")
    return array


def load_dataset(path: Path, signature: Signature, *, role: str, need_labels: bool = False,
                 num_classes: int | None = None, preprocess: Any = None) -> Dataset:
    """Read ``path`` and check it fits ``signature``; ``role`` ('calibration', 'evaluation') is for messages.

    With ``preprocess`` (the ``[preprocess]`` config table), a folder of images or ``.wav`` files,
    a folder of class sub-folders or a labels ``.csv`` is read by :mod:`edgepipe.data.folders` as the
    model's one input (and labels).
    """
    digest = None
    if preprocess is not None and is_folder_data(path):
        folder = folder_data(path, signature, preprocess)
        arrays, digest = dict(folder.arrays), folder.sha256
    else:
        arrays = _read_arrays(path, role)
    labels = arrays.pop(LABELS_KEY, None)
    inputs = [_check_array(a, s, path) for a, s in zip(_match_inputs(arrays, signature, path), signature.inputs)]
    if len({len(a) for a in inputs}) > 1:
        raise DataError("input arrays have different sample counts", path=path, fix="Give every input N samples")
    if need_labels and labels is None:
        raise DataError(f"{role} data has no '{LABELS_KEY}' array", path=path,
                        fix=f"Add an integer '{LABELS_KEY}' array with one class id per sample")
    if labels is not None:
        labels = _check_labels(labels, len(inputs[0]), num_classes, path)
    whole = tuple(_is_whole(a, s) for a, s in zip(inputs, signature.inputs))
    return Dataset(path=path, inputs=tuple(inputs), labels=labels, sha256=digest or sha256_of(path),
                   whole=whole)


def check_calibration_varies(dataset: Dataset, signature: Signature) -> None:
    """Refuse calibration data in which every input holds one value everywhere (all zeros, say).

    int8 ranges calibrated on it would mean nothing. One constant input beside
    varying ones (a recurrent state fed as zeros) is fine.
    """
    constant = [spec.name for array, spec in zip(dataset.inputs, signature.inputs)
                if array.size and np.issubdtype(array.dtype, np.number) and array.min() == array.max()]
    if constant and len(constant) == len(dataset.inputs):
        value = dataset.inputs[0].flat[0].item()
        raise DataError(f"calibration data is constant (every value of {', '.join(constant)} is {value!r}); "
                        "int8 ranges calibrated on it would be meaningless", path=dataset.path,
                        fix="Calibrate on real, representative samples")


def _check_labels(labels: np.ndarray, count: int, num_classes: int | None, path: Path) -> np.ndarray:
    if labels.ndim != 1 or len(labels) != count or not np.issubdtype(labels.dtype, np.integer):
        raise DataError(f"'{LABELS_KEY}' must be {count} integer class ids, got {labels.dtype} {labels.shape}",
                        path=path, fix="Save one integer label per sample")
    if num_classes is not None and len(labels) and (labels.min() < 0 or labels.max() >= num_classes):
        raise DataError(f"labels range {labels.min()}..{labels.max()} outside the model's {num_classes} classes",
                        path=path, fix="Check the labels match the model's outputs")
    return labels.astype(np.int64)
