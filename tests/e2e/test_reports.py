"""The reports CI reads: JUnit XML (validated against the schema), report.html, the JSON Schema, the step
summary, ``--json``."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import xmlschema

from edgepipe.config import GateConfig
from edgepipe.gate.junit import render_junit
from edgepipe.perf.report import ModeEstimate, PerformanceReport
from edgepipe.quantize.report import LayerSensitivity, QuantizationReport
from edgepipe.report import extract
from edgepipe.report.html import render_html
from edgepipe.report.schema import SCHEMA_VERSION, BuildReport
from edgepipe.support.report import NodeVerdict, SupportReport
from tests.e2e.conftest import XSD, Build, edgepipe

OWN_CHECKS = ["int8 artifact", "accuracy gate", "compatibility", "op support", "latency budget"]


@pytest.fixture(scope="module")
def junit_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(XSD)


def _cases(path: Path) -> dict[str, dict[str, ET.Element]]:
    root = ET.parse(path).getroot()
    return {suite.get("name"): {case.get("name"): case for case in suite.iter("testcase")}
            for suite in root.iter("testsuite")}


def test_junit_validates_and_has_one_case_per_check(first_build: Build, junit_schema: xmlschema.XMLSchema) -> None:
    assert first_build.proc.returncode == 0, first_build.proc.stderr[-3000:]
    path = first_build.cwd / "junit.xml"
    junit_schema.validate(path)
    cases = _cases(path)
    assert list(cases) == ["host-cpu"] and list(cases["host-cpu"]) == OWN_CHECKS
    assert cases["host-cpu"]["accuracy gate"].find("failure") is None
    assert cases["host-cpu"]["latency budget"].find("skipped") is not None, "no budget configured"


def test_junit_of_all_targets_has_a_suite_per_target(all_targets_build: Build,
                                                      junit_schema: xmlschema.XMLSchema) -> None:
    path = all_targets_build.cwd / "junit.xml"
    junit_schema.validate(path)
    summary = json.loads((all_targets_build.root / "summary.json").read_text())
    cases = _cases(path)
    assert list(cases) == [t["target"] for t in summary["targets"]]
    for target, checks in cases.items():  # targets whose profile requires a vendor compile have that case too
        assert [c for c in checks if c != "vendor compile"] == OWN_CHECKS, target


def test_junit_of_the_damaged_build_fails_the_baseline_accuracy_case(damaged_build: Build,
                                                                      junit_schema: xmlschema.XMLSchema) -> None:
    path = damaged_build.cwd / "junit.xml"
    junit_schema.validate(path)
    case = _cases(path)["host-cpu"]["baseline accuracy"]
    failure = case.find("failure")
    assert failure is not None and "int8 tflite: 98.00%" in (failure.text or "")
    root = ET.parse(path).getroot()
    assert int(root.get("failures", "0")) >= 1


def test_junit_budget_and_failed_gate(first_build: Build, junit_schema: xmlschema.XMLSchema) -> None:
    report = BuildReport.model_validate_json((first_build.root / "host-cpu" / "report.json").read_text())
    evidence = [e.model_copy(update={"outcome": "failed", "detail": "int8 accuracy drop above 1 points"})
                if e.requirement == "accuracy" else e for e in report.evidence]
    failed = report.model_copy(update={"verdict": "fail", "verdict_reason": "int8 accuracy drop above 1 points",
                                       "evidence": evidence})
    text = render_junit([failed], GateConfig(latency_budget_ms=1e-6))
    junit_schema.validate(text)
    cases = {c.get("name"): c for c in ET.fromstring(text).iter("testcase")}
    assert cases["accuracy gate"].find("failure") is not None
    assert "budget" in cases["latency budget"].find("failure").get("message")
    text = render_junit([report], GateConfig(latency_budget_ms=1e6))
    assert ET.fromstring(text).get("failures") == "0"


def test_report_json_validates_against_the_published_schema(first_build: Build) -> None:
    proc = edgepipe("schema", cwd=first_build.cwd)
    assert proc.returncode == 0
    schema = json.loads(proc.stdout)
    assert schema["$id"] == f"urn:edgepipe:report:{SCHEMA_VERSION}" and "verdict" in schema["properties"]
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(json.loads((first_build.root / "host-cpu" / "report.json").read_text()))
    assert list(validator.iter_errors({"target": "x"})), "an incomplete report must not validate"
    summary_schema = json.loads(edgepipe("schema", "--summary", cwd=first_build.cwd).stdout)
    summary = json.loads((first_build.root / "summary.json").read_text())
    jsonschema.Draft202012Validator(summary_schema).validate(summary)


def test_step_summary_gets_report_md(first_build: Build) -> None:
    text = (first_build.cwd / "step_summary.md").read_text(encoding="utf-8")
    assert "# edgepipe build: " in text and "**Verdict: ✅ pass**" in text
    assert (first_build.root / "host-cpu" / "report.md").read_text(encoding="utf-8").strip() in text


def test_summary_beside_the_targets(first_build: Build) -> None:
    names = sorted(p.name for p in first_build.root.iterdir())
    assert names == ["host-cpu", "report.html", "summary.json", "summary.md"], "no staging leftovers"
    summary = json.loads((first_build.root / "summary.json").read_text())
    assert summary["verdict"] == "pass" and [t["target"] for t in summary["targets"]] == ["host-cpu"]
    assert summary["targets"][0]["report"] == "host-cpu/report.json"


def test_json_output_is_only_json(cached_build: Build) -> None:
    document = json.loads(cached_build.proc.stdout)
    assert document["verdict"] == "pass" and document["gate"] is None
    assert Path(document["outputs"]["host-cpu"]).name == "host-cpu"


def _extended(report: BuildReport, target: str, latency: float, energy: float, cpu_ops: int) -> BuildReport:
    """``report`` as another target with the typed optional sections other stages add."""
    nodes = [NodeVerdict(index=i, name=f"op{i}", op="CONV_2D", placement="cpu" if i < cpu_ops else "accelerator")
             for i in range(6)]
    mode = ModeEstimate.model_construct(mode="nominal", latency_ms=latency, energy_mj=energy, kind="model estimate")
    layers = [LayerSensitivity(format="onnx", layer=name, op="Conv", isolated_sqnr_db=sqnr)
              for name, sqnr in (("conv2d", 12.0), ("conv2d_1", 30.0), ("logits", 41.0))]
    return report.model_copy(update={
        "target": target, "support": SupportReport.model_construct(node_verdicts=nodes),
        "performance": PerformanceReport.model_construct(default_mode="nominal", modes=[mode], delegate=None),
        "quantization": QuantizationReport.model_construct(sensitivity=layers)})


def test_html_has_every_plot_and_no_network(first_build: Build) -> None:
    report = BuildReport.model_validate_json((first_build.root / "host-cpu" / "report.json").read_text())
    reports = [_extended(report, "fast-npu", 0.5, 0.2, 0), _extended(report, "slow-npu", 2.0, 0.9, 2),
               _extended(report, "mid-npu", 1.0, 0.4, 1)]
    page = render_html(reports)
    for section in ("summary", "pareto", "sensitivity", "placement", "targets"):
        assert f'<section id="{section}">' in page
    assert page.count("<svg") == 1 + 1 + 1, "Pareto, one sensitivity plot (the targets share it), placement"
    assert "<figcaption>3 most sensitive layers — fast-npu, slow-npu, mid-npu</figcaption>" in page
    sensitivity = re.search(r'<section id="sensitivity">(.*?)</section>', page, re.S)
    assert sensitivity is not None and sensitivity.group(1).count("<svg") == 1
    assert "Pareto front (no other target is both faster and more accurate): fast-npu." in page
    assert "slow-npu: op0, op1" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:|@import|url\(\s*["']?https?:""", page)
    assert render_html(reports) == page, "same reports, same bytes"


def test_html_of_a_real_build_uses_what_the_report_has(first_build: Build) -> None:
    page = (first_build.root / "report.html").read_text(encoding="utf-8")
    report = json.loads((first_build.root / "host-cpu" / "report.json").read_text())
    sections = dict(re.findall(r'<section id="(\w+)">(.*?)</section>', page, re.S))
    assert list(sections) == ["summary", "pareto", "sensitivity", "placement", "targets"]
    assert "<svg" in sections["pareto"]
    if extract.layer_sensitivity(report) is None:
        assert "No per-layer sensitivity in these reports" in sections["sensitivity"]
    else:
        assert "<svg" in sections["sensitivity"]
    if extract.placements(report) is None:
        assert "no support check ran" in sections["placement"]
    else:
        assert "<svg" in sections["placement"]
