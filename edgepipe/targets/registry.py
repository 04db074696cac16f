"""Finding and loading target profiles, with ``inherit`` and strict validation."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgepipe.config import PROJECT_ROOT, format_validation_error
from edgepipe.errors import ProfileError
from edgepipe.targets.profile import TargetProfile

#: Extra folders of profiles, separated by ``os.pathsep``; searched before the bundled ``targets/``.
TARGETS_PATH_ENV = "EDGEPIPE_TARGETS_PATH"
BUNDLED_TARGETS = PROJECT_ROOT / "targets"


def profile_dirs() -> list[Path]:
    """Folders searched for ``<name>.toml``, first match wins."""
    extra = [Path(p) for p in os.environ.get(TARGETS_PATH_ENV, "").split(os.pathsep) if p]
    return [*extra, BUNDLED_TARGETS]


def available_targets() -> list[str]:
    """Names of every profile found, sorted."""
    names = {p.stem for folder in profile_dirs() if folder.is_dir() for p in folder.glob("*.toml")}
    return sorted(names)


def _find(name: str) -> Path:
    for folder in profile_dirs():
        candidate = folder / f"{name}.toml"
        if candidate.is_file():
            return candidate
    known = ", ".join(available_targets()) or "none"
    raise ProfileError(f"unknown target '{name}'", fix=f"Known targets: {known} (see `edgepipe targets list`)")


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ProfileError(f"malformed profile ({exc})", path=path, fix="Fix the TOML syntax") from None


def _merge(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = dict(parent)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _resolve(name: str, chain: tuple[str, ...] = ()) -> tuple[dict[str, Any], Path]:
    if name in chain:
        cycle = " -> ".join([*chain, name])
        raise ProfileError(f"inherit cycle {cycle}", path=_find(chain[0]), fix="Remove one of the inherit links")
    path = _find(name)
    raw = _read(path)
    parent_name = raw.pop("inherit", None)
    if parent_name is None:
        return raw, path
    if not isinstance(parent_name, str):
        raise ProfileError("'inherit' must be a target name", path=path, fix="Write inherit = \"<target>\"")
    parent, _ = _resolve(parent_name, (*chain, name))
    return _merge(parent, raw), path


def load_profile(name: str) -> TargetProfile:
    """The validated profile ``name`` with its ``inherit`` chain merged (child keys win)."""
    raw, path = _resolve(name)
    raw["name"] = name
    try:
        return TargetProfile.model_validate(raw)
    except ValidationError as exc:
        raise ProfileError(format_validation_error(exc, TargetProfile, str(path))) from None
