"""A small TOML writer for the zoo's ``edgepipe.toml`` files: strings, numbers, lists and nested tables."""

from __future__ import annotations

import json
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def toml_text(table: dict[str, Any], prefix: str = "") -> str:
    """``table`` as TOML text: scalars and inline values first, then one ``[section]`` per nested table.

    ``input_shapes`` stays an inline table (its keys are model input names).
    """
    lines = [f"{_key(k)} = {_value(v)}" for k, v in table.items()
             if not isinstance(v, dict) or k == "input_shapes"]
    for key, value in table.items():
        if isinstance(value, dict) and key != "input_shapes":
            lines += ["", f"[{prefix}{key}]", toml_text(value, f"{prefix}{key}.").rstrip("\n")]
    return "\n".join(lines) + "\n"
