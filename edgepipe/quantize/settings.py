"""The ladder's settings from the build config and the targets' profiles, and its optional data splits."""

from __future__ import annotations

from typing import Any

from edgepipe.data import Dataset
from edgepipe.quantize.ladder import LadderSettings
from edgepipe.quantize.recipe import QuantRecipe


def _target_limits(targets: Any) -> tuple[set[str], set[str]]:
    """Precisions and granularities every target runs (profiles without ``[quantization]`` limit nothing)."""
    precisions, granularities = {"int8", "a16w8", "float"}, {"per-channel", "per-tensor"}
    for target in targets:
        spec = getattr(target, "quantization", None)
        if spec is None:
            continue
        if "int16" not in spec.activations:
            precisions.discard("a16w8")
        if not spec.per_channel_weights:
            granularities.discard("per-channel")
    return precisions, granularities


def ladder_settings(config: Any, targets: Any = ()) -> LadderSettings:
    """``[quantization]`` of ``config``, narrowed to what every target can run."""
    q = config.quantization
    precisions, granularities = _target_limits(targets)
    allowed_granularities = tuple(g for g in q.granularities if g in granularities) or ("per-tensor",)
    start = q.granularity if q.granularity in allowed_granularities else allowed_granularities[0]
    return LadderSettings(
        steps=tuple(q.steps), granularity=start, methods=tuple(q.methods), granularities=allowed_granularities,
        precisions=tuple(p for p in q.precisions if p in precisions), mixed_budget=q.mixed_budget,
        qat_epochs=q.qat_epochs, qat_learning_rate=q.qat_learning_rate,
        sensitivity=getattr(q, "sensitivity", "auto"))


def start_recipe(config: Any) -> QuantRecipe:
    """Step (a)'s recipe for ``config`` (what plain PTQ uses when there is no gate)."""
    return QuantRecipe(per_channel=config.quantization.granularity == "per-channel")


def optional_split(config: Any, inputs: Any, name: str) -> Dataset | None:
    """The labelled ``data.<name>`` split (selection, train), checked against the model; None when not given."""
    from edgepipe.data import load_dataset

    path = getattr(config.data, name)
    if path is None:
        return None
    return load_dataset(path, inputs.model.signature, role=name, need_labels=True,
                        preprocess=getattr(config, "preprocess", None))
