"""Each (float model, recipe, calibration data) is quantized once per build, whatever the targets.

Targets with different quantization requirements form separate groups, but
their ladders often reach the same recipe (plain per-channel min/max PTQ for
host-cpu and the NPUs alike). The second group then gets a copy of the first
one's file instead of a second calibration and quantization. The build owns one
:class:`QuantizationMemo` (``BuildInputs.memo``) and hands it to every quantizer
call; a call without one quantizes every time.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MemoKey = tuple[Any, ...]


class QuantizationMemo:
    """The quantized files of one build, by what made them. Object identities in its keys (the calibration
    dataset, a TF graph) are valid only while the build that owns the memo runs."""

    def __init__(self) -> None:
        self._done: dict[MemoKey, Path] = {}

    @staticmethod
    def key(source: object, recipe: object, calibration: object, extra: object = None) -> MemoKey:
        """Identifies one quantization: the float source (a file: path and modification time; else the object
        itself), the recipe, the calibration dataset object and anything else that changes the result."""
        if isinstance(source, Path):
            stat = source.stat()
            return str(source.resolve()), stat.st_mtime_ns, stat.st_size, recipe, id(calibration), extra
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
