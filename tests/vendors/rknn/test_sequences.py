"""Sequence models' shapes against rknn-toolkit2 2.5.0 on RK3588 and RK3576 (found on madmom's networks, Baidu
LAC's encoder and flashvad): time reversals, pads of [T, F] spectrograms, an input no node
reads, a recurrent op's default ``layout`` attribute, a bidirectional layer's Concat unsqueezed for the next,
one-column heads squeezed to the output."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from edgepipe.support import check_graph, read_graph
from edgepipe.targets import load_profile
from edgepipe.vendors.rknn.model import toolkit_model
from edgepipe.vendors.rknn.toolkit import Rknn, seeded_inputs
from tests.models.probes.sequences import (
    bidirectional_layers_onnx,
    int16_audio_onnx,
    matrix_pads_onnx,
    one_column_heads_onnx,
    peephole_lstm_onnx,
    recurrent_states_onnx,
    reversals_onnx,
    unread_input_gru_onnx,
)
from tests.vendors.rknn.conftest import agreement_with_vendor

REVERSALS = [([100, 64], 0), ([100, 64], 1), ([1, 8, 16, 16], 1), ([1, 8, 16, 16], 2), ([1, 8, 16, 16], 3)]


@pytest.mark.parametrize(("target", "cpu_slices"), [("rk3588", 3), ("rk3576", 5)])
def test_reversed_slices_run_on_the_cpu_except_along_the_last_axis_on_rk3588(rknn_installed: Rknn, tmp_path: Path,
                                                                            target: str, cpu_slices: int) -> None:
    """madmom's bidirectional RNNs reverse the time axis of a [T, F] sequence with a Slice of step -1 before and
    after a forward RNN: RK3588 runs a reversal of the last axis on the NPU and any other on the CPU, RK3576
    runs every reversal on the CPU. edgepipe once put them all on the NPU."""
    cpu_ops, _ = agreement_with_vendor(reversals_onnx(tmp_path / "rev.onnx", REVERSALS), target, tmp_path / "w")
    assert cpu_ops == {"Slice": cpu_slices}


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_pad_of_both_axes_of_a_spectrogram_runs_on_the_cpu(rknn_installed: Rknn, tmp_path: Path,
                                                             target: str) -> None:
    """madmom's key CNN pads its [T, F] input on both axes: the toolkit runs such a Pad on the CPU, and one of
    a single axis on the NPU."""
    model = matrix_pads_onnx(tmp_path / "pads.onnx", [[2, 2, 2, 2], [0, 2, 0, 2], [2, 0, 2, 0], [2, 2, 0, 0]])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {"Pad": 2}


def test_the_toolkit_copy_drops_unread_inputs_and_default_layouts(tmp_path: Path) -> None:
    model = unread_input_gru_onnx(tmp_path / "lac_like.onnx")
    graph = read_graph(model)
    prepared = toolkit_model(model, graph, tmp_path / "named.onnx")
    proto = onnx.load(str(prepared.path))
    assert prepared.unread_inputs == ("length",) and [i.name for i in proto.graph.input] == ["ids"]
    (gru,) = [n for n in proto.graph.node if n.op_type == "GRU"]
    assert "layout" not in {a.name for a in gru.attribute}
    assert len(seeded_inputs(graph, tmp_path, skip=prepared.unread_inputs)) == 1


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_an_unread_input_and_a_default_layout_compile(rknn_installed: Rknn, tmp_path: Path, target: str) -> None:
    """The toolkit drops an input no node reads, then rejects a dataset with data for it ("The input num: 2 in
    dataset.txt not match input num: 1 in model", LAC's ``length``), and fails on a GRU's ``layout=0`` in its
    own opset conversion ("Unrecognized attribute: layout for operator GRU", flashvad): both compiled failed
    before edgepipe's toolkit copy dropped them; now the model compiles and every node agrees (the int64
    embedding lookup on the CPU)."""
    cpu_ops, _ = agreement_with_vendor(unread_input_gru_onnx(tmp_path / "lac_like.onnx"), target, tmp_path / "w")
    assert cpu_ops == {"Gather": 1}


def test_an_lstm_with_peepholes_is_a_compile_failure_naming_them(rknn_installed: Rknn, tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0's compiler aborts the process (SIGABRT, "SubGraphManager: not support yet") on an LSTM
    with peephole weights, as on madmom's BLSTMs: a compile failure with the compiler's message and the LSTMs to
    change, not a broken tool, and one the profile predicts (compile_blockers); the same LSTM without peepholes
    compiles."""
    model = peephole_lstm_onnx(tmp_path / "peephole.onnx")
    assert [b.node for b in check_graph(read_graph(model), load_profile("rk3588")).compile_blockers] == ["lstm"]
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3588"}, tmp_path / "w")
    assert result.status == "compile_failed", result
    assert "aborted" in result.detail and "not support yet" in result.detail
    assert "LSTMs lstm have peephole weights" in result.detail
    plain = peephole_lstm_onnx(tmp_path / "plain.onnx", peepholes=False)
    assert rknn_installed.compile(plain, read_graph(plain), {"target-platform": "rk3588"}, tmp_path / "p").status \
        == "compiled"


