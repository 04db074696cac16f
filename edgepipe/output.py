"""Atomic output folders: a build writes into a hidden temporary folder and renames it at the end.

A failed or interrupted build leaves nothing that looks complete: the temporary
folder is removed, and so are any parent folders this build created.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from edgepipe.errors import UserError


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for parent in [path, *path.parents]:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def check_writable(folder: Path) -> None:
    """A user error unless ``folder`` (or its nearest existing parent) can be written."""
    existing = next((p for p in [folder, *folder.parents] if p.exists()), Path("/"))
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise UserError("output folder is not writable", path=existing,
                        fix="Choose another --output folder or fix its permissions")


class StagingFolder:
    """A temporary folder beside ``final`` that becomes ``final`` on :meth:`commit`."""

    def __init__(self, final: Path):
        self.final = final
        self.path: Path | None = None
        self._created: list[Path] = []
        self._committed = False

    def __enter__(self) -> StagingFolder:
        check_writable(self.final.parent)
        self._created = _missing_parents(self.final.parent)
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f".{self.final.name}.tmp-", dir=self.final.parent))
        umask = os.umask(0)
        os.umask(umask)
        self.path.chmod(0o777 & ~umask)  # mkdtemp makes it 0700; the final folder should not be
        return self

    def commit(self) -> Path:
        """Replace ``final`` with the staged folder in one rename (the old one is removed after)."""
        assert self.path is not None
        old = None
        if self.final.exists():
            old = self.final.with_name(f".{self.final.name}.old-{os.getpid()}")
            os.replace(self.final, old)
        os.replace(self.path, self.final)
        self._committed = True
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.final

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._committed:
            return
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        for folder in self._created:  # deepest first
            try:
                folder.rmdir()
            except OSError:
                break
