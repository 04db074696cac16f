"""The legalize stage in a build: per-target artifacts carry the rewrites, the report shows them, the switch works."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import onnx
import pytest

from edgepipe.config import BuildConfig, DataConfig, LegalizeConfig, QuantizationConfig
from edgepipe.pipeline import BuildResult, run_build
from edgepipe.quantize.host.forms import QDQ_U8_NAME
from tests.unit.legalize import graphs

pytestmark = pytest.mark.slow


def _ops(path: Path) -> Counter[str]:
    return Counter(n.op_type for n in onnx.load(str(path)).graph.node)


#: mobile-npu whose accelerator runs HardSigmoid up to rank 2 only: the classifier's 4-D gate runs on its CPU.
SMALL_GATES = "npu-small-hard-sigmoid"


def _profiles(folder: Path) -> Path:
    profiles = folder / "targets"
    profiles.mkdir(exist_ok=True)
    (profiles / f"{SMALL_GATES}.toml").write_text(
        'inherit = "mobile-npu"\ndescription = "mobile-npu with 2-D HardSigmoid only"\n[onnx.ops]\n'
        'HardSigmoid = { max_rank = 2 }\n')
    return profiles


def _build(folder: Path, legalize: LegalizeConfig) -> tuple[BuildResult, str]:
    model, calib, evaluation = graphs.gated_classifier(folder / "gated.onnx")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    config = BuildConfig(model=model, targets=[SMALL_GATES, "gpu-reference"], output=folder / "build",
                         targets_dir=_profiles(folder), data=DataConfig(calibration=calib, evaluation=evaluation),
                         quantization=QuantizationConfig(steps=["ptq"]), legalize=legalize)
    result = run_build(config)
    assert hashlib.sha256(model.read_bytes()).hexdigest() == digest  # the user's model file is never changed
    return result, digest


@pytest.fixture(scope="module")
def legalized(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    return _build(tmp_path_factory.mktemp("on"), LegalizeConfig())[0]


def test_the_target_that_runs_hard_sigmoid_on_its_cpu_gets_the_rewrite_in_both_artifacts(
        legalized: BuildResult) -> None:
    report = legalized.reports[SMALL_GATES]
    assert report.legalization is not None
    assert [(r.name, r.status, r.nodes) for r in report.legalization.rewrites] == [("hard-sigmoid", "kept", 1)]
    assert report.legalization.before.cpu_ops == {"HardSigmoid": 1} and report.legalization.after.cpu_nodes == 0
    folder = legalized.folders[SMALL_GATES]
    assert _ops(folder / "model.onnx")["HardSigmoid"] == 0 and _ops(folder / "model_int8.onnx")["HardSigmoid"] == 0
    assert report.support is not None and "HardSigmoid" not in report.support.cpu_ops
    assert any(s.name == f"legalize:{SMALL_GATES}" and "kept hard-sigmoid" in s.detail for s in report.stages)
    assert "## Legalization" in (folder / "report.md").read_text()


def test_a_target_without_rewrites_keeps_the_model_s_own_ops(legalized: BuildResult) -> None:
    report = legalized.reports["gpu-reference"]
    folder = legalized.folders["gpu-reference"]
    assert report.legalization is None  # it runs every op
    assert _ops(folder / "model.onnx")["HardSigmoid"] == 1 and _ops(folder / "model_int8.onnx")["HardSigmoid"] == 1


def test_legalization_turned_off_leaves_every_artifact_alone(tmp_path: Path) -> None:
    result, _ = _build(tmp_path, LegalizeConfig(enabled=False))
    report = result.reports[SMALL_GATES]
    assert report.legalization is None and not any(s.name.startswith("legalize") for s in report.stages)
    assert _ops(result.folders[SMALL_GATES] / "model_int8.onnx")["HardSigmoid"] == 1
    assert report.support is not None and report.support.cpu_ops.get("HardSigmoid") == 1


def test_targets_sharing_quantization_get_their_own_artifacts_when_their_rewrites_differ(tmp_path: Path) -> None:
    """mobile-npu runs the gate as it is: a float HardSigmoid, or a quantized one with unsigned activations, runs on
    the HTP, and mobile-npu deploys the int8 model with uint8 activations (no rewrite needed)."""
    model, calib, evaluation = graphs.gated_classifier(tmp_path / "gated.onnx")
    config = BuildConfig(model=model, targets=[SMALL_GATES, "mobile-npu"], output=tmp_path / "build",
                         targets_dir=_profiles(tmp_path), data=DataConfig(calibration=calib, evaluation=evaluation),
                         quantization=QuantizationConfig(steps=["ptq"]))
    result = run_build(config)
    mine, theirs = (result.folders[name] / "model_int8.onnx" for name in (SMALL_GATES, "mobile-npu"))
    assert _ops(mine)["HardSigmoid"] == 0 and _ops(theirs)["HardSigmoid"] == 1
    stages = [s.name for s in max(result.reports.values(), key=lambda r: len(r.stages)).stages]
    assert stages.count("quantize") == 2 and stages.count("legalize:mobile-npu") == 1
    report = result.reports["mobile-npu"]
    assert report.support is not None and report.support.artifact == QDQ_U8_NAME
    # the graph input's QuantizeLinear and the logits' DequantizeLinear (after a MatMul); the HardSigmoid on the HTP
    assert report.support.cpu_ops == {"QuantizeLinear": 1, "DequantizeLinear": 1}
    qnn = report.support.verification[0]
    assert qnn.status == "ran" and qnn.agree == qnn.compared == report.support.nodes, qnn.disagreements
    assert report.verdict == "pass", report.verdict_reason
