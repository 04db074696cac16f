"""Build step that ships the bundled data inside the package (metadata lives in pyproject.toml).

``targets/``, ``models/`` and ``calib/`` at the top of the repository stay the source of truth;
``build_py`` copies them into ``edgepipe/_bundled/`` of the build tree, so a wheel or a
non-editable install builds the reference model from any folder. An editable install reads
the source tree directly (:mod:`edgepipe.resources`), so nothing is copied there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: Top-level folder -> files shipped (model training scripts stay in the repository).
BUNDLED = {"targets": ("*.toml",), "models": ("*.keras", "*.md", "*.toml"), "calib": ("*.npz", "*.json")}


class BuildPyWithData(build_py):
    """``build_py`` plus the bundled data folders under ``edgepipe/_bundled/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "edgepipe" / "_bundled"
        for folder, patterns in BUNDLED.items():
            for pattern in patterns:
                for source in sorted((ROOT / folder).rglob(pattern)):
                    dest = target / source.relative_to(ROOT)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, dest)


setup(cmdclass={"build_py": BuildPyWithData})
