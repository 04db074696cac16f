"""Data the way users keep it: image or ``.wav`` folders, one sub-folder per class, or labels in a CSV.

Given as ``data.calibration`` / ``data.evaluation`` (or ``--calib`` / ``--eval``):

- a folder of images (``.png``, ``.jpg``, …) or ``.wav`` files: unlabelled inputs;
- a folder of sub-folders, one per class, each holding images or ``.wav`` files: labelled.
  The class id is the position of the sub-folder's name in sorted order (numeric order when
  every name is a whole number: ``2`` before ``10``), as torchvision's ``ImageFolder`` does;
- a ``.csv`` file with a header row and the columns ``file`` and ``label``: ``file`` is relative to
  the CSV's folder, ``label`` is an integer class id;
- a folder holding ``labels.csv`` (same columns) next to its images.

Images go through :mod:`edgepipe.data.preprocess`, audio through :mod:`edgepipe.data.audio`; the model
must have one input (a ``.npz`` feeds several).
"""

from __future__ import annotations

import csv
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.data.audio import AUDIO_SUFFIXES, audio_files, wav_windows
from edgepipe.data.preprocess import IMAGE_SUFFIXES, image_files, image_spec_for, load_image
from edgepipe.errors import DataError
from edgepipe.tensors import Signature, TensorSpec

log = logging.getLogger(__name__)

LABELS_CSV = "labels.csv"


@dataclass(frozen=True)
class FolderData:
    """Arrays read from a folder or CSV (``labels`` included when there are labels) and their content hash."""

    arrays: dict[str, np.ndarray]
    sha256: str


def _class_order(names: list[str]) -> list[str]:
    """Sub-folder names in class-id order: numeric when every name is a whole number, else sorted text."""
    if all(name.isdigit() for name in names):
        return sorted(names, key=int)
    return sorted(names)


def _is_media(path: Path) -> bool:
    return path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES + AUDIO_SUFFIXES


