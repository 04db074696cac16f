"""What a report claims: each accuracy drop with its paired 95% interval, each figure labelled with what it is
(measured, vendor estimate, model estimate), and the readers (HTML, JUnit, gate) going through the typed model."""

from __future__ import annotations

import json
import re

import pytest

from edgepipe.quantize.report import LayerSensitivity, QuantizationReport
from edgepipe.report import BuildReport, extract
from edgepipe.support.report import NodeVerdict, SupportReport
from tests.e2e.conftest import Build

pytestmark = pytest.mark.slow


def _report(build: Build, target: str = "host-cpu") -> BuildReport:
    return BuildReport.model_validate_json((build.root / target / "report.json").read_text(encoding="utf-8"))


def test_every_drop_carries_its_paired_interval(first_build: Build) -> None:
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    accuracy = _report(first_build).accuracy
    assert accuracy is not None and accuracy.kind == "measured"
    assert sorted(accuracy.drop_interval) == sorted(accuracy.drop_points) == ["onnx", "tflite"]
    for fmt, interval in accuracy.drop_interval.items():
        assert interval.low_points - 1e-9 <= accuracy.drop_points[fmt] <= interval.high_points + 1e-9
        assert "paired percentile bootstrap" in interval.method
        # the drop is exactly (float right & int8 wrong − the reverse) / samples
        assert accuracy.drop_points[fmt] == pytest.approx(
            100 * (interval.float_only - interval.int8_only) / accuracy.samples, abs=1e-3)
    markdown = (first_build.root / "host-cpu" / "report.md").read_text(encoding="utf-8")
    assert "| drop 95% CI (paired) |" in markdown
    html = (first_build.root / "report.html").read_text(encoding="utf-8")
    assert "drop 95% CI (paired)" in html


def test_host_figures_say_what_they_are(first_build: Build) -> None:
    report = _report(first_build)
    assert {d.kind for d in report.latency.values()} == {"measured"}
    performance = report.performance
    assert performance is not None and performance.kind == "model estimate"
    assert performance.error == "unvalidated" or "held-out models" in performance.error
    assert performance.int8_forms and {f.kind for f in performance.int8_forms} == {"measured"}
    markdown = (first_build.root / "host-cpu" / "report.md").read_text(encoding="utf-8")
    assert "measured on 17 models" not in markdown
    energy = [line for line in markdown.splitlines() if "mJ" in line and line.startswith("- ")]
    assert energy and all("model estimate" in line and "not measured" in line for line in energy)
    assert not any(line.startswith("- measured:") for line in markdown.splitlines())


def test_ethos_u_latency_is_vela_s_vendor_estimate(all_targets_build: Build) -> None:
    report = _report(all_targets_build, "ethos-u55")
    performance = report.performance
    assert performance is not None and performance.estimator == "vela" and performance.vela is not None
    assert performance.kind == "vendor estimate" and performance.vela.kind == "vendor estimate"
    assert {m.kind for m in performance.modes} == {"vendor estimate"}
    markdown = (all_targets_build.root / "ethos-u55" / "report.md").read_text(encoding="utf-8")
    assert "Vela's estimate: vendor estimate" in markdown


def test_summary_html_labels_its_latency_source(all_targets_build: Build) -> None:
    page = (all_targets_build.root / "report.html").read_text(encoding="utf-8")
    summary = re.search(r'<section id="summary">(.*?)</section>', page, re.S)
    assert summary is not None
    assert "vendor estimate" in summary.group(1) and "model estimate" in summary.group(1)


def test_placement_comes_from_the_typed_support_section() -> None:
    """A node named 'cpu_fallback' that runs on the accelerator is on the accelerator: no substring guessing."""
    support = SupportReport.model_construct(node_verdicts=[
        NodeVerdict(index=0, name="cpu_fallback_conv", op="CONV_2D", placement="accelerator"),
        NodeVerdict(index=1, name="softmax", op="SOFTMAX", placement="cpu")])
    report = BuildReport.model_construct(support=support, performance=None)
    assert extract.placements(report) == {"cpu_fallback_conv": "accelerator", "softmax": "cpu"}


def test_readers_accept_a_baseline_s_plain_data(first_build: Build) -> None:
    raw = json.loads((first_build.root / "host-cpu" / "report.json").read_text(encoding="utf-8"))
    typed = _report(first_build)
    assert extract.placements(raw) == extract.placements(typed)
    assert extract.deployed_latency_ms(raw) == extract.deployed_latency_ms(typed)
    assert extract.best_int8_accuracy(raw) == extract.best_int8_accuracy(typed)
    scores = extract.layer_sensitivity(typed)
    assert scores is None or (not scores.higher_is_worse and "dB" in scores.label)


def test_sensitivity_reads_the_typed_per_layer_sqnr() -> None:
    layers = [LayerSensitivity(format="onnx", layer="Conv__13", op="Conv", isolated_sqnr_db=40.5),
              LayerSensitivity(format="tflite", layer="a;b;model/logits/MatMul", op="FC", isolated_sqnr_db=22.0),
              LayerSensitivity(format="onnx", layer="never_isolated", op="Relu", accumulated_sqnr_db=3.0)]
    report = BuildReport.model_construct(quantization=QuantizationReport.model_construct(sensitivity=layers))
    scores = extract.layer_sensitivity(report)
    assert scores is not None and not scores.higher_is_worse and "dB" in scores.label
    assert scores.values == {"onnx Conv__13": 40.5, "tflite model/logits/MatMul": 22.0}
    assert extract.layer_sensitivity(BuildReport.model_construct(quantization=None)) is None
