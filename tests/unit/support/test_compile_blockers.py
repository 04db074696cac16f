"""Compile blockers: nodes a target's compiler rejects with the whole graph (``[onnx.compile_blockers]``).

madmom's LSTMs carry peephole weights, on which rknn-toolkit2 2.5.0's compiler aborts the process; edgepipe's
profiles for the Rockchip SoCs say so, and the support report, the terminal table and the verdict name the node
(tests/vendors/rknn/test_sequences.py checks the prediction against the toolkit itself).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.gate.verdict import VerdictInputs, compatibility
from edgepipe.support import check_graph, read_graph
from edgepipe.support.docs import render_all
from edgepipe.support.render import render_support_markdown, render_table
from edgepipe.targets import load_profile
from edgepipe.targets.profile import OpTable
from tests.models.probes.convolutions import dilated_conv1d_onnx
from tests.models.probes.inputs import cast_of_input_onnx
from tests.models.probes.sequences import peephole_lstm_onnx


@pytest.mark.parametrize("target", ["edge-box-npu", "rk3588", "rk3576"])
def test_an_lstm_with_peepholes_blocks_the_rockchip_compile(tmp_path: Path, target: str) -> None:
    report = check_graph(read_graph(peephole_lstm_onnx(tmp_path / "peephole.onnx")), load_profile(target))
    (blocker,) = report.compile_blockers
    assert (blocker.node, blocker.op, blocker.constraint) == ("lstm", "LSTM", "no_peepholes")
    assert "cannot compile this graph: LSTM 'lstm'" in render_table(report)
    assert any("LSTM 'lstm': has peephole weights" in line for line in render_support_markdown(report))
    evidence = compatibility(VerdictInputs(target=load_profile(target), artifacts=[], accuracy=None, support=report))
    assert evidence.outcome == "failed" and "cannot compile this graph" in evidence.detail
    assert "next step" in evidence.detail


def test_the_same_lstm_without_peepholes_and_other_targets_are_not_blocked(tmp_path: Path) -> None:
    plain = read_graph(peephole_lstm_onnx(tmp_path / "plain.onnx", peepholes=False))
    assert check_graph(plain, load_profile("rk3588")).compile_blockers == []
    peephole = read_graph(peephole_lstm_onnx(tmp_path / "peephole.onnx"))
    assert check_graph(peephole, load_profile("mobile-npu")).compile_blockers == []


def test_a_blocker_naming_an_unknown_constraint_is_a_profile_error() -> None:
    with pytest.raises(ValueError, match="compile_blockers.LSTM: unknown constraint 'no_such_rule'"):
        OpTable(compile_blockers={"LSTM": {"no_such_rule": True}})


def test_a_blocker_of_every_op_applies_to_any_node(tmp_path: Path) -> None:
    """``"*"`` in compile_blockers: the Rockchip profiles refuse int16, uint16 and uint8 model inputs whatever
    reads them; int8 and float16 inputs, and other targets, are not blocked."""
    from onnx import TensorProto

    blocked = read_graph(cast_of_input_onnx(tmp_path / "i16.onnx", TensorProto.INT16))
    (blocker,) = check_graph(blocked, load_profile("rk3576")).compile_blockers
    assert (blocker.node, blocker.constraint, blocker.detail) == (
        "cast", "graph_input_dtypes_not_in", "Cast reads graph input 'x' of type int16")
    assert check_graph(blocked, load_profile("mobile-npu")).compile_blockers == []
    for dtype in (TensorProto.INT8, TensorProto.FLOAT16):
        fine = read_graph(cast_of_input_onnx(tmp_path / f"{dtype}.onnx", dtype))
        assert check_graph(fine, load_profile("rk3588")).compile_blockers == []
    docs = "\n".join(render_all([load_profile("rk3588")]).values())
    assert "- any op: The op reads no graph input of type int16, uint16, uint8" in docs


def test_a_blocker_whose_detail_names_its_node_is_named_once(tmp_path: Path) -> None:
    """A Loop (SLANet's decoder) on the Rockchip profiles: the line, the verdict and the markdown name the node
    once, not "Loop 'loop': Loop 'loop' ..."."""
    from tests.models.graphs import loop_onnx

    report = check_graph(read_graph(loop_onnx(tmp_path / "loop.onnx")), load_profile("rk3588"))
    expected = "cannot compile this graph: Loop 'loop' runs its body at run time; the compiler does not unroll it — "
    assert expected in render_table(report) and "Loop 'loop': Loop" not in render_table(report)
    evidence = compatibility(VerdictInputs(target=load_profile("rk3588"), artifacts=[], accuracy=None, support=report))
    assert evidence.outcome == "failed" and "; Loop 'loop' runs its body at run time;" in evidence.detail


def test_a_far_dilated_convolution_blocks_the_mobile_npu_compile(tmp_path: Path) -> None:
    """OpenSpindleNet's unpadded dilation-4096 convolution over 128 channels: QNN cannot allocate it."""
    far = check_graph(read_graph(dilated_conv1d_onnx(tmp_path / "far.onnx", 128, 15692, 4096)),
                      load_profile("mobile-npu"))
    assert [(b.node, b.constraint) for b in far.compile_blockers] == [("conv", "dilated_reach_channels_max")]
    assert "8193 x 128 channels" in far.compile_blockers[0].detail
    for other in (dilated_conv1d_onnx(tmp_path / "near.onnx", 128, 15692, 3000),
                  dilated_conv1d_onnx(tmp_path / "few.onnx", 32, 15692, 4096)):
        assert check_graph(read_graph(other), load_profile("mobile-npu")).compile_blockers == []
