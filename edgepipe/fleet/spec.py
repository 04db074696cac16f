"""The fleet file (``FLEET.toml``): which models, which targets, where outputs and the shared cache go.

Validated strictly, like ``edgepipe.toml``: an unknown key is an error that names
the key, the file and the keys allowed there. Relative paths are relative to
the fleet file's folder. A model names its own ``edgepipe.toml`` (``config``),
or uses the fleet's shared one, and may override its model file and data; the
fleet's ``[build]`` table is merged into every model's config last (cheap
settings for CI, say ``latency.runs``), and is validated with the model's config.

```toml
targets = ["host-cpu", "ethos-u55", "mobile-npu"]   # or "all"
output = "build/fleet"
cache = "build/fleet/.edgepipe-cache"               # default: <output>/.edgepipe-cache
workers = 2                                         # default: the CPU count

[build]                                             # merged into every model's config
latency = { runs = 10 }

[[models]]
name = "digits_cnn"
config = "../models/digits_cnn/edgepipe.toml"       # or `model` + `[models.data]`
```
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from edgepipe.config import format_validation_error
from edgepipe.errors import ConfigError

DEFAULT_OUTPUT = Path("build") / "fleet"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ModelData(_Strict):
    """Data paths of one model (the keys of ``[data]`` in ``edgepipe.toml``); unset keys keep the config's."""

    calibration: Path | None = Field(None, description="Calibration inputs for PTQ (.npz or image folder).")
    evaluation: Path | None = Field(None, description="Evaluation inputs (and `labels`) (.npz).")
    selection: Path | None = Field(None, description="Labelled split the quantization ladder chooses on.")
    train: Path | None = Field(None, description="Labelled training split for QAT.")


class FleetModel(_Strict):
    """One row of the fleet: a model and how to build it."""

    name: str = Field(description="Row name, unique in the fleet; also the model's output folder.",
                      min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    model: Path | None = Field(None, description="Model file; default: the one its config names.")
    config: Path | None = Field(None, description="Its edgepipe.toml; default: the fleet's shared `config`.")
    data: ModelData = ModelData()
    targets: list[str] | None = Field(None, min_length=1,
                                      description="Targets of this model only; default: the fleet's.")


class FleetGate(_Strict):
    """Tolerances of the fleet baseline diff (``--baseline``): what counts as a regression of a cell."""

    fidelity_points: float = Field(0.5, ge=0.0, le=100.0,
                                   description="Largest allowed fall of the best int8 top-1, percentage points.")
    cosine: float = Field(0.005, ge=0.0, le=2.0,
                          description="Largest allowed fall of the lowest int8 cosine (label-free models).")
    cpu_ops: bool = Field(True, description="More nodes of an op type on the CPU than in the baseline regress.")


class FleetSpec(_Strict):
    """A whole fleet file, paths resolved."""

    targets: list[str] | Literal["all"] = Field(description="Target profiles of every model, or \"all\".")
    models: list[FleetModel] = Field(min_length=1, description="The models, one row each.")
    output: Path = Field(DEFAULT_OUTPUT, description="Fleet outputs: <output>/<model>/..., fleet.{json,md,html}.")
    cache: Path | None = Field(None, description="Build cache every worker sees; default <output>/.edgepipe-cache.")
    config: Path | None = Field(None, description="Shared edgepipe.toml of models that name none.")
    workers: int | None = Field(None, ge=1, le=4096, description="Parallel jobs; default: the CPU count.")
    build: dict[str, Any] = Field(default_factory=dict,
                                  description="edgepipe.toml keys merged into every model's config.")
    gate: FleetGate = FleetGate()

    @field_validator("models")
    @classmethod
    def _unique_names(cls, models: list[FleetModel]) -> list[FleetModel]:
        seen: set[str] = set()
        for model in models:
            if model.name in seen:
                raise ValueError(f"model name {model.name!r} appears twice; names must be unique")
            seen.add(model.name)
        return models

    def cache_dir(self) -> Path:
        """The shared build cache: ``cache``, else ``<output>/.edgepipe-cache``."""
        return self.cache or self.output / ".edgepipe-cache"


def _path(base: Path, value: Any) -> Any:
    """``value`` relative to ``base``, normalised (``examples/../build`` is ``build``); non-strings unchanged."""
    return os.path.normpath(base / value) if isinstance(value, str) else value


def _resolve(raw: dict[str, Any], base: Path) -> dict[str, Any]:
    """Make the fleet's relative paths relative to ``base`` (the fleet file's folder)."""
    out = dict(raw)
    for key in ("output", "cache", "config"):
        if key in out:
            out[key] = _path(base, out[key])
    models = out.get("models")
    if isinstance(models, list):
        out["models"] = [_resolve_model(m, base) if isinstance(m, dict) else m for m in models]
    return out


def _resolve_model(raw: dict[str, Any], base: Path) -> dict[str, Any]:
    out = dict(raw)
    for key in ("model", "config"):
        if key in out:
            out[key] = _path(base, out[key])
    data = out.get("data")
    if isinstance(data, dict):
        out["data"] = {k: _path(base, v) for k, v in data.items()}
    return out


def load_fleet(path: Path) -> FleetSpec:
    """The validated fleet file at ``path``; a user error naming the file and the key on any problem."""
    try:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("fleet file not found", path=path, fix="Check the FLEET.toml path") from None
    except IsADirectoryError:
        raise ConfigError("is a folder, not a fleet file", path=path, fix="Give the FLEET.toml file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML ({exc})", path=path, fix="Fix the syntax") from None
    try:
        return FleetSpec.model_validate(_resolve(parsed, path.resolve().parent))
    except ValidationError as exc:
        raise ConfigError(_problem(exc, path)) from None


def _problem(exc: ValidationError, path: Path) -> str:
    """One line for the first problem; keys inside ``[[models]]`` name the model's index."""
    first = exc.errors()[0]
    loc = tuple(first["loc"])
    if first["type"] == "extra_forbidden" and len(loc) >= 3 and loc[0] == "models":
        model: type[BaseModel] = ModelData if len(loc) == 4 and loc[2] == "data" else FleetModel
        key = ".".join(str(p) for p in loc)
        return f"{path}: unknown key '{key}'. Allowed keys here: {', '.join(sorted(model.model_fields))}"
    return format_validation_error(exc, FleetSpec, str(path))
