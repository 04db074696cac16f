"""No pass without a comparison: a model that came quantized proves nothing by running; each target is judged
on the arithmetic it performs."""

from __future__ import annotations

from edgepipe.gate.verdict import VerdictInputs, accuracy_met
from edgepipe.metrics.records import ComparisonInfo, LabelFreeInfo, OutputAgreementInfo
from edgepipe.report.schema import AccuracyInfo, ArtifactInfo
from edgepipe.targets import load_profile

INT8_TFLITE = ArtifactInfo(path="model_int8.tflite", format="tflite", precision="int8", size_bytes=1000)


def _label_free(comparisons: list[ComparisonInfo]) -> AccuracyInfo:
    info = LabelFreeInfo(samples=32, data="calibration", gated=True, thresholds={}, comparisons=comparisons)
    return AccuracyInfo(metric="label_free", samples=32, threshold_points=1.0, float=None, float_by_format={},
                        int8={}, drop_points={}, label_free=info)


def test_a_shipped_int8_model_without_labels_or_float_twin_is_not_proven() -> None:
    inputs = VerdictInputs(load_profile("ethos-u55"), [INT8_TFLITE], _label_free([]), source_is_int8=True,
                           source_format="tflite")
    evidence = accuracy_met(inputs)
    assert evidence.outcome == "not proven"
    assert "came quantized" in evidence.detail
    assert "accuracy.min_top1" in evidence.detail and "accuracy.gate = false" in evidence.detail  # how to prove it


def test_a_shipped_int8_model_with_labels_is_judged_on_min_top1() -> None:
    target = load_profile("ethos-u55")
    labelled = AccuracyInfo(metric="top1", samples=200, threshold_points=1.0, float=None, float_by_format={},
                            int8={"tflite": 0.9}, drop_points={}, min_top1=None)
    assert accuracy_met(VerdictInputs(target, [INT8_TFLITE], labelled, source_is_int8=True)).outcome == "not proven"
    bar = labelled.model_copy(update={"min_top1": 0.85})
    met = accuracy_met(VerdictInputs(target, [INT8_TFLITE], bar, source_is_int8=True))
    assert met.outcome == "met" and "90.00%" in met.detail
    high = labelled.model_copy(update={"min_top1": 0.95})
    assert accuracy_met(VerdictInputs(target, [INT8_TFLITE], high, source_is_int8=True)).outcome == "failed"


def test_a_part_failure_fails_accuracy_with_the_part_named() -> None:
    artifact = ArtifactInfo(path="model_int8.onnx", format="onnx", precision="int8", size_bytes=1000)
    out = OutputAgreementInfo(output="output0", cosine=0.9994, sqnr_db=40.0, max_abs_error=2.0)
    comparison = ComparisonInfo(artifact="model_int8.onnx", reference="model.onnx", outputs=[out],
                                failures=["output0 channels 4–83: SQNR 1.9 dB < 10 dB"])
    evidence = accuracy_met(VerdictInputs(load_profile("mobile-npu"), [artifact], _label_free([comparison])))
    assert evidence.outcome == "failed" and "output0 channels 4–83: SQNR 1.9 dB" in evidence.detail
