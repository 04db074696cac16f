"""Hypothesis strategies for TOML documents shaped like edgepipe's config and profiles, and a tiny TOML writer.

Keys are drawn mostly from the real schema (every field name of the pydantic
models, at any depth) so examples reach the validators, plus a few unknown
ones; values are any TOML value: strings, ints (huge ones too), floats
(nan, inf), booleans, arrays and tables, nested.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

from hypothesis import strategies as st
from pydantic import BaseModel

#: Examples per fuzz test: 100 in CI; set EDGEPIPE_FUZZ_EXAMPLES for a longer run.
EXAMPLES = int(os.environ.get("EDGEPIPE_FUZZ_EXAMPLES", "100"))


def field_names(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    """Every field name of ``model`` and of the models nested in it."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names = set(model.model_fields)
    for field in model.model_fields.values():
        for candidate in _model_types(field.annotation):
            names |= field_names(candidate, seen)
    return names


def _model_types(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [t for arg in getattr(annotation, "__args__", ()) for t in _model_types(arg)]


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.text(max_size=12), st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
        st.sampled_from(["host-cpu", "onnx", "tflite", "int8", "npu", "cpu", "top1", "", "..", "/etc/passwd"]),
        st.integers(min_value=-3, max_value=300))


def documents(keys: list[str], extra_values: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[dict]:
    """TOML tables whose keys come from ``keys`` (and now and then anywhere), values nested up to a few levels."""
    key = st.one_of(st.sampled_from(sorted(keys)), st.text(min_size=1, max_size=8))
    leaf = scalars() if extra_values is None else st.one_of(scalars(), extra_values)
    values = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(key, inner, max_size=5)), max_leaves=12)
    return st.dictionaries(key, values, max_size=8)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{_string(k)} = {_value(v)}" for k, v in value.items()) + "}"


def _string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's, except that TOML wants \\u escapes for control chars)."""
    return json.dumps(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))


def to_toml(document: dict[str, Any]) -> str:
    """``document`` as TOML text: one ``key = value`` line per top-level key, tables inline."""
    return "".join(f"{_string(key)} = {_value(value)}\n" for key, value in document.items())
