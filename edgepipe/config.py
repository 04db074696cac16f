"""The build spec: ``edgepipe.toml`` (or ``[tool.edgepipe]`` in ``pyproject.toml``) plus CLI overrides.

Validated strictly: an unknown key is an error that names the key, the file and
the keys allowed there, so a typo never silently falls back to a default.
Relative paths are resolved against the folder of the file that names them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from edgepipe.errors import ConfigError
from edgepipe.resources import bundled

#: The repository root, where the bundled reference model, data and profiles live.
PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = bundled("models") / "digits_cnn" / "digits_cnn.keras"
DEFAULT_DATA = bundled("calib") / "digits"
CONFIG_FILENAME = "edgepipe.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DataConfig(_Strict):
    """Where the calibration and evaluation splits are (``.npz``, read without pickle)."""

    calibration: Path | None = Field(None, description="Calibration inputs for PTQ (.npz).")
    evaluation: Path | None = Field(None, description="Evaluation inputs and `labels` (.npz).")
    selection: Path | None = Field(
        None, description="Labelled split the quantization ladder chooses settings on (never the gate's data).")
    train: Path | None = Field(None, description="Labelled training split for quantization-aware training (QAT).")


#: The task kinds edgepipe scores at task level (:mod:`edgepipe.metrics.task`); ``auto`` guesses each output's.
TaskKind = Literal["auto", "none", "classification", "detection-yolo", "detection-ssd", "detection-heatmap",
                   "text-detection", "ctc", "segmentation", "keypoints"]
TaskParam = bool | int | float | str


class TaskConfig(_Strict):
    """The task-level check of the int8 model against the float model (``[accuracy.task]``)."""

    kind: TaskKind = Field("auto", description="What the outputs are for. auto: guessed per output from its shape and "
                           "float values (unknown kinds get no task check); none: no task check.")
    outputs: list[str] = Field(default_factory=list, description="The outputs the task reads, by name (detection-ssd: "
                               "[boxes, scores]); empty: every output guessed of that kind.")
    min_score: float | None = Field(None, ge=0.0, le=1.0, description="Smallest task score vs float (F1, mIoU, "
                                    "character agreement, top-1 agreement, PCK); unset: the kind's default.")
    params: dict[str, TaskParam] = Field(default_factory=dict, description="Decoding parameters of the kind's metric "
                                         "(score_threshold, nms_iou, objectness, box_format, blank, class_axis, ...).")


class AccuracyConfig(_Strict):
    """The accuracy gate. The label-free defaults (cosine, SQNR whole and by part, task scores) flag every int8
    setting that broke a real model in the fidelity study, and no intact one (docs/reference/fidelity.md)."""

    metric: Literal["top1"] = Field("top1", description="Accuracy metric on the evaluation split.")
    max_drop_points: float = Field(
        1.0, ge=0.0, le=100.0, description="Largest allowed float→int8 top-1 drop, in percentage points."
    )
    # Label-free comparison of int8 (and converted) outputs with the float outputs (edgepipe.metrics).
    min_cosine: float = Field(0.99, ge=-1.0, le=1.0,
                              description="Smallest allowed cosine similarity per output (label-free gate).")
    min_sqnr_db: float | None = Field(15.0, description="Smallest allowed SQNR per output, dB (label-free gate): "
                                      "catches scale errors a high cosine hides.")
    min_part_sqnr_db: float | None = Field(
        10.0, description="Smallest allowed SQNR of each part of an output, dB (label-free gate): channels whose range "
                          "is far below the output's largest (a detector's scores beside its boxes) are judged apart.")
    min_top1_agreement: float | None = Field(
        None, ge=0.0, le=1.0, description="Smallest allowed share of samples whose top-1 class agrees (classifiers).")
    max_abs_error: float | None = Field(None, ge=0.0, description="Largest allowed absolute error per output.")
    min_top1: float | None = Field(None, ge=0.0, le=1.0, description="Smallest allowed int8 top-1 (0..1) on labelled "
                                   "data when there is no float model to measure a drop against (a model that "
                                   "came quantized); unset: such a model is not proven.")
    task: TaskConfig = Field(default_factory=TaskConfig, description="The task-level check (detections, text, "
                             "segmentation, ...): [accuracy.task].")
    gate: bool = Field(True, description="False: accuracy is measured and reported but does not decide the verdict "
                                         "(the verdict says so); the int8 artifact and compatibility still do.")


class LatencyConfig(_Strict):
    """The simple host latency measurement of every artifact."""

    warmup: int = Field(5, ge=0, le=10_000, description="Untimed runs before measuring.")
    runs: int = Field(50, ge=1, le=100_000, description="Timed runs; the median is reported (ms).")
    threads: int | None = Field(1, ge=1, le=1024, description="Intra-op threads of every timed session "
                                "(one thread: stable fp32-vs-int8 ratios on a shared host); unset: runtime default.")


class LimitsConfig(_Strict):
    """Resource limits (see ``edgepipe.limits``): absurd inputs are refused before allocation."""

    max_model_mb: float = Field(2048.0, gt=0, description="Largest model file (or SavedModel folder), MiB.")
    max_tensor_mb: float = Field(1024.0, gt=0, description="Largest declared tensor (model input, data array), MiB.")
    max_data_mb: float = Field(4096.0, gt=0, description="Largest total of arrays one data file declares, MiB.")
    stage_timeout_s: float | None = Field(None, gt=0, description="Wall-time limit of each stage (s); none if unset.")

    def to_limits(self) -> Any:
        """The :class:`edgepipe.limits.ResourceLimits` these settings describe."""
        from edgepipe.limits import ResourceLimits

        return ResourceLimits(**self.model_dump())


class CacheConfig(_Strict):
    """The content-addressed build cache (see ``edgepipe.cache``)."""

    enabled: bool = Field(True, description="Restore unchanged builds from the cache (`--no-cache` turns it off).")
    dir: Path | None = Field(
        None, description="Cache folder; default $EDGEPIPE_CACHE_DIR, else <output>/.edgepipe-cache.")


class GateConfig(_Strict):
    """Tolerances of the baseline regression gate (``edgepipe gate``, ``build --baseline``)."""

    accuracy_points: float = Field(0.5, ge=0.0, le=100.0,
                                   description="Largest allowed fall of float or int8 accuracy, percentage points.")
    drop_points: float = Field(0.5, ge=0.0, le=100.0,
                               description="Largest allowed growth of the float→int8 drop, percentage points.")
    latency_slack_pct: float = Field(
        10.0, ge=0.0, description="Margin (%) on top of the measured 95% confidence intervals of the medians, for "
                                  "run-to-run host variation the intervals of one run cannot see; 0 on quiet runners.")
    latency_budget_ms: float | None = Field(None, gt=0.0,
                                            description="Median latency budget of every int8 artifact (ms).")
    size_pct: float = Field(5.0, ge=0.0, description="Largest allowed growth of an artifact's size (%).")
    placement: bool = Field(True, description="An op newly placed on the CPU is a regression.")
    baseline: Path | None = Field(
        None, description="Baseline every build is compared with (baseline.json, summary.json, report.json or a build "
                          "folder); `build --baseline` sets it.")


class PreprocessConfig(_Strict):
    """How a folder of images becomes model inputs (edgepipe.data.preprocess); unset values follow the model's input."""

    size: tuple[int, int] | None = Field(None, description="Resize to (height, width) pixels.")
    layout: Literal["NHWC", "NCHW"] | None = Field(None, description="Array layout of one batch.")
    mean: list[float] = Field([0.0], min_length=1, description="Subtracted from pixels scaled to 0..1, per channel.")
    std: list[float] = Field([1.0], min_length=1, description="Divides (pixel/255 - mean), per channel.")
    dtype: Literal["float32", "uint8"] | None = Field(None, description="Array dtype; default the input's.")
    limit: int | None = Field(None, ge=1, description="Use at most this many images (sorted by name).")
    sample_rate: int | None = Field(
        None, ge=1, description="Resample .wav files to this rate (Hz) before cutting input windows.")


