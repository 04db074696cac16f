"""Stage: accuracy of every artifact on the evaluation split."""

from __future__ import annotations

from edgepipe.artifacts import Artifact
from edgepipe.evaluate import evaluate_top1
from edgepipe.report.schema import AccuracyInfo
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import BuildInputs


def evaluate_stage(inputs: BuildInputs, artifacts: list[Artifact], threshold: float,
                   stages: StageLog) -> AccuracyInfo | None:
    """Top-1 accuracy of every artifact on the evaluation split, and the int8 drop per format (points)."""
    if inputs.evaluation is None:
        stages.skip("evaluate", "no evaluation data (give --eval or data.evaluation)")
        return None
    with stages.stage("evaluate", f"top-1 on {len(inputs.evaluation)} labelled samples"):
        scores = {a.key: evaluate_top1(a.path, inputs.evaluation) for a in artifacts}
    float_by_format = {a.format: scores[a.key] for a in artifacts if a.precision == "fp32"}
    int8 = {a.format: scores[a.key] for a in artifacts if a.precision != "fp32"}
    reference = float_by_format.get("onnx", next(iter(float_by_format.values()), None))
    drops = {fmt: round(100 * (float_by_format.get(fmt, reference or 0.0) - acc), 4) for fmt, acc in int8.items()}
    return AccuracyInfo(metric="top1", samples=len(inputs.evaluation), threshold_points=threshold,
                        float=reference, float_by_format=float_by_format, int8=int8, drop_points=drops)
