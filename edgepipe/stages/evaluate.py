"""Stage: accuracy of every artifact on the evaluation split, with labels (top-1) or without (label-free).

Every artifact runs once on the evaluation inputs (or, with no evaluation data, the
calibration inputs). With labels, top-1 accuracy per artifact and the int8 drop are
the gate; the label-free comparison of every other artifact with the float reference
(:mod:`edgepipe.metrics`: each output whole and part by part, and the task checks planned
from the float outputs) is always reported and gates the build when there are no labels.

Each target is judged on the arithmetic it performs: NPU and GPU targets on exact integer
semantics (int32 accumulation, what their kernels compute); host-cpu on its int8 ONNX files
as this machine's ONNX Runtime runs them with default options (fused kernels that may round
or saturate differently). An artifact its runtime cannot run on the data is recorded as that
runtime's failure and left out of the comparison (it cannot count as evidence for any target).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from edgepipe.artifacts import Artifact
from edgepipe.config import AccuracyConfig
from edgepipe.containment import contained, runtime_of
from edgepipe.data.dataset import Dataset
from edgepipe.errors import ToolFailed
from edgepipe.metrics.accuracy import top1_accuracy
from edgepipe.metrics.compare import Arithmetic, ModelOutputs, compare, reference_of, run_outputs
from edgepipe.metrics.label_free import Thresholds
from edgepipe.metrics.paired import drops_by_format, resolution_warnings
from edgepipe.metrics.task_plan import TaskPlan, plan_tasks
from edgepipe.quantize.host.forms import exact_twin
from edgepipe.report.accuracy_stats import DropInterval
from edgepipe.report.label_free import LabelFreeInfo
from edgepipe.report.schema import AccuracyInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs
from edgepipe.targets import TargetProfile

#: Samples the label-free comparison runs on at most (it runs every artifact on each).
LABEL_FREE_SAMPLES = 100
EXACT: Arithmetic = "exact integer"
HOST: Arithmetic = "host runtime"


def thresholds_of(accuracy: AccuracyConfig) -> Thresholds:
    return Thresholds(min_cosine=accuracy.min_cosine, min_sqnr_db=accuracy.min_sqnr_db,
                      min_part_sqnr_db=accuracy.min_part_sqnr_db, min_top1_agreement=accuracy.min_top1_agreement,
                      max_abs_error=accuracy.max_abs_error)


def runs_on_host_kernels(artifact: Artifact) -> bool:
    """An int8 ONNX file: ONNX Runtime's default session fuses it into host-specific int8 kernels."""
    return artifact.format == "onnx" and artifact.precision != "fp32"


@dataclass(frozen=True)
class Accuracy:
    """The evaluation of one group of targets: on exact integer semantics, and (when the group has host-cpu) on
    this host's default ONNX Runtime. :func:`accuracy_for` gives each target its view."""

    exact: AccuracyInfo
    host: AccuracyInfo | None = None


def _top1(artifacts: list[Artifact], scores: dict[str, float], threshold: float) -> dict[str, object]:
    float_by_format = {a.format: scores[a.key] for a in artifacts if a.precision == "fp32"}
    int8 = {a.format: scores[a.key] for a in artifacts if a.precision != "fp32"}
    reference = float_by_format.get("onnx", next(iter(float_by_format.values()), None))
    baseline = {fmt: float_by_format.get(fmt, reference) for fmt in int8}
    drops = {fmt: round(100 * (base - int8[fmt]), 4) for fmt, base in baseline.items() if base is not None}
    return dict(metric="top1", threshold_points=threshold, float=reference, float_by_format=float_by_format,
                int8=int8, drop_points=drops)


def _run_all(artifacts: list[Artifact], data: Dataset, limit: int | None, stages: StageLog,
             host: bool) -> dict[str, ModelOutputs]:
    """Every artifact's outputs (with ``host``: only the int8 ONNX files, on the host's kernels); an artifact its
    runtime cannot run is recorded as that runtime's failure and left out."""
    outputs: dict[str, ModelOutputs] = {}
    for artifact in artifacts:
        if host and not runs_on_host_kernels(artifact):
            continue
        twin = None if host else exact_twin(artifact, artifacts)
        if twin is not None and twin.key in outputs:  # the same integers: its outputs, not a second run
            outputs[artifact.key] = outputs[twin.key]
            continue
        try:
            with contained(runtime_of(artifact.format)):
                outputs[artifact.key] = run_outputs(artifact.path, data, limit, host=host)
        except ToolFailed as failure:
            stages.fail("evaluate", failure, artifact=artifact.key)
    return outputs


