"""Files written where the user said (a config from ``edgepipe init``, a fleet baseline): written whole, or a
user error (exit 1) that names the path and the fix.

Build outputs go through :mod:`edgepipe.output` (atomic folders); this is for one
file at a path the user gave. ``overwrite=False`` refuses an existing file, even
one that appears between a check and the write (the file is opened exclusively).
"""

from __future__ import annotations

from pathlib import Path

from edgepipe.errors import UserError
from edgepipe.output import write_text_atomic


def refuse_existing(path: Path, what: str, fix: str) -> None:
    """A user error when ``path`` exists: edgepipe never overwrites a ``what`` (``fix`` says what to do)."""
    if path.exists():
        raise UserError(f"already exists; edgepipe never overwrites a {what}", path=path, fix=fix)


def write_user_file(path: Path, text: str, *, what: str, fix: str, overwrite: bool) -> Path:
    """Write ``text`` (UTF-8) to ``path``, creating its folder; refuse an existing file unless ``overwrite``
    (then it is replaced atomically: an interrupted write leaves the old file whole).

    Any ``OSError`` (no permission, a read-only or full disk, a folder in the way) is a user error naming the
    ``what`` and the ``fix``.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if overwrite:
            return write_text_atomic(path, text)
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UserError(f"already exists; edgepipe never overwrites a {what}", path=path, fix=fix) from None
    except OSError as exc:
        raise UserError(f"cannot write the {what} ({exc.strerror or exc})", path=path, fix=fix) from None
    return path
