"""Agreement with Arm Vela (ethos-u-vela 5.2.0) on int8 TFLite, and the parsing of its CPU placement."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.support import check_model
from edgepipe.targets import load_profile
from edgepipe.verify import vela

VELA_OUTPUT = """\
Warning (supported operators) operator: LOG_SOFTMAX, ofm: 'StatefulPartitionedCall_1:0'
Reason: Unsupported opType
Warning (supported operators) operator: CONV_2D, ofm: 'net/conv2d_1/Relu;net/conv2d_1/convolution_act'
Reason: Unsupported kernel stride: 4, 4
Warning: Op DEPTHWISE_CONV_2D 'net/dw' has asymmetric weights. To run the operator on Ethos-U use the option \
--force-symmetric-int-weights
CPU operators = 2 (4.1%)
   CPU: Passthrough = net/conv2d_1/Relu;net/conv2d_1/convolution (outputs [1, 8, 8, 8])
   CPU: Passthrough = StatefulPartitionedCall_1:0 (outputs [1, 1, 1, 10])
NPU operators = 70 (95.9%)
   NPU: Conv2D = net/conv2d_2/Relu (outputs [1, 8, 8, 8])
"""


def test_parse_cpu_ops_reads_the_warnings() -> None:
    cpu = vela.parse_cpu_ops(VELA_OUTPUT)
    assert set(cpu) == {"StatefulPartitionedCall_1:0", "net/conv2d_1/Relu;net/conv2d_1/convolution", "net/dw"}
    assert cpu["net/conv2d_1/Relu;net/conv2d_1/convolution"] == "CONV_2D: Unsupported kernel stride: 4, 4"
    assert cpu["net/dw"] == "DEPTHWISE_CONV_2D: asymmetric weights"


@pytest.fixture(scope="module")
def stress_tflite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.nets import build_net, to_int8_tflite

    return to_int8_tflite(build_net("stress"), tmp_path_factory.mktemp("stress") / "stress.tflite")


@pytest.mark.parametrize(("target", "accelerator", "cpu_ops"), [
    ("ethos-u55", "ethos-u55-128", {"CONV_2D": 1, "AVERAGE_POOL_2D": 1, "LOG_SOFTMAX": 1}),
    ("ethos-u85", "ethos-u85-256", {"AVERAGE_POOL_2D": 1, "LOG_SOFTMAX": 1}),
])
def test_agrees_with_vela_on_stress_net(stress_tflite: Path, tmp_path: Path, target: str, accelerator: str,
                                        cpu_ops: dict[str, int]) -> None:
    report = check_model(stress_tflite, load_profile(target))
    assert report.cpu_ops == cpu_ops
    result = vela.verify(report, stress_tflite, accelerator, tmp_path)
    assert result.status == "ran", result.detail
    assert result.compared == report.nodes == 10
    assert result.agree == result.compared, result.disagreements
    assert result.extra["cycles_total"] > 0


def test_agrees_with_vela_on_probe(probe_tflite: dict[str, Path], tmp_path: Path) -> None:
    report = check_model(probe_tflite["int8"], load_profile("ethos-u55"))
    result = vela.verify(report, probe_tflite["int8"], "ethos-u55-128", tmp_path)
    assert (result.compared, result.agree, result.edgepipe_only, result.vendor_only) == (7, 7, 0, 0)
