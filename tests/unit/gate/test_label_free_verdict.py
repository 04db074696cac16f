"""The verdict without labels: the label-free thresholds gate it; with labels they are informational."""

from __future__ import annotations

from edgepipe.gate.verdict import VerdictInputs, decide
from edgepipe.report.label_free import ComparisonInfo, LabelFreeInfo, OutputAgreementInfo
from edgepipe.report.schema import AccuracyInfo, ArtifactInfo
from edgepipe.targets import load_profile

ARTIFACTS = [ArtifactInfo(path="model.onnx", format="onnx", precision="fp32", size_bytes=1),
             ArtifactInfo(path="model_int8.tflite", format="tflite", precision="int8", size_bytes=1)]


def _verdict(accuracy: AccuracyInfo) -> tuple[str, str]:
    verdict, reason, _ = decide(VerdictInputs(load_profile("host-cpu"), ARTIFACTS, accuracy))
    return verdict, reason


def _accuracy(cosine: float, *, gated: bool) -> AccuracyInfo:
    failures = [f"y: cosine {cosine:.4f} < 0.99"] if cosine < 0.99 else []
    comparison = ComparisonInfo(artifact="model_int8.tflite", reference="model.onnx", failures=failures,
                                outputs=[OutputAgreementInfo(output="y", cosine=cosine, sqnr_db=20.0,
                                                             max_abs_error=0.1)])
    label_free = LabelFreeInfo(samples=8, data="calibration", gated=gated, comparisons=[comparison],
                               thresholds={"min_cosine": 0.99, "min_sqnr_db": None, "min_top1_agreement": None,
                                           "max_abs_error": None})
    if gated:
        return AccuracyInfo(metric="label_free", samples=8, threshold_points=1.0, float=None, float_by_format={},
                            int8={}, drop_points={}, label_free=label_free)
    return AccuracyInfo(metric="top1", samples=8, threshold_points=1.0, float=0.9, float_by_format={"onnx": 0.9},
                        int8={"tflite": 0.9}, drop_points={"tflite": 0.0}, label_free=label_free)


def test_label_free_failure_fails_the_build_without_labels() -> None:
    verdict, reason = _verdict(_accuracy(0.95, gated=True))
    assert verdict == "fail" and "model_int8.tflite: y: cosine 0.9500 < 0.99" in reason
    assert _verdict(_accuracy(0.999, gated=True))[0] == "pass"


def test_with_labels_top1_gates_and_label_free_is_informational() -> None:
    verdict, reason = _verdict(_accuracy(0.95, gated=False))
    assert verdict == "pass" and "drop" in reason


def _comparison(artifact: str, cosine: float) -> ComparisonInfo:
    failures = [f"y: cosine {cosine:.4f} < 0.99"] if cosine < 0.99 else []
    return ComparisonInfo(artifact=artifact, reference="model.onnx", failures=failures,
                          outputs=[OutputAgreementInfo(output="y", cosine=cosine, sqnr_db=20.0, max_abs_error=0.1)])


def test_one_deployable_artifact_passes_and_the_others_are_named_not_deployable() -> None:
    """host-cpu deploys ONNX or TFLite: a faithful ONNX int8 passes the target even when the TFLite int8 misses,
    and the reason says which artifact to ship and why the other is not."""
    artifacts = [*ARTIFACTS, ArtifactInfo(path="model_int8.onnx", format="onnx", precision="mixed", size_bytes=1)]
    comparisons = [_comparison("model_int8.tflite", 0.83), _comparison("model_int8.onnx", 0.995)]
    label_free = LabelFreeInfo(samples=8, data="evaluation", gated=True, comparisons=comparisons,
                               thresholds={"min_cosine": 0.99, "min_sqnr_db": None, "min_top1_agreement": None,
                                           "max_abs_error": None})
    accuracy = AccuracyInfo(metric="label_free", samples=8, threshold_points=1.0, float=None, float_by_format={},
                            int8={}, drop_points={}, label_free=label_free)
    verdict, reason, _ = decide(VerdictInputs(load_profile("host-cpu"), artifacts, accuracy))
    assert verdict == "pass", reason
    assert "model_int8.onnx met every threshold" in reason
    assert "model_int8.tflite is not deployable (y: cosine 0.8300 < 0.99)" in reason
    only_tflite = [a for a in artifacts if a.path != "model_int8.onnx"]
    assert decide(VerdictInputs(load_profile("host-cpu"), only_tflite, accuracy))[0] == "fail"


def test_with_labels_one_format_within_the_threshold_passes() -> None:
    artifacts = [*ARTIFACTS, ArtifactInfo(path="model_int8.onnx", format="onnx", precision="int8", size_bytes=1)]
    accuracy = AccuracyInfo(metric="top1", samples=8, threshold_points=1.0, float=0.9, float_by_format={"onnx": 0.9},
                            int8={"onnx": 0.9, "tflite": 0.85}, drop_points={"onnx": 0.0, "tflite": 5.0})
    verdict, reason, _ = decide(VerdictInputs(load_profile("host-cpu"), artifacts, accuracy))
    assert verdict == "pass" and "int8 tflite is not deployable (drop 5.00 points)" in reason
