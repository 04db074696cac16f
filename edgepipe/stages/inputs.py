"""Validate everything the build reads before the first byte is written."""

from __future__ import annotations

from dataclasses import dataclass, field

from edgepipe.config import BuildConfig
from edgepipe.data.dataset import Dataset, check_calibration_varies, load_dataset
from edgepipe.load import SourceModel, load_model
from edgepipe.metrics.task_plan import check_task_config
from edgepipe.output import check_writable
from edgepipe.quantize.quantized_once import QuantizationMemo
from edgepipe.stage_log import StageLog
from edgepipe.targets import TargetProfile, load_profiles


@dataclass(frozen=True)
class BuildInputs:
    """Everything validated before the first byte is written."""

    model: SourceModel
    calibration: Dataset | None
    evaluation: Dataset | None
    targets: tuple[TargetProfile, ...]
    #: False when the user turned accuracy gating off (``accuracy.gate = false``); the verdict says so.
    accuracy_gate: bool = True
    #: What this build quantized already: a group of targets reaching a recipe another group made gets a copy.
    memo: QuantizationMemo = field(default_factory=QuantizationMemo, compare=False)


def _num_classes(model: SourceModel) -> int | None:
    shape = model.signature.outputs[0].shape if model.signature.outputs else ()
    return shape[-1] if len(shape) == 2 and isinstance(shape[-1], int) else None


def validate_inputs(config: BuildConfig, stages: StageLog) -> BuildInputs:
    """Load the target profiles, the model and its data; any problem is a user error, nothing is written."""
    targets = load_profiles(config.targets, config.targets_dir)
    check_task_config(config.accuracy.task)
    with stages.stage("load"):
        model = load_model(config.model, input_shapes=config.input_shapes)
    calibration = evaluation = None
    if config.data.calibration is not None:
        calibration = load_dataset(config.data.calibration, model.signature, role="calibration",
                                   preprocess=config.preprocess)
        check_calibration_varies(calibration, model.signature)
    if config.data.evaluation is not None:
        # Labels are optional: without them the evaluation is label-free (edgepipe.metrics).
        evaluation = load_dataset(config.data.evaluation, model.signature, role="evaluation",
                                  num_classes=_num_classes(model), preprocess=config.preprocess)
    check_writable(config.output)
    return BuildInputs(model=model, calibration=calibration, evaluation=evaluation, targets=targets,
                       accuracy_gate=config.accuracy.gate)