def _info(artifacts: list[Artifact], outputs: dict[str, ModelOutputs], data: Dataset, accuracy: AccuracyConfig,
          plans: list[TaskPlan], arithmetic: Arithmetic, extra_keys: set[str],
          split: Literal["evaluation", "calibration"]) -> AccuracyInfo:
    """The accuracy record of ``artifacts`` from their ``outputs`` (compared with the float reference's)."""
    reference = reference_of(artifacts)
    thresholds = thresholds_of(accuracy)
    assert reference is not None
    comparisons = [compare(a, reference, outputs[a.key], outputs[reference.key], thresholds, plans,
                           EXACT if a.precision == "fp32" or not runs_on_host_kernels(a) else arithmetic)
                   for a in artifacts if a.key != reference.key]
    labelled = data.labels is not None
    label_free = LabelFreeInfo(samples=len(outputs[reference.key].arrays[0]), data=split, gated=not labelled,
                               thresholds=dict(vars(thresholds)), comparisons=comparisons)
    if not labelled:
        return AccuracyInfo(metric="label_free", samples=label_free.samples,
                            threshold_points=accuracy.max_drop_points, float=None, float_by_format={}, int8={},
                            drop_points={}, label_free=label_free, arithmetic=arithmetic)
    assert data.labels is not None
    scores = {a.key: top1_accuracy(outputs[a.key].arrays[0], data.labels) for a in artifacts}
    correct = {a.key: outputs[a.key].arrays[0].reshape(len(data.labels), -1).argmax(axis=1) == data.labels
               for a in artifacts}
    primary = [a for a in artifacts if a.key not in extra_keys]
    drops = drops_by_format(primary, correct)
    return AccuracyInfo(samples=len(data), label_free=label_free, arithmetic=arithmetic, min_top1=accuracy.min_top1,
                        drop_interval={fmt: DropInterval.of(d) for fmt, d in drops.items()},
                        resolution_warnings=resolution_warnings(len(data), accuracy.max_drop_points, drops),
                        **_top1(primary, scores, accuracy.max_drop_points))  # type: ignore[arg-type]


def evaluate_stage(inputs: BuildInputs, artifacts: list[Artifact], accuracy: AccuracyConfig,
                   stages: StageLog, extra: list[Artifact] | None = None) -> Accuracy | None:
    """Top-1 per artifact when the evaluation data has labels, and the label-free comparison always; once on
    exact integer semantics and, when the group has a host-cpu target, once more on this host's kernels.

    ``extra`` (host-cpu's int8 forms) are run and compared label-free with the float reference like
    every artifact, so a target deploying them has evidence for them; they stay out of the per-format
    top-1 (keyed by format, where the build's own int8 artifact of that format stands).
    """
    extra_keys = {a.key for a in extra or []}
    artifacts = artifacts + list(extra or [])
    data = inputs.evaluation or inputs.calibration
    if data is None or not artifacts:
        stages.skip("evaluate", "no evaluation or calibration data to run the models on" if data is None
                    else "no artifact could run")
        return None
    split: Literal["evaluation", "calibration"] = "evaluation" if inputs.evaluation is not None else "calibration"
    labelled = data.labels is not None
    limit = None if labelled else LABEL_FREE_SAMPLES
    on_host = any(t.device_class == "cpu" for t in inputs.targets) and any(map(runs_on_host_kernels, artifacts))
    detail = (f"top-1 on {len(data)} labelled samples" if labelled else
              f"label-free on {min(len(data), LABEL_FREE_SAMPLES)} {split} samples")
    with stages.stage("evaluate", detail + (", int8 ONNX also on this host's kernels" if on_host else "")):
        outputs = _run_all(artifacts, data, limit, stages, host=False)
        host_outputs = _run_all(artifacts, data, limit, stages, host=True) if on_host else {}
    artifacts = [a for a in artifacts if a.key in outputs]
    reference = reference_of(artifacts)
    if reference is None:
        return None
    float_outputs = outputs[reference.key]
    plans = plan_tasks(float_outputs.names, float_outputs.arrays, accuracy.task)
    exact = _info(artifacts, outputs, data, accuracy, plans, EXACT, extra_keys, split)
    if not on_host:
        return Accuracy(exact)
    on_kernels = [a for a in artifacts if not runs_on_host_kernels(a) or a.key in host_outputs]
    host = _info(on_kernels, {**outputs, **host_outputs}, data, accuracy, plans, HOST, extra_keys, split)
    return Accuracy(exact, host)


def accuracy_for(accuracy: Accuracy | None, artifacts: list[Artifact], target: TargetProfile) -> AccuracyInfo | None:
    """``target``'s view of ``accuracy``: on the arithmetic it performs (host-cpu: this host's kernels), with only
    the label-free comparisons of ``artifacts`` (one target's report lists only what its folder holds: host-cpu's
    extra int8 forms are not another target's)."""
    if accuracy is None:
        return None
    info = accuracy.host if target.device_class == "cpu" and accuracy.host is not None else accuracy.exact
    if info.label_free is None:
        return info
    keys = {a.key for a in artifacts}
    comparisons = [c for c in info.label_free.comparisons if c.artifact in keys]
    label_free = info.label_free.model_copy(update={"comparisons": comparisons})
    return info.model_copy(update={"label_free": label_free})

