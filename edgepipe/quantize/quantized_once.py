"""Each (float model, recipe, calibration data) is quantized once per build, and each candidate scored once.

Targets with different quantization requirements form separate groups, but
their ladders often reach the same recipe (plain per-channel min/max PTQ for
host-cpu and the NPUs alike). The second group then gets a copy of the first
one's file instead of a second calibration and quantization, and the figures the
first group measured on that file (its fidelity on the decision split, the damage
of each node, a QAT run) instead of a second run: a detector built for every
target walks five ladders that share most of their steps. The build owns one
:class:`QuantizationMemo` (``BuildInputs.memo``) and hands it to every quantizer
call; a call without one quantizes every time.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from edgepipe.data.dataset import Dataset
from edgepipe.hashing import sha256_of

log = logging.getLogger(__name__)

MemoKey = tuple[Any, ...]
T = TypeVar("T")


def data_key(dataset: Dataset) -> MemoKey:
    """Identifies the samples of ``dataset`` a measurement ran on: its file's digest, how many, labelled or not."""
    return dataset.sha256, len(dataset), dataset.labels is not None


class QuantizationMemo:
    """The quantized files of one build, by what made them. Object identities in its keys (the calibration
    dataset, a TF graph) are valid only while the build that owns the memo runs."""

    def __init__(self) -> None:
        self._done: dict[MemoKey, Path] = {}
        self._values: dict[MemoKey, Any] = {}
        self._digests: dict[tuple[str, int, int], str] = {}

    def key(self, source: object, recipe: object, calibration: object, extra: object = None) -> MemoKey:
        """Identifies one quantization: the float source (a file: its :meth:`digest`, so that two groups' copies of
        one rewrite are one source; else the object itself), the recipe, the calibration dataset object and anything
        else that changes the result."""
        if isinstance(source, Path):
            return self.digest(source), recipe, id(calibration), extra
        return id(source), recipe, id(calibration), extra

    def reuse(self, key: MemoKey, out: Path) -> Path | None:
        """``out`` as a copy of the file an earlier identical quantization wrote, or None when there was none."""
        done = self._done.get(key)
        if done is None or not done.is_file():
            return None
        if done.resolve() != out.resolve():
            shutil.copyfile(done, out)
        log.info("reused the quantization of %s for %s", done, out.name)
        return out

    def remember(self, key: MemoKey, out: Path) -> None:
        """Record that ``out`` holds the result of the quantization ``key``."""
        self._done[key] = out

    def digest(self, path: Path) -> str:
        """The sha256 of the file at ``path`` (read once per version of the file): two groups' copies of one
        quantization, in different folders, have one digest."""
        stat = path.stat()
        version = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
        if version not in self._digests:
            self._digests[version] = sha256_of(path)
        return self._digests[version]

    def recall(self, key: MemoKey, compute: Callable[[], T], keep: Callable[[T], bool] = lambda _: True) -> T:
        """What ``compute`` returned for ``key`` earlier in this build, else its result now (kept for later when
        ``keep`` says so: a large result is cheaper to compute again than to hold for the rest of the build).

        ``key`` must name everything the result depends on, files by :meth:`digest`; a ``compute`` that raises
        leaves nothing behind."""
        if key in self._values:
            log.info("reused %s measured earlier in this build", key[0])
            return self._values[key]  # type: ignore[no-any-return]
        value = compute()
        if keep(value):
            self._values[key] = value
        return value