def test_an_int16_input_is_a_compile_failure_with_a_next_step(rknn_installed: Rknn, tmp_path: Path) -> None:
    model = int16_audio_onnx(tmp_path / "int16.onnx")
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3576"}, tmp_path / "w")
    assert result.status == "compile_failed" and "Not support input data type 'int16'" in result.detail, result
    assert "Inputs 'audio' (int16): give the model a float32 input" in result.detail


@pytest.mark.parametrize(("target", "cpu_unsqueezes"), [("rk3588", 2), ("rk3576", 0)])
def test_a_bidirectional_layer_of_unaligned_width_is_unsqueezed_on_the_cpu_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, cpu_unsqueezes: int) -> None:
    """madmom's bidirectional onset RNN (2 x 25 units): the toolkit holds the Concat of the two directions as
    [T, 1, 1, 2H]; on RK3588 the Unsqueeze that feeds it to the next RNN runs on the CPU unless 2H is a
    multiple of 16 (50 and 24 here; 16 and 80 not), on RK3576 on the NPU. edgepipe once put them on the NPU."""
    model = bidirectional_layers_onnx(tmp_path / "brnn.onnx", [25, 8, 40, 12])
    cpu_ops, _ = agreement_with_vendor(model, target, tmp_path / "w")
    assert cpu_ops.get("Unsqueeze", 0) == cpu_unsqueezes


@pytest.mark.parametrize(("target", "cpu_ops"), [("rk3588", {"Squeeze": 2}), ("rk3576", {})])
def test_a_one_column_head_squeezed_to_the_output_ends_on_the_cpu_on_rk3588(
        rknn_installed: Rknn, tmp_path: Path, target: str, cpu_ops: dict[str, int]) -> None:
    """madmom's onset RNNs end in a MatMul to one column over 100 frames, squeezed to the [100] output: the
    toolkit holds the column as [1, 1, 1, M] and reshapes it to the output, with the Squeeze merged in, on the
    CPU of RK3588 unless M is a multiple of 16 (100 and 50 here; 96 not). The MatMul, its bias and Sigmoid run
    on the NPU, whatever the exporter names them (this was once counted on the CPU for models that name a node
    after its output only)."""
    model = one_column_heads_onnx(tmp_path / "heads.onnx", [100, 96, 50])
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == cpu_ops


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
@pytest.mark.parametrize(("op", "hidden"), [("RNN", 4), ("GRU", 25)])
def test_recurrent_states_are_reshaped_on_the_npu_and_dtype_conversions_count_for_no_node(
        rknn_installed: Rknn, tmp_path: Path, target: str, op: str, hidden: int) -> None:
    """madmom's SuperFlux BRNN (4 units) and downbeat BGRUs (25 units) carry their states between calls: the
    toolkit reshapes a state (a graph input, a recurrent op's last state) on the NPU whatever its size (edgepipe
    once put the 4-element ones on the CPU), and converts the GRU's int8 state to float16 on the CPU in an
    ``exDataConvert`` layer named after the Unsqueeze's output, which computes no op of the model (once counted as
    the Unsqueeze's, for exporters that name a node after its output)."""
    model = recurrent_states_onnx(tmp_path / "states.onnx", op, hidden)
    cpu_ops, result = agreement_with_vendor(model, target, tmp_path / "w")
    assert "Unsqueeze" not in cpu_ops and "Squeeze" not in cpu_ops
