"""The legalize stage in a build: per-target artifacts carry the rewrites, the report shows them, the switch works."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import onnx
import pytest

from edgepipe.config import BuildConfig, DataConfig, LegalizeConfig, QuantizationConfig
from edgepipe.pipeline import BuildResult, run_build
from tests.unit.legalize import graphs

pytestmark = pytest.mark.slow


def _ops(path: Path) -> Counter[str]:
    return Counter(n.op_type for n in onnx.load(str(path)).graph.node)


def _build(folder: Path, legalize: LegalizeConfig) -> tuple[BuildResult, str]:
    model, calib, evaluation = graphs.gated_classifier(folder / "gated.onnx")
    digest = hashlib.sha256(model.read_bytes()).hexdigest()
    config = BuildConfig(model=model, targets=["mobile-npu", "gpu-reference"], output=folder / "build",
                         data=DataConfig(calibration=calib, evaluation=evaluation),
                         quantization=QuantizationConfig(steps=["ptq"]), legalize=legalize)
    result = run_build(config)
    assert hashlib.sha256(model.read_bytes()).hexdigest() == digest  # the user's model file is never changed
    return result, digest


@pytest.fixture(scope="module")
def legalized(tmp_path_factory: pytest.TempPathFactory) -> BuildResult:
    return _build(tmp_path_factory.mktemp("on"), LegalizeConfig())[0]


def test_the_target_that_runs_hard_sigmoid_on_its_cpu_gets_the_rewrite_in_both_artifacts(
        legalized: BuildResult) -> None:
    report = legalized.reports["mobile-npu"]
    assert report.legalization is not None
    assert [(r.name, r.status, r.nodes) for r in report.legalization.rewrites] == [("hard-sigmoid", "kept", 1)]
    assert report.legalization.before.cpu_ops == {"HardSigmoid": 1} and report.legalization.after.cpu_nodes == 0
    folder = legalized.folders["mobile-npu"]
    assert _ops(folder / "model.onnx")["HardSigmoid"] == 0 and _ops(folder / "model_int8.onnx")["HardSigmoid"] == 0
    assert report.support is not None and "HardSigmoid" not in report.support.cpu_ops
    assert any(s.name == "legalize:mobile-npu" and "kept hard-sigmoid" in s.detail for s in report.stages)
    assert "## Legalization" in (folder / "report.md").read_text()


def test_a_target_without_rewrites_keeps_the_model_s_own_ops(legalized: BuildResult) -> None:
    report = legalized.reports["gpu-reference"]
    folder = legalized.folders["gpu-reference"]
    assert report.legalization is None  # it runs every op
    assert _ops(folder / "model.onnx")["HardSigmoid"] == 1 and _ops(folder / "model_int8.onnx")["HardSigmoid"] == 1


def test_legalization_turned_off_leaves_every_artifact_alone(tmp_path: Path) -> None:
    result, _ = _build(tmp_path, LegalizeConfig(enabled=False))
    report = result.reports["mobile-npu"]
    assert report.legalization is None and not any(s.name.startswith("legalize") for s in report.stages)
    assert _ops(result.folders["mobile-npu"] / "model_int8.onnx")["HardSigmoid"] == 1
    assert report.support is not None and report.support.cpu_ops.get("HardSigmoid") == 1


def test_targets_sharing_quantization_get_their_own_artifacts_when_their_rewrites_differ(tmp_path: Path) -> None:
    profiles = tmp_path / "targets"
    profiles.mkdir()
    (profiles / "npu-with-hard-sigmoid.toml").write_text(  # mobile-npu whose accelerator also runs HardSigmoid
        'inherit = "mobile-npu"\ndescription = "mobile-npu with HardSigmoid"\n[onnx.ops]\nHardSigmoid = {}\n')
    model, calib, evaluation = graphs.gated_classifier(tmp_path / "gated.onnx")
    config = BuildConfig(model=model, targets=["mobile-npu", "npu-with-hard-sigmoid"], output=tmp_path / "build",
                         targets_dir=profiles, data=DataConfig(calibration=calib, evaluation=evaluation),
                         quantization=QuantizationConfig(steps=["ptq"]))
    result = run_build(config)
    mine, theirs = (result.folders[name] / "model_int8.onnx" for name in ("mobile-npu", "npu-with-hard-sigmoid"))
    assert _ops(mine)["HardSigmoid"] == 0 and _ops(theirs)["HardSigmoid"] == 1
    stages = [s.name for s in max(result.reports.values(), key=lambda r: len(r.stages)).stages]
    assert stages.count("quantize") == 2 and stages.count("legalize:npu-with-hard-sigmoid") == 1