class QuantizationConfig(_Strict):
    """The fallback ladder (docs/guide/quantization.md): which steps run and what they may use.

    Target profiles with a ``[quantization]`` table narrow ``precisions`` and
    ``granularities`` further (int16 activations, per-channel weights).
    """

    steps: list[Literal["ptq", "calibration", "equalize", "nncf", "mixed", "qat"]] = Field(
        ["ptq", "calibration", "equalize", "nncf", "mixed", "qat"], description="Ladder steps to run, in ladder order.")
    granularity: Literal["per-channel", "per-tensor"] = Field(
        "per-channel", description="Weight granularity of step (a), plain PTQ.")
    methods: list[Literal["minmax", "percentile", "entropy"]] = Field(
        ["minmax", "percentile", "entropy"], min_length=1, description="Calibration methods step (b) may try.")
    granularities: list[Literal["per-channel", "per-tensor"]] = Field(
        ["per-channel", "per-tensor"], min_length=1, description="Weight granularities the target runs.")
    precisions: list[Literal["int8", "a16w8", "float"]] = Field(
        ["int8", "a16w8", "float"], min_length=1,
        description="Layer precisions the target runs (a16w8: int16 activations; float: CPU fallback on an NPU).")
    mixed_budget: float = Field(0.25, gt=0.0, le=1.0, description="Largest share of layers mixed precision keeps.")
    qat_epochs: int = Field(3, ge=1, le=1000, description="QAT fine-tuning epochs.")
    qat_learning_rate: float = Field(1e-4, gt=0.0, le=1.0, description="QAT Adam learning rate.")
    qat_budget_s: float = Field(
        900.0, gt=0.0, le=86400.0,
        description="Modelled seconds QAT of an ONNX/TFLite input may train (a cost model of one step, not a "
                    "clock: the same model gets the same steps on any host); fewer steps when they do not fit, "
                    "skipped when one pass over the samples does not.")
    sensitivity: Literal["auto", "always"] = Field(
        "auto", description="Per-layer sensitivity: 'auto' only when the ladder needs it (mixed precision, or "
                            "no step met the threshold); 'always' also when plain PTQ already met it.")
    time_budget_s: float = Field(
        600.0, gt=0.0, le=86400.0,
        description="Wall-clock seconds the whole ladder may take (a clock, unlike qat_budget_s): checked between "
                    "steps and between the tries inside a step; when it is spent the build keeps the best result "
                    "so far and the report lists what did not run. Step (a) always runs.")


