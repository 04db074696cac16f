"""Atomic output folders: a build writes into a hidden temporary folder and renames it at the end.

A failed or interrupted build leaves nothing that looks complete: the temporary
folder is removed, and so are any parent folders this build created. Two builds
into the same output folder at once stage into their own unique temporary
folders and commit under an advisory lock (``fcntl.flock`` on the parent
folder itself, so no lock file is left behind): each target folder is always
one build's complete output, the last to commit. A full disk or a read-only
file system while writing is a user error, with nothing left behind.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from edgepipe.errors import UserError

#: ``errno`` values that mean the output cannot be written for a reason outside edgepipe.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGALRM}  # SIGALRM: the stage timeout


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


@contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``folder`` (an open descriptor of the folder itself)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold off SIGINT/SIGTERM (and the stage timeout) for the body: cleanup must not be cut short.

    A signal that arrives meanwhile is recorded and handed to its handler after the body. The handlers are swapped,
    not the signal mask: a process-directed signal goes to any thread that does not block it (TensorFlow's and ONNX
    Runtime's threads), and Python then runs the handler in the main thread all the same.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {sig: signal.signal(sig, lambda number, _frame: pending.append(number)) for sig in _SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            _deliver(pending[0], previous[signal.Signals(pending[0])])


def _deliver(sig: int, handler: object) -> None:
    """Do what ``handler`` (as :func:`signal.signal` returned it) does for ``sig`` now."""
    if callable(handler):
        handler(sig, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(sig)


def write_error(exc: BaseException, final: Path) -> UserError | None:
    """The user error an ``OSError`` raised while writing outputs stands for, if it is not a bug."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_FULL | READ_ONLY:
        return None
    named = isinstance(exc.filename, str | bytes | os.PathLike)
    inside = named and Path(os.fsdecode(exc.filename)).resolve().is_relative_to(final.parent.resolve())
    if exc.errno in READ_ONLY and not inside:  # e.g. an unreadable input: not about the output folder
        return None
    where = f" (writing {Path(os.fsdecode(exc.filename)).name})" if isinstance(exc.filename, str | bytes) else ""
    final = final.parent if final.name.startswith(".") else final  # name the output, not a hidden scratch folder
    if exc.errno in DISK_FULL:
        return UserError(f"no space left on the device{where}; nothing was written", path=final,
                         fix="Free disk space or choose another --output folder")
    return UserError(f"output folder is not writable{where}; nothing was written", path=final,
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
        ready = False
        try:
            with signals_deferred():  # an interrupt here would leave a folder no __exit__ removes
                self._created = _missing_parents(self.final.parent)
                try:
                    self.path = self._make_temporary()
                except OSError as exc:
                    self._clean_up()
                    raise write_error(exc, self.final) or exc from None
                umask = os.umask(0)
                os.umask(umask)
                self.path.chmod(0o777 & ~umask)  # mkdtemp makes it 0700; the final folder should not be
            ready = True
        finally:  # an interrupt held off above is raised as it is let through, still in __enter__, so no
            if not ready:  # __exit__ follows: the folder just made goes now
                with signals_deferred():
                    self._clean_up()
        return self

    def _make_temporary(self) -> Path:
        for attempt in range(3):  # another build may remove a parent it created between mkdir and mkdtemp
            self.final.parent.mkdir(parents=True, exist_ok=True)
            try:
                return Path(tempfile.mkdtemp(prefix=f".{self.final.name}.tmp-", dir=self.final.parent))
            except FileNotFoundError:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def commit(self) -> Path:
        """Replace ``final`` with the staged folder (under the parent's lock; the old one is removed after)."""
        assert self.path is not None
        old = None
        with signals_deferred(), folder_lock(self.final.parent):
            if self.final.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{self.final.name}.old-", dir=self.final.parent))
                os.replace(self.final, old / self.final.name)
            os.replace(self.path, self.final)
            self._committed = True
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return self.final

    def _clean_up(self) -> None:
        """Remove the staged folder and every parent folder this build created (deepest first)."""
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:
                break

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._committed:
            return
        with signals_deferred():
            self._clean_up()
        user_error = write_error(exc, self.final) if exc is not None else None
        if user_error is not None:
            raise user_error from None


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename (readers never see half a file)."""
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return path
