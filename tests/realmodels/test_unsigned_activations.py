"""mobile-npu deploys its int8 ONNX with uint8 activations: PaddleOCR's direction classifier (the zoo's pinned
wheel), whose nine HardSigmoid gates run as int8 node units on the CPU, runs whole on the HTP, and the QNN HTP
emulator places every node as edgepipe does."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.config import load_config
from edgepipe.pipeline import run_build
from edgepipe.quantize.host.forms import QDQ_U8_NAME
from edgepipe.support import check_model
from edgepipe.targets import load_profile
from tests.realmodels import zoo

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]


def test_paddleocr_classifier_hard_sigmoids_run_on_the_htp_with_unsigned_activations(tmp_path: Path) -> None:
    config = load_config(zoo.prepare(zoo.BY_NAME["ppocr_v4_cls"], tmp_path / "zoo", zoo.SMALL),
                         {"targets": ["mobile-npu"], "output": str(tmp_path / "build")})
    report = run_build(config).reports["mobile-npu"]
    support = report.support
    assert support is not None and support.artifact == QDQ_U8_NAME
    signed = check_model(Path(config.output) / "ppocr_v4_cls" / "mobile-npu" / "model_int8.onnx",
                         load_profile("mobile-npu"))
    assert signed.cpu_ops["HardSigmoid"] == 9 and signed.partitions > 4  # the int8 activations' placement
    assert "HardSigmoid" not in support.cpu_ops and support.partitions <= 4
    qnn = support.verification[0]
    assert qnn.status == "ran" and qnn.agree == qnn.compared == support.nodes, qnn.disagreements
    assert report.verdict == "pass", report.verdict_reason