#: The legalization rewrites by name (:data:`edgepipe.legalize.registry.REWRITES`, in the same order).
RewriteName = Literal["hard-sigmoid", "hard-swish", "pool-cascade", "focus", "gelu", "erf", "layer-norm",
                      "softmax-axis", "reshape-rank", "div-constant"]


class LegalizeConfig(_Strict):
    """Per-target legalization (docs/guide/targets.md): ops a target runs on its CPU rewritten into equivalent
    forms its accelerator runs, in the artifacts only (the model file is never changed)."""

    enabled: bool = Field(True, description="Try the rewrites for every target whose profile checks an ONNX "
                                            "artifact; false: artifacts keep the model's own ops.")
    rewrites: dict[RewriteName, bool] = Field(
        default_factory=dict, description="Per-rewrite switches by name (false: never tried); rewrites not named "
                                          "follow `enabled`.")

    def allows(self, name: str) -> bool:
        """Whether the rewrite ``name`` may be tried."""
        return self.enabled and self.rewrites.get(name, True)  # type: ignore[call-overload]


class BuildConfig(_Strict):
    """Everything one ``edgepipe build`` needs, after the config file and CLI flags are merged."""

    model: Path = Field(DEFAULT_MODEL, description="Model to build: .keras or Keras .h5, SavedModel folder, .onnx, "
                                                   ".tflite, torch.export .pt2, or python:pkg.module:factory (runs "
                                                   "that code).")
    targets: list[str] = Field(["host-cpu"], min_length=1, description="Target profiles from targets/.")
    targets_dir: Path | None = Field(None, description="Folder of your own profiles (<name>.toml), searched "
                                     "before the built-in ones; relative to this file.")
    output: Path = Field(Path("build"), description="Outputs go to <output>/<model>/<target>/.")
    data: DataConfig = DataConfig()
    accuracy: AccuracyConfig = AccuracyConfig()
    latency: LatencyConfig = LatencyConfig()
    quantization: QuantizationConfig = QuantizationConfig()
    legalize: LegalizeConfig = LegalizeConfig()
    limits: LimitsConfig = LimitsConfig()
    cache: CacheConfig = CacheConfig()
    gate: GateConfig = GateConfig()
    input_shapes: dict[str, list[int]] = Field(
        {}, description="Fixed shapes for ONNX inputs with dynamic dimensions, by input name.")
    preprocess: PreprocessConfig = PreprocessConfig()

    @property
    def model_name(self) -> str:
        """Folder name for this model's outputs: the model file's stem (a ``python:`` factory: its name)."""
        if str(self.model).startswith("python:"):  # a PyTorch factory (edgepipe.load.torch_loader)
            return str(self.model).rpartition(":")[2]
        return self.model.name.split(".")[0] if self.model.is_dir() else self.model.stem


