"""Bytes of real files on disk, labelled by their known type, as a byte-level file classifier takes them.

The files are Python's own standard library and C headers and the packages installed
beside edgepipe, so the labels are honest: a ``.py`` file is Python source, a ``.h``
file is C. ``magika_features`` applies Magika's v3 feature extraction (its
``config.min.json``): the first and last ``beg_size``/``end_size`` bytes of the file's first
and last ``block_size`` bytes, whitespace stripped, padded with ``padding_token``.
"""

from __future__ import annotations

import functools
import json
import os
import sysconfig
from pathlib import Path

import numpy as np

#: Magika label → (folder key, filename pattern) of real files of that type.
KINDS = {
    "python": ("stdlib", "*.py"),
    "c": ("include", "*.h"),
    "json": ("purelib", "*.json"),
    "html": ("stdlib", "*.html"),
    "xml": ("purelib", "*.xml"),
    "ini": ("purelib", "*.cfg"),
    "markdown": ("purelib", "*.md"),
    "toml": ("purelib", "*.toml"),
    "rst": ("purelib", "*.rst"),
    "cpp": ("purelib", "*.cpp"),
    "csv": ("purelib", "*.csv"),
    "css": ("purelib", "*.css"),
}


@functools.cache
def _files_by_suffix(root: str) -> dict[str, list[Path]]:
    """Every file under ``root`` by lower-case suffix, sorted: one walk of the tree however many kinds use it."""
    found: dict[str, list[Path]] = {}
    for folder, _, names in os.walk(root):
        for name in names:
            found.setdefault(os.path.splitext(name)[1].lower(), []).append(Path(folder, name))
    return {suffix: sorted(paths) for suffix, paths in found.items()}


def labelled_files(per_kind: int, seed: int = 0, min_bytes: int = 256, skip: int = 0) -> list[tuple[Path, str]]:
    """Up to ``per_kind`` real files of each type in :data:`KINDS`, chosen with a seeded generator; ``skip``
    leaves out the first files of each type's shuffled order, so two calls with the same seed and
    ``skip = per_kind`` of the first give disjoint sets (calibration and evaluation share no file)."""
    rng = np.random.default_rng(seed)
    paths = sysconfig.get_paths()
    chosen: list[tuple[Path, str]] = []
    for label, (root, pattern) in KINDS.items():
        candidates = _files_by_suffix(paths[root]).get(pattern.removeprefix("*"), [])
        files = [p for p in candidates if p.is_file() and p.stat().st_size >= min_bytes]
        for index in rng.permutation(len(files))[skip:skip + per_kind]:
            chosen.append((files[index], label))
    return chosen


def magika_features(path: Path, config: dict) -> np.ndarray:
    """Magika's model input for one file: int32 (beg_size + end_size,), bytes 0..255 and the padding token."""
    data = path.read_bytes()
    block, beg_size, end_size = config["block_size"], config["beg_size"], config["end_size"]
    pad = config["padding_token"]
    beg = list(data[:block].lstrip()[:beg_size])
    end = list(data[-block:].rstrip()[-end_size:]) if end_size else []
    beg = beg + [pad] * (beg_size - len(beg))
    end = [pad] * (end_size - len(end)) + end
    return np.asarray(beg + end, np.int32)


def magika_dataset(config_path: Path, per_kind: int, seed: int = 0, skip: int = 0) -> dict[str, np.ndarray]:
    """``{'bytes': (N, 2048) int32, 'labels': (N,) int64}`` with labels indexing Magika's target label space."""
    config = json.loads(config_path.read_text())
    space = config["target_labels_space"]
    files = labelled_files(per_kind, seed, skip=skip)
    features = np.stack([magika_features(path, config) for path, _ in files])
    labels = np.asarray([space.index(label) for _, label in files], np.int64)
    return {"bytes": features, "labels": labels}
