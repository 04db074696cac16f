"""The content-addressed build cache: an unchanged target build is restored, not rebuilt.

A target's key is the sha256 of everything its outputs depend on: the model's
and the data's content hashes, the resolved build config (minus where outputs
go), the versions of edgepipe (its source code included, so a development
checkout never reuses stale results) and of the libraries that shape the
artifacts, the host's Python and CPU architecture, and the resolved target
profile. Computing a key reads files and package metadata only, so a cache hit
never imports TensorFlow.

Layout: ``<cache>/v1/<key>/`` holds the target's output files and ``key.json``
(the parts the key was made from, for debugging). Entries are written to a
temporary folder and renamed into place, so a reader never sees half an entry.
The cache folder is ``$EDGEPIPE_CACHE_DIR``, else ``cache.dir`` in the config,
else ``<output>/.edgepipe-cache`` — inside the output folder, so a build writes
nowhere else and deleting the outputs clears the cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.config import BuildConfig
from edgepipe.hashing import sha256_of
from edgepipe.output import StagingFolder
from edgepipe.targets import TargetProfile
from edgepipe.versions import tool_versions

log = logging.getLogger(__name__)

CACHE_ENV = "EDGEPIPE_CACHE_DIR"
#: The cache folder's name inside the output root when neither the env var nor ``cache.dir`` is set.
DEFAULT_CACHE_NAME = ".edgepipe-cache"
LAYOUT = "v1"
KEY_FILE = "key.json"
#: Config tables that say where outputs go or how they are judged later, not what they contain.
_NOT_IN_KEY = {"output", "cache", "gate", "targets", "model", "data"}


def cache_folder(config: BuildConfig) -> Path:
    """Where the cache lives: ``$EDGEPIPE_CACHE_DIR``, else ``cache.dir``, else ``<output>/.edgepipe-cache``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env)
    return config.cache.dir or config.output / DEFAULT_CACHE_NAME


@functools.lru_cache(maxsize=1)
def code_digest() -> str:
    """sha256 of edgepipe's own source files: a changed checkout is a changed edgepipe (hex)."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _data_hash(path: Path | None) -> str | None:
    return None if path is None else sha256_of(path)


def key_parts(config: BuildConfig, profile: TargetProfile) -> dict[str, Any] | None:
    """What one target's outputs depend on; ``None`` when an input cannot be read (the build reports why)."""
    try:
        model_hash = sha256_of(config.model)
        # every split: selection and train drive the ladder's decisions as much as calibration does
        data = {split: _data_hash(getattr(config.data, split))
                for split in ("calibration", "evaluation", "selection", "train")}
    except OSError:
        return None
    return {
        "layout": LAYOUT,
        "model": {"path": str(config.model), "sha256": model_hash},
        "data": data,
        "config": config.model_dump(mode="json", exclude=_NOT_IN_KEY),
        "versions": {**tool_versions(), "edgepipe-source": code_digest()},
        "host": {"python": ".".join(map(str, sys.version_info[:2])), "machine": platform.machine()},
        "target": profile.model_dump(mode="json"),
    }


def digest_of(parts: dict[str, Any]) -> str:
    """The cache key: sha256 of the canonical JSON of ``parts`` (hex)."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """One target's cache key and the parts it was computed from."""

    target: str
    digest: str
    parts: dict[str, Any]


def target_keys(config: BuildConfig, profiles: tuple[TargetProfile, ...]) -> dict[str, CacheKey]:
    """Cache keys of the targets whose inputs can be hashed, by target name."""
    keys: dict[str, CacheKey] = {}
    for profile in profiles:
        parts = key_parts(config, profile)
        if parts is not None:
            keys[profile.name] = CacheKey(profile.name, digest_of(parts), parts)
    return keys


class BuildCache:
    """A folder of finished target outputs, addressed by :class:`CacheKey`."""

    def __init__(self, root: Path):
        self.root = root

    def entry(self, digest: str) -> Path:
        return self.root / LAYOUT / digest

    def lookup(self, key: CacheKey) -> Path | None:
        """The entry folder for ``key`` when a complete one exists."""
        folder = self.entry(key.digest)
        return folder if (folder / KEY_FILE).is_file() else None

    def store(self, key: CacheKey, files: list[Path]) -> None:
        """Copy ``files`` into the entry for ``key`` (atomically; an existing entry is kept)."""
        final = self.entry(key.digest)
        if final.exists():
            return
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=final.parent))
        except OSError as exc:
            log.warning("build cache not writable (%s); continuing without storing", exc)
            return
        try:
            for file in files:
                if file.is_file():
                    shutil.copyfile(file, staging / file.name)
            (staging / KEY_FILE).write_text(json.dumps(key.parts, indent=2, sort_keys=True) + "\n",
                                            encoding="utf-8")
            os.replace(staging, final)
        except OSError as exc:  # another build stored the same entry first, or the disk is full
            log.info("build cache entry %s not stored (%s)", key.digest[:12], exc)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def restore(self, entry: Path, destination: Path) -> Path:
        """Copy a cache entry's files into ``destination`` (staged and renamed into place)."""
        with StagingFolder(destination) as staged:
            assert staged.path is not None
            for file in sorted(p for p in entry.iterdir() if p.is_file() and p.name != KEY_FILE):
                shutil.copyfile(file, staged.path / file.name)
            return staged.commit()
