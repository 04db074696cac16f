"""Where the bundled data is: the built-in target profiles, the reference model and its data splits.

The top-level ``targets/``, ``models/`` and ``calib/`` of the source tree are the
source of truth. A wheel (or ``pip install .``) carries copies made at build time
(``setup.py``'s ``build_py`` step) under ``edgepipe/_bundled/``; a checkout or an
editable install reads the source tree. Nothing is committed twice.
"""

from __future__ import annotations

from pathlib import Path

#: The folder a built wheel carries the data in (never present in the source tree).
PACKAGE_DATA = Path(__file__).resolve().parent / "_bundled"
#: The checkout's root (an editable install or running from the source tree).
SOURCE_ROOT = Path(__file__).resolve().parent.parent
#: The top-level folders shipped as package data.
BUNDLED_FOLDERS = ("targets", "models", "calib")


def bundled(folder: str) -> Path:
    """The bundled ``folder`` (one of :data:`BUNDLED_FOLDERS`): the wheel's copy when installed, else the
    checkout's."""
    if folder not in BUNDLED_FOLDERS:
        raise ValueError(f"not a bundled folder: {folder!r}; bundled: {', '.join(BUNDLED_FOLDERS)}")
    packaged = PACKAGE_DATA / folder
    return packaged if packaged.is_dir() else SOURCE_ROOT / folder
