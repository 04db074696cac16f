"""docs/guide/configuration.md lists every key of the build spec (edgepipe/config.py), and only those."""

from __future__ import annotations

import re

from pydantic import BaseModel

from edgepipe.config import PROJECT_ROOT, BuildConfig


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _keys(annotation, f"{prefix}{name}.")
        else:
            keys.append(prefix + name)
    return keys


def test_every_config_key_has_a_row_and_every_row_is_a_key() -> None:
    page = (PROJECT_ROOT / "docs" / "guide" / "configuration.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([\w.]+)` \|", page, re.M))
    keys = set(_keys(BuildConfig))
    assert not keys - rows, f"keys without a row: {sorted(keys - rows)}"
    assert not {r for r in rows if not r.startswith(("EDGEPIPE_", "GITHUB_"))} - keys, "rows of no key"
