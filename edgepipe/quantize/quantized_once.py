"""Each (float model, recipe, calibration data) is quantized once per build, whatever the targets.

Targets with different quantization requirements form separate groups, but
their ladders often reach the same recipe (plain per-channel min/max PTQ for
host-cpu and the NPUs alike). The second group then gets a copy of the first
one's file instead of a second calibration and quantization.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_DONE: dict[tuple[Any, ...], Path] = {}


def memo_key(source: object, recipe: object, calibration: object, extra: object = None) -> tuple[Any, ...]:
    """Identifies one quantization: the float source (a file: path and modification time; else the object
    itself), the recipe, the calibration dataset object and anything else that changes the result."""
    if isinstance(source, Path):
        stat = source.stat()
        return str(source.resolve()), stat.st_mtime_ns, stat.st_size, recipe, id(calibration), extra
    return id(source), recipe, id(calibration), extra


def reuse(key: tuple[Any, ...], out: Path) -> Path | None:
    """``out`` as a copy of the file an earlier identical quantization wrote, or None when there was none."""
    done = _DONE.get(key)
    if done is None or not done.is_file():
        return None
    if done.resolve() != out.resolve():
        shutil.copyfile(done, out)
    log.info("reused the quantization of %s for %s", done, out.name)
    return out


def remember(key: tuple[Any, ...], out: Path) -> None:
    """Record that ``out`` holds the result of the quantization ``key``."""
    _DONE[key] = out


def forget() -> None:
    """Start a new build: object identities of the previous one mean nothing any more."""
    _DONE.clear()