def _bundled_data_defaults(config: BuildConfig) -> BuildConfig:
    """Point the data at the bundled splits when the bundled model is built without data paths."""
    if config.model.resolve() != DEFAULT_MODEL:
        return config
    data = config.data.model_copy(
        update={
            "calibration": config.data.calibration or DEFAULT_DATA / "calibration.npz",
            "evaluation": config.data.evaluation or DEFAULT_DATA / "evaluation.npz",
            "selection": config.data.selection or DEFAULT_DATA / "selection.npz",
            "train": config.data.train or DEFAULT_DATA / "train.npz",
        }
    )
    return config.model_copy(update={"data": data})


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the table at ``loc`` (the parent of the offending key)."""
    for part in loc:
        field = model.model_fields.get(str(part))
        annotation = getattr(field, "annotation", None)
        # an optional table (``Quantization | None``) is that table
        tables = [a for a in (annotation, *get_args(annotation)) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not tables:
            break
        model = tables[0]
    return sorted(model.model_fields)


def format_validation_error(err: ValidationError, model: type[BaseModel], source: str) -> str:
    """One line for the first problem in ``err``: which key, in which file, and what is allowed."""
    first = err.errors()[0]
    loc = tuple(first["loc"])
    key = ".".join(str(p) for p in loc)
    key = "".join(c if c.isprintable() else repr(c)[1:-1] for c in key)  # a key with a newline stays one line
    if first["type"] == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(model, loc[:-1]))
        return f"{source}: unknown key '{key}'. Allowed keys here: {allowed}"
    return f"{source}: invalid value for '{key}': {' '.join(str(first['msg']).split())}"


def _resolve_paths(raw: dict[str, Any], base: Path) -> dict[str, Any]:
    """Make relative paths in a raw config table relative to ``base`` (the config file's folder)."""
    out = dict(raw)
    for key in ("model", "output", "targets_dir"):
        if isinstance(out.get(key), str) and not out[key].startswith("python:"):  # python: = PyTorch factory
            out[key] = str(base / out[key])
    cache = out.get("cache")
    if isinstance(cache, dict) and isinstance(cache.get("dir"), str):
        out["cache"] = {**cache, "dir": str(base / cache["dir"])}
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