def _digest(files: list[Path], root: Path, extra: bytes = b"") -> str:
    """sha256 over the files' names relative to ``root`` and their contents (and ``extra``, e.g. the CSV)."""
    digest = hashlib.sha256(extra)
    for file in files:
        digest.update(str(file.relative_to(root)).encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


def _single_input(signature: Signature, path: Path) -> TensorSpec:
    if len(signature.inputs) != 1:
        raise DataError(f"a folder feeds one input, the model has {len(signature.inputs)}", path=path,
                        fix="Give a .npz with one array per model input")
    return signature.inputs[0]


def _samples(files: list[Path], spec: TensorSpec, preprocess: Any, path: Path) -> list[np.ndarray]:
    """One array per file: (1, *sample) for an image, (windows, *sample) for a ``.wav`` file."""
    out: list[np.ndarray] = []
    image_spec = None
    for file in files:
        if file.suffix.lower() in AUDIO_SUFFIXES:
            out.append(_audio(file, spec, preprocess))
            continue
        if image_spec is None:
            try:
                image_spec = image_spec_for(spec, preprocess)
            except ValueError as exc:
                raise DataError(str(exc), path=path, fix="Set [preprocess] size and layout, or give a .npz") from None
        out.append(load_image(file, image_spec)[None])
    return out


def _audio(file: Path, spec: TensorSpec, preprocess: Any) -> np.ndarray:
    sample_shape = spec.sample_shape()
    if not sample_shape or not all(isinstance(d, int) for d in sample_shape):
        raise DataError(f"input {spec.describe()} has no fixed length for audio windows", path=file,
                        fix=f"Fix its shape with input_shapes = {{ {spec.name} = [1, <samples>] }}")
    length = int(np.prod([int(d) for d in sample_shape if d is not None]))
    clips = wav_windows(file, length, getattr(preprocess, "sample_rate", None))
    return clips.reshape(len(clips), *sample_shape).astype(spec.dtype)


def _stack(per_file: list[np.ndarray], labels: list[int] | None, spec: TensorSpec, path: Path) -> dict:
    if not per_file:
        raise DataError("holds no images or .wav files (" + ", ".join(IMAGE_SUFFIXES + AUDIO_SUFFIXES) + ")",
                        path=path, fix="Put the samples in the folder (or one sub-folder per class), or give a .npz")
    arrays: dict[str, np.ndarray] = {spec.name: np.concatenate(per_file)}
    if labels is not None:
        arrays["labels"] = np.repeat(np.asarray(labels, np.int64), [len(a) for a in per_file])
    return arrays


def _class_folders(folder: Path, spec: TensorSpec, preprocess: Any) -> FolderData:
    classes = _class_order([p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")])
    members = [sorted(p for p in (folder / name).iterdir() if _is_media(p)) for name in classes]
    # Round-robin over the classes, so that [preprocess] limit keeps every class.
    ranked = sorted((rank, index, file) for index, files in enumerate(members) for rank, file in enumerate(files))
    ranked = ranked[: _limit(preprocess)]
    files, labels = [file for _, _, file in ranked], [index for _, index, _ in ranked]
    log.info("%s: classes by sub-folder: %s", folder, ", ".join(f"{i}={n}" for i, n in enumerate(classes)))
    arrays = _stack(_samples(files, spec, preprocess, folder), labels, spec, folder)
    return FolderData(arrays, _digest(files, folder, "\n".join(classes).encode()))


def _limit(preprocess: Any) -> int | None:
    """``[preprocess] limit``: at most this many files (None: all)."""
    return getattr(preprocess, "limit", None)


def _read_csv(path: Path) -> list[tuple[Path, int]]:
    """``(file, label)`` rows of a labels CSV; files relative to the CSV's folder."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            if reader.fieldnames is None or not {"file", "label"} <= set(reader.fieldnames):
                raise DataError(f"needs the header columns file,label (found {reader.fieldnames})", path=path,
                                fix="Write a header row 'file,label' and one row per sample")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read the labels CSV ({exc})", path=path, fix="Save it as UTF-8 CSV") from None
    out = []
    for number, row in enumerate(rows, start=2):
        label = (row.get("label") or "").strip()
        if not label.lstrip("-").isdigit():
            raise DataError(f"line {number}: label {label!r} is not an integer class id", path=path,
                            fix="Use integer class ids in the label column")
        file = path.parent / (row.get("file") or "").strip()
        if not _is_media(file):
            raise DataError(f"line {number}: {file.name} is not an image or .wav file here", path=path,
                            fix="Give paths relative to the CSV's folder")
        out.append((file, int(label)))
    if not out:
        raise DataError("labels CSV has no rows", path=path, fix="Add one row per sample")
    return out


def _csv_data(path: Path, spec: TensorSpec, preprocess: Any) -> FolderData:
    rows = _read_csv(path)[: _limit(preprocess)]
    files = [file for file, _ in rows]
    arrays = _stack(_samples(files, spec, preprocess, path), [label for _, label in rows], spec, path)
    return FolderData(arrays, _digest(files, path.parent, path.read_bytes()))


def folder_data(path: Path, signature: Signature, preprocess: Any) -> FolderData:
    """The arrays of a data folder or labels CSV (see the module docstring for the layouts)."""
    spec = _single_input(signature, path)
    if path.is_file():
        return _csv_data(path, spec, preprocess)
    if (path / LABELS_CSV).is_file():
        return _csv_data(path / LABELS_CSV, spec, preprocess)
    files = sorted(set(image_files(path)) | set(audio_files(path)))[: _limit(preprocess)]
    if files:
        return FolderData(_stack(_samples(files, spec, preprocess, path), None, spec, path), _digest(files, path))
    return _class_folders(path, spec, preprocess)


def is_folder_data(path: Path) -> bool:
    """True for what :func:`folder_data` reads: a folder, or a ``.csv`` file."""
    return path.is_dir() or (path.is_file() and path.suffix.lower() == ".csv")
