"""Plan a fleet: each model's build config, then one job per (model, group of targets sharing quantization).

Planning reads configs and target profiles only (no TensorFlow), so every
mistake in the fleet file — a bad key in a model's config or in ``[build]``, an
unknown target, a model file that does not exist — is a user error (exit 1)
before any job starts. A model file that exists but is corrupt is found by its
job and fails that row only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edgepipe.config import BuildConfig, load_config
from edgepipe.errors import ConfigError, UserError
from edgepipe.fleet.job import FleetJob
from edgepipe.fleet.spec import FleetModel, FleetSpec
from edgepipe.pipeline import quantization_groups, resolve_targets
from edgepipe.targets import available_targets

#: Keys of edgepipe.toml the fleet sets per model, so ``[build]`` may not.
_PER_MODEL_KEYS = frozenset({"model", "targets", "output", "data", "cache"})


@dataclass(frozen=True)
class FleetPlan:
    """The jobs of a fleet, in file order, and the matrix they fill."""

    jobs: list[FleetJob]
    models: list[str]
    targets: list[str]

    @property
    def cells(self) -> int:
        return sum(len(job.targets) for job in self.jobs)


def _targets(spec: FleetSpec, model: FleetModel) -> list[str]:
    if model.targets is not None:
        return model.targets
    return available_targets() if spec.targets == "all" else list(spec.targets)


def model_config(spec: FleetSpec, model: FleetModel, source: Path, *, use_cache: bool = True) -> BuildConfig:
    """The build config of one fleet row: its (or the shared) config, ``[build]``, then the row's own keys."""
    overrides: dict[str, Any] = {**spec.build, "model": model.model, "targets": _targets(spec, model),
                                 "output": spec.output / model.name,
                                 "data": model.data.model_dump(exclude_none=True)}
    if not use_cache:
        overrides["cache"] = {"enabled": False}
    config_path = model.config or spec.config
    try:
        config = load_config(config_path, overrides, cwd=source.resolve().parent)
    except UserError as exc:
        raise ConfigError(f"model '{model.name}': {exc.one_line()}", path=source) from None
    if not config.model.exists():
        raise ConfigError(f"model '{model.name}': model file {config.model} does not exist", path=source,
                          fix="Fix its `model` (or its config's) path")
    return config


def plan_fleet(spec: FleetSpec, source: Path, *, use_cache: bool = True) -> FleetPlan:
    """Every job of the fleet; ``source`` is the fleet file (named in errors, the base of default configs)."""
    bad = sorted(_PER_MODEL_KEYS & spec.build.keys())
    if bad:
        raise ConfigError(f"[build] may not set {', '.join(bad)}: the fleet sets them per model", path=source,
                          fix="Move them to the fleet's top level or a [[models]] entry")
    cache_dir = spec.cache_dir() if use_cache else None
    jobs: list[FleetJob] = []
    targets: dict[str, None] = {}
    for model in spec.models:
        config = model_config(spec, model, source, use_cache=use_cache)
        try:
            profiles = resolve_targets(config)
        except UserError as exc:
            raise ConfigError(f"model '{model.name}': {exc.one_line()}", path=source) from None
        targets.update(dict.fromkeys(p.name for p in profiles))  # the fleet's order, not the groups'
        for index, group in enumerate(quantization_groups(config, profiles)):
            names = [p.name for p in group]
            jobs.append(FleetJob(job_id=f"{model.name}#{index}", model=model.name,
                                 config=config.model_copy(update={"targets": names}), fleet_output=spec.output,
                                 cache_dir=cache_dir if config.cache.enabled else None))
    return FleetPlan(jobs=jobs, models=[m.name for m in spec.models], targets=list(targets))
