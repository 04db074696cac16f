"""The build spec: ``edgepipe.toml`` (or ``[tool.edgepipe]`` in ``pyproject.toml``) plus CLI overrides.

Validated strictly: an unknown key is an error that names the key, the file and
the keys allowed there, so a typo never silently falls back to a default.
Relative paths are resolved against the folder of the file that names them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edgepipe.errors import ConfigError

#: The repository root, where the bundled reference model, data and profiles live.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = PROJECT_ROOT / "models" / "digits_cnn" / "digits_cnn.keras"
DEFAULT_DATA = PROJECT_ROOT / "calib" / "digits"
CONFIG_FILENAME = "edgepipe.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataConfig(_Strict):
    """Where the calibration and evaluation splits are (``.npz``, read without pickle)."""

    calibration: Path | None = Field(None, description="Calibration inputs for PTQ (.npz).")
    evaluation: Path | None = Field(None, description="Evaluation inputs and `labels` (.npz).")


class AccuracyConfig(_Strict):
    """The accuracy gate."""

    metric: Literal["top1"] = Field("top1", description="Accuracy metric on the evaluation split.")
    max_drop_points: float = Field(
        1.0, ge=0.0, le=100.0, description="Largest allowed float→int8 top-1 drop, in percentage points."
    )


class LatencyConfig(_Strict):
    """The simple host latency measurement of every artifact."""

    warmup: int = Field(5, ge=0, le=10_000, description="Untimed runs before measuring.")
    runs: int = Field(50, ge=1, le=100_000, description="Timed runs; the median is reported (ms).")


class BuildConfig(_Strict):
    """Everything one ``edgepipe build`` needs, after the config file and CLI flags are merged."""

    model: Path = Field(DEFAULT_MODEL, description="Model to build: .keras, SavedModel folder, .onnx or .tflite.")
    targets: list[str] = Field(["host-cpu"], min_length=1, description="Target profiles from targets/.")
    output: Path = Field(Path("build"), description="Outputs go to <output>/<model>/<target>/.")
    data: DataConfig = DataConfig()
    accuracy: AccuracyConfig = AccuracyConfig()
    latency: LatencyConfig = LatencyConfig()

    @property
    def model_name(self) -> str:
        """Folder name for this model's outputs: the model file's stem."""
        return self.model.name.split(".")[0] if self.model.is_dir() else self.model.stem


def _bundled_data_defaults(config: BuildConfig) -> BuildConfig:
    """Point the data at the bundled splits when the bundled model is built without data paths."""
    if config.model.resolve() != DEFAULT_MODEL:
        return config
    data = config.data.model_copy(
        update={
            "calibration": config.data.calibration or DEFAULT_DATA / "calibration.npz",
            "evaluation": config.data.evaluation or DEFAULT_DATA / "evaluation.npz",
        }
    )
    return config.model_copy(update={"data": data})


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the table at ``loc`` (the parent of the offending key)."""
    for part in loc:
        field = model.model_fields.get(str(part))
        annotation = getattr(field, "annotation", None)
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            break
        model = annotation
    return sorted(model.model_fields)


def format_validation_error(err: ValidationError, model: type[BaseModel], source: str) -> str:
    """One line for the first problem in ``err``: which key, in which file, and what is allowed."""
    first = err.errors()[0]
    loc = tuple(first["loc"])
    key = ".".join(str(p) for p in loc)
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(model, loc[:-1]))
        return f"{source}: unknown key '{key}'. Allowed keys here: {allowed}"
    return f"{source}: invalid value for '{key}': {first['msg']}"


def _resolve_paths(raw: dict[str, Any], base: Path) -> dict[str, Any]:
    """Make relative paths in a raw config table relative to ``base`` (the config file's folder)."""
    out = dict(raw)
    for key in ("model", "output"):
        if isinstance(out.get(key), str):
            out[key] = str(base / out[key])
    data = out.get("data")
    if isinstance(data, dict):
        out["data"] = {k: str(base / v) if isinstance(v, str) else v for k, v in data.items()}
    return out


def read_config_file(path: Path) -> dict[str, Any]:
    """The raw edgepipe table of ``path`` (``edgepipe.toml`` or ``pyproject.toml``), paths resolved."""
    try:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("config file not found", path=path, fix="Check the --config path") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"not valid TOML ({exc})", path=path, fix="Fix the syntax") from None
    if path.name == "pyproject.toml":
        parsed = parsed.get("tool", {}).get("edgepipe", {})
    return _resolve_paths(parsed, path.resolve().parent)


def find_config_file(start: Path) -> Path | None:
    """``edgepipe.toml`` in ``start``, else a ``pyproject.toml`` there with a ``[tool.edgepipe]`` table."""
    candidate = start / CONFIG_FILENAME
    if candidate.is_file():
        return candidate
    pyproject = start / "pyproject.toml"
    if pyproject.is_file():
        try:
            if "edgepipe" in tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}):
                return pyproject
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None
    return None


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict):
            merged[key] = _merge(merged.get(key, {}) if isinstance(merged.get(key), dict) else {}, value)
        elif value is not None:
            merged[key] = value
    return merged


def load_config(config_path: Path | None = None, overrides: dict[str, Any] | None = None,
                cwd: Path | None = None) -> BuildConfig:
    """The merged build config: file (explicit, or found in ``cwd``) then CLI ``overrides``.

    ``overrides`` holds CLI values in the config's shape; ``None`` values are ignored.
    """
    path = config_path or find_config_file(cwd or Path.cwd())
    raw = read_config_file(path) if path else {}
    source = str(path) if path else "command line"
    merged = _merge(raw, overrides or {})
    try:
        config = BuildConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, BuildConfig, source)) from None
    return _bundled_data_defaults(config)
