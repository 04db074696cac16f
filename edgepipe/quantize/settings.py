"""The ladder's settings from the build config and the targets' profiles, and its optional data splits."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from edgepipe.config import BuildConfig
from edgepipe.data.dataset import Dataset, load_dataset
from edgepipe.quantize.ladder_context import LadderSettings
from edgepipe.quantize.onnx_prepare import prepare_onnx
from edgepipe.quantize.recipe import QuantRecipe
from edgepipe.quantize.vendor_check import compiles_candidates
from edgepipe.targets.profile import TargetProfile


def _target_limits(targets: Iterable[TargetProfile]) -> tuple[set[str], set[str]]:
    """Layer precisions and granularities every target runs (profiles without ``[quantization]`` limit nothing):
    each profile's :attr:`~edgepipe.targets.profile.Quantization.layer_precisions`; int8 always stays (it is what
    the ladder starts from)."""
    precisions, granularities = {"int8", "a16w8", "float"}, {"per-channel", "per-tensor"}
    for target in targets:
        spec = target.quantization
        if spec is None:
            continue
        precisions &= {"int8", *spec.layer_precisions}
        if not spec.per_channel_weights:
            granularities.discard("per-channel")
    return precisions, granularities


def ladder_settings(config: BuildConfig, targets: Iterable[TargetProfile] = ()) -> LadderSettings:
    """``[quantization]`` of ``config``, narrowed to what every target can run, with the vendor compilers that must
    take a mixed-precision result (part of the settings, so targets compiled differently never share a ladder)."""
    q = config.quantization
    targets = tuple(targets)
    precisions, granularities = _target_limits(targets)
    allowed_granularities = tuple(g for g in q.granularities if g in granularities) or ("per-tensor",)
    start = q.granularity if q.granularity in allowed_granularities else allowed_granularities[0]
    compile_with = tuple(sorted({label for t in targets if (label := compiles_candidates(t)) is not None}))
    return LadderSettings(
        steps=tuple(q.steps), granularity=start, methods=tuple(q.methods), granularities=allowed_granularities,
        precisions=tuple(p for p in q.precisions if p in precisions), mixed_budget=q.mixed_budget,
        qat_epochs=q.qat_epochs, qat_learning_rate=q.qat_learning_rate, qat_budget_s=q.qat_budget_s,
        sensitivity=q.sensitivity, time_budget_s=q.time_budget_s, compile_with=compile_with)


def start_recipe(config: BuildConfig) -> QuantRecipe:
    """Step (a)'s recipe for ``config`` (what plain PTQ uses when there is no gate)."""
    return QuantRecipe(per_channel=config.quantization.granularity == "per-channel")


def optional_split(config: BuildConfig, inputs: Any, name: str, need_labels: bool = True) -> Dataset | None:
    """The ``data.<name>`` split (selection, train), checked against the model; None when not given.

    ``need_labels``: a split without labels is a user error (a labelled build's selection, any train split).
    """
    path = getattr(config.data, name)
    if path is None:
        return None
    return load_dataset(path, inputs.model.signature, role=name, need_labels=need_labels,
                        preprocess=config.preprocess)


def prepare_float_onnx(floats: dict[str, Path], calibration: Dataset, settings: LadderSettings,
                       work: Path) -> tuple[LadderSettings, list[str]]:
    """Prepare the float ONNX for the quantizer (:mod:`.onnx_prepare`); narrow ``settings`` to what it allows.

    Returns the settings (per-tensor only when the model stays below opset 13) and the preparation notes.
    """
    if "onnx" not in floats:
        return settings, []
    prepared = prepare_onnx(floats["onnx"], work / f"{floats['onnx'].stem}_prep.onnx",
                            list(calibration.samples(4)))
    notes = [f"onnx: {note}" for note in prepared.notes]
    if prepared.per_channel or "per-channel" not in settings.granularities:
        return settings, notes
    return replace(settings, granularity="per-tensor", granularities=("per-tensor",)), notes
