"""Rewrites on the real models that need them: each kept, outputs equal on the model's own calibration data, and the
target's placement of the float model better (the zoo's pinned wheels; tests/realmodels/zoo.py)."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from edgepipe.config import LegalizeConfig, load_config
from edgepipe.graph.onnx_edit import constants_to_initializers
from edgepipe.legalize import CheckSamples, Legalized, legalize_model
from edgepipe.legalize.equivalence import outputs_of
from edgepipe.stage_log import StageLog
from edgepipe.stages.inputs import validate_inputs
from edgepipe.targets import load_profile
from tests.realmodels import zoo

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]


def _legalized(name: str, target: str, tmp_path: Path) -> Legalized:
    """The zoo model ``name`` as the export stage writes it (input shapes fixed), legalized for ``target``."""
    config = load_config(zoo.prepare(zoo.BY_NAME[name], tmp_path / "zoo", zoo.SMALL), {"targets": [target]})
    inputs = validate_inputs(config, StageLog())
    model = onnx.ModelProto()
    model.CopyFrom(inputs.model.handle)
    constants_to_initializers(model)
    source = tmp_path / "model.onnx"
    onnx.save(model, str(source))
    assert inputs.calibration is not None
    samples = list(inputs.calibration.samples(4))
    check = CheckSamples(samples, "calibration", outputs_of(source, samples))
    work = tmp_path / "work"
    work.mkdir()
    return legalize_model(source, load_profile(target), check, LegalizeConfig(), work)


def test_yolox_focus_slices_run_on_the_rknn_npu(tmp_path: Path) -> None:
    report = _legalized("ddddocr_det", "rk3588", tmp_path).report
    assert ("focus", "kept", 1) in [(r.name, r.status, r.nodes) for r in report.rewrites]
    assert report.before.cpu_ops["Slice"] == 4 and "Slice" not in report.after.cpu_ops
    assert report.kept[0].max_relative_error == 0.0  # a one-hot convolution copies pixels exactly


def test_transformer_erf_runs_on_the_htp(tmp_path: Path) -> None:
    report = _legalized("minilm_l6", "mobile-npu", tmp_path).report
    assert [(r.name, r.status, r.nodes) for r in report.rewrites] == [("erf", "kept", 6)]
    assert report.before.cpu_ops["Erf"] == 6 and "Erf" not in report.after.cpu_ops
    assert report.after.partitions < report.before.partitions
