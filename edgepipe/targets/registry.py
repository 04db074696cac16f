"""Finding and loading target profiles, with ``inherit`` and strict validation.

Profiles are searched, first match wins, in: the user's folders (``targets_dir`` in the
config, ``--targets-dir`` on the command line: :func:`use_profile_dirs`), then
``$EDGEPIPE_TARGETS_PATH``, then the built-in profiles (package data in a wheel, the
checkout's ``targets/`` otherwise: :mod:`edgepipe.resources`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from edgepipe.config import format_validation_error
from edgepipe.errors import ProfileError
from edgepipe.resources import bundled
from edgepipe.targets.profile import TargetProfile

#: Extra folders of profiles, separated by ``os.pathsep``; searched before the bundled ``targets/``.
TARGETS_PATH_ENV = "EDGEPIPE_TARGETS_PATH"
BUNDLED_TARGETS = bundled("targets")

_user_dirs: ContextVar[tuple[Path, ...]] = ContextVar("edgepipe_profile_dirs", default=())


@contextmanager
def use_profile_dirs(folders: Iterable[Path | None]) -> Iterator[None]:
    """Search ``folders`` (``None`` entries skipped) before every other profile folder inside the block."""
    given = tuple(Path(f) for f in folders if f is not None)
    missing = [f for f in given if not f.is_dir()]
    if missing:
        raise ProfileError("targets folder not found", path=missing[0],
                           fix="Point targets_dir / --targets-dir at a folder of <name>.toml profiles")
    token = _user_dirs.set(given + _user_dirs.get())
    try:
        yield
    finally:
        _user_dirs.reset(token)


def profile_dirs() -> list[Path]:
    """Folders searched for ``<name>.toml``, first match wins."""
    extra = [Path(p) for p in os.environ.get(TARGETS_PATH_ENV, "").split(os.pathsep) if p]
    return [*_user_dirs.get(), *extra, BUNDLED_TARGETS]


def load_profiles(names: Iterable[str], folder: Path | None = None) -> tuple[TargetProfile, ...]:
    """The profiles ``names`` (each once, in order), searching the user's ``folder`` first."""
    with use_profile_dirs([folder]):
        return tuple(load_profile(name) for name in dict.fromkeys(names))


def available_targets(include_abstract: bool = False) -> list[str]:
    """Names of every profile found, sorted; family bases (``abstract = true``) only when asked for."""
    names = {p.stem for folder in profile_dirs() if folder.is_dir() for p in folder.glob("*.toml")}
    if not include_abstract:
        names = {n for n in names if not _is_abstract(n)}
    return sorted(names)


def _is_abstract(name: str) -> bool:
    """Whether the profile file itself says ``abstract = true`` (a family base for ``inherit``)."""
    try:
        return _read(_find(name)).get("abstract") is True
    except ProfileError:
        return False


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
    parent.pop("abstract", None)  # being a family base is not inherited
    return _merge(parent, raw), path


def load_profile(name: str, allow_abstract: bool = False) -> TargetProfile:
    """The validated profile ``name`` with its ``inherit`` chain merged (child keys win).

    A family base (``abstract = true``) is only returned with ``allow_abstract``: it is not a build target.
    """
    raw, path = _resolve(name)
    raw["name"] = name
    try:
        profile = TargetProfile.model_validate(raw)
    except ValidationError as exc:
        raise ProfileError(format_validation_error(exc, TargetProfile, str(path))) from None
    if profile.abstract and not allow_abstract:
        raise ProfileError(f"'{name}' is a family base for inherit, not a target", path=path,
                           fix=f"Use one of its members: {', '.join(available_targets())}")
    return profile
