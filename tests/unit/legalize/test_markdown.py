"""The legalization section of report.md: placement before and after, one row per rewrite, the vendor's word."""

from __future__ import annotations

from edgepipe.legalize import LegalizationReport, PlacementSummary, RewriteOutcome
from edgepipe.legalize.markdown import render_legalization
from edgepipe.support.report import SupportReport, Verification


def _report() -> LegalizationReport:
    before = PlacementSummary(nodes=10, cpu_nodes=9, partitions=11, cpu_ops={"HardSigmoid": 9})
    after = PlacementSummary(nodes=28, cpu_nodes=0, partitions=1)
    return LegalizationReport(artifact="model.onnx", samples=8, sample_source="calibration", before=before,
                              after=after, rewrites=[
                                  RewriteOutcome(name="hard-sigmoid", rule="HardSigmoid becomes Mul, Add and Clip.",
                                                 status="kept", nodes=9, max_relative_error=0.0),
                                  RewriteOutcome(name="erf", rule="Erf becomes a formula.", status="off",
                                                 reason="turned off in [legalize] of the config")])


def test_the_section_shows_placement_before_and_after_and_every_rewrite() -> None:
    text = "\n".join(render_legalization(_report()))
    assert "CPU nodes 9 → 0, accelerator partitions 11 → 1" in text and "HardSigmoid x9" in text
    assert "| hard-sigmoid | ✅ kept | 9 | 0.0e+00 |" in text and "| erf | – off | 0 | – |" in text


def test_the_vendor_tool_s_agreement_on_the_deployed_artifact_is_quoted() -> None:
    support = SupportReport.model_construct(artifact="model_int8.onnx", verification=[
        Verification(tool="qnn", status="ran", compared=411, agree=411)])
    text = "\n".join(render_legalization(_report(), support))
    assert "The deployed model_int8.onnx carries the kept rewrites (qnn agrees on 411 of 411 nodes)." in text
