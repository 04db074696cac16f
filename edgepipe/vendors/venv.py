"""Virtual environments edgepipe creates for vendor tools whose pins clash with its own (RKNN).

Each environment lives under the user cache folder (``$EDGEPIPE_TOOLCHAINS_DIR``, else
``$XDG_CACHE_HOME/edgepipe/toolchains``, else ``~/.cache/edgepipe/toolchains``) in a folder named after the tool
and a hash of its pins, so changing a pin makes a new environment instead of mutating an old one. It is built
in a temporary folder with this Python's ``venv`` and ``pip`` from the package registry, and renamed into
place only when every step worked, so a half-installed environment is never used.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from edgepipe.errors import UserError

log = logging.getLogger(__name__)

MARKER = "edgepipe-toolchain.json"


class ToolchainInstallFailed(UserError):
    """Creating a toolchain's environment failed (network, registry, disk): the environment's fault, exit 1."""


def toolchains_dir() -> Path:
    """Where edgepipe keeps the environments of vendor tools."""
    if os.environ.get("EDGEPIPE_TOOLCHAINS_DIR"):
        return Path(os.environ["EDGEPIPE_TOOLCHAINS_DIR"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "edgepipe" / "toolchains"


@dataclass(frozen=True)
class ManagedEnv:
    """A pinned environment: ``no_deps`` packages are installed without their declared dependencies (whose
    pins are replaced by ``requirements``), then ``requirements`` with theirs."""

    name: str
    no_deps: tuple[str, ...]
    requirements: tuple[str, ...]

    @property
    def path(self) -> Path:
        pins = json.dumps([self.no_deps, self.requirements, sys.version_info[:2]]).encode()
        return toolchains_dir() / f"{self.name}-{hashlib.sha256(pins).hexdigest()[:12]}"

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def installed(self) -> bool:
        """The environment exists and finished installing."""
        return (self.path / MARKER).is_file() and self.python.exists()

    def _pip(self, python: Path, args: list[str], timeout_s: float) -> None:
        command = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-input", *args]
        log.info("toolchain %s: %s", self.name, " ".join(command[3:]))
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, check=False)
        if proc.returncode != 0:
            tail = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()][-3:]
            raise ToolchainInstallFailed(f"installing the {self.name} toolchain failed: {' | '.join(tail)}",
                                         fix="Check network access to the package registry and free disk space, "
                                             f"then run `edgepipe toolchain install {self.name}` again")

    def install(self, timeout_s: float = 3600) -> float:
        """Create the environment (if missing); returns the seconds it took (0 when it was there)."""
        if self.installed():
            return 0.0
        start = time.perf_counter()
        staging = self.path.with_name(self.path.name + f".partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run([sys.executable, "-m", "venv", str(staging)], check=True, capture_output=True,
                           timeout=300)
            python = staging / "bin" / "python"
            if self.no_deps:
                self._pip(python, ["--no-deps", *self.no_deps], timeout_s)
            self._pip(python, list(self.requirements), timeout_s)
            (staging / MARKER).write_text(json.dumps({"no_deps": self.no_deps, "requirements": self.requirements},
                                                     indent=1), encoding="utf-8")
        except subprocess.CalledProcessError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise ToolchainInstallFailed(f"python -m venv failed: {exc.stderr.strip()[-300:]}") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        shutil.rmtree(self.path, ignore_errors=True)
        staging.rename(self.path)
        return time.perf_counter() - start
