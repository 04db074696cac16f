"""Stage: accuracy of every artifact on the evaluation split, with labels (top-1) or without (label-free).

Every artifact runs once on the evaluation inputs (or, with no evaluation data, the
calibration inputs). With labels, top-1 accuracy per artifact and the int8 drop are
the gate; the label-free comparison of every other artifact with the float reference
(:mod:`edgepipe.metrics`) is always reported and gates the build when there are no labels.
An artifact its runtime cannot run on the data is recorded as that runtime's failure and
left out of the comparison (it cannot count as evidence for any target).
"""

from __future__ import annotations

from typing import Literal

from edgepipe.artifacts import Artifact
from edgepipe.config import AccuracyConfig
from edgepipe.containment import contained, runtime_of
from edgepipe.errors import ToolFailed
from edgepipe.metrics.accuracy import top1_accuracy
from edgepipe.metrics.compare import ModelOutputs, compare, reference_of, run_outputs
from edgepipe.metrics.label_free import Thresholds
from edgepipe.metrics.paired import drops_by_format, resolution_warnings
from edgepipe.quantize.host.forms import exact_twin
from edgepipe.report.accuracy_stats import DropInterval
from edgepipe.report.label_free import LabelFreeInfo
from edgepipe.report.schema import AccuracyInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs

#: Samples the label-free comparison runs on at most (it runs every artifact on each).
LABEL_FREE_SAMPLES = 100


def thresholds_of(accuracy: AccuracyConfig) -> Thresholds:
    return Thresholds(min_cosine=accuracy.min_cosine, min_sqnr_db=accuracy.min_sqnr_db,
                      min_top1_agreement=accuracy.min_top1_agreement, max_abs_error=accuracy.max_abs_error)


def _top1(artifacts: list[Artifact], scores: dict[str, float], threshold: float) -> dict[str, object]:
    float_by_format = {a.format: scores[a.key] for a in artifacts if a.precision == "fp32"}
    int8 = {a.format: scores[a.key] for a in artifacts if a.precision != "fp32"}
    reference = float_by_format.get("onnx", next(iter(float_by_format.values()), None))
    drops = {fmt: round(100 * (float_by_format.get(fmt, reference or 0.0) - acc), 4) for fmt, acc in int8.items()}
    return dict(metric="top1", threshold_points=threshold, float=reference, float_by_format=float_by_format,
                int8=int8, drop_points=drops)


def evaluate_stage(inputs: BuildInputs, artifacts: list[Artifact], accuracy: AccuracyConfig,
                   stages: StageLog, extra: list[Artifact] | None = None) -> AccuracyInfo | None:
    """Top-1 per artifact when the evaluation data has labels, and the label-free comparison always.

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
    detail = (f"top-1 on {len(data)} labelled samples" if labelled else
              f"label-free on {min(len(data), LABEL_FREE_SAMPLES)} {split} samples")
    outputs: dict[str, ModelOutputs] = {}
    with stages.stage("evaluate", detail):
        for artifact in list(artifacts):
            twin = exact_twin(artifact, artifacts)
            if twin is not None and twin.key in outputs:  # the same integers: its outputs, not a second run
                outputs[artifact.key] = outputs[twin.key]
                continue
            try:
                with contained(runtime_of(artifact.format)):
                    outputs[artifact.key] = run_outputs(artifact.path, data, limit)
            except ToolFailed as failure:
                stages.fail("evaluate", failure, artifact=artifact.key)
                artifacts = [a for a in artifacts if a.key != artifact.key]
    if not outputs:
        return None
    reference = reference_of(artifacts)
    thresholds = thresholds_of(accuracy)
    comparisons = [compare(a, reference, outputs, thresholds) for a in artifacts
                   if reference is not None and a.key != reference.key]
    label_free = LabelFreeInfo(samples=len(next(iter(outputs.values())).arrays[0]), data=split, gated=not labelled,
                               thresholds={k: v for k, v in vars(thresholds).items()}, comparisons=comparisons)
    if labelled:
        assert data.labels is not None
        scores = {key: top1_accuracy(out.arrays[0], data.labels) for key, out in outputs.items()}
        correct = {key: out.arrays[0].reshape(len(data.labels), -1).argmax(axis=1) == data.labels
                   for key, out in outputs.items()}
        artifacts = [a for a in artifacts if a.key not in extra_keys]
        drops = drops_by_format(artifacts, correct)
        return AccuracyInfo(samples=len(data), label_free=label_free,
                            drop_interval={fmt: DropInterval.of(d) for fmt, d in drops.items()},
                            resolution_warnings=resolution_warnings(len(data), accuracy.max_drop_points, drops),
                            **_top1(artifacts, scores, accuracy.max_drop_points))  # type: ignore[arg-type]
    return AccuracyInfo(metric="label_free", samples=label_free.samples, threshold_points=accuracy.max_drop_points,
                        float=None, float_by_format={}, int8={}, drop_points={}, label_free=label_free)


def accuracy_for(accuracy: AccuracyInfo | None, artifacts: list[Artifact]) -> AccuracyInfo | None:
    """``accuracy`` with only the label-free comparisons of ``artifacts`` (one target's report lists only
    what its folder holds: host-cpu's extra int8 forms are not another target's)."""
    if accuracy is None or accuracy.label_free is None:
        return accuracy
    keys = {a.key for a in artifacts}
    comparisons = [c for c in accuracy.label_free.comparisons if c.artifact in keys]
    label_free = accuracy.label_free.model_copy(update={"comparisons": comparisons})
    return accuracy.model_copy(update={"label_free": label_free})
