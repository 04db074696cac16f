"""benchmarks/metrics.py: every model is a row that counts, ops edgepipe made count once per source op, and each
figure has its trivial all-accelerator baseline beside it; counted by hand on small rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.agreement import Row
from benchmarks.metrics import figures, score, source_op, source_ops


def test_nodes_edgepipe_made_name_their_source() -> None:
    assert source_op("/encoder/lstm/LSTM/unrolled/matmul_12") == "/encoder/lstm/LSTM"
    assert source_op("gelu/Erf/tanh_approx/cubic") == "gelu/Erf"
    assert source_op("y_h/unrolled") == "y_h"
    assert source_op("/conv1/Conv") == "/conv1/Conv"
    assert source_op("unrolled_table/Gather") == "unrolled_table/Gather"  # a user's name that only looks like it


def test_in_a_tflite_by_onnx2tf_only_the_names_it_kept_trace_back() -> None:
    # onnx2tf put the ONNX name behind the TF op it emitted (a leading '/' as 'wa/'); the op it named after
    # itself alone has no trace of its source
    assert source_op("model/tf.compat.v1.squeeze/wa/rnn/LSTM/unrolled/squeeze_10") == "/rnn/LSTM"
    assert source_op("model/tf.strided_slice_12/StridedSlice") == "model/tf.strided_slice_12/StridedSlice"


def test_an_lstm_edgepipe_unrolled_counts_as_its_node_and_outputs() -> None:
    from onnx import TensorProto, helper, numpy_helper

    from edgepipe.export.onnx_unroll_rnn import unroll_recurrent

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(0, 0.5, shape).astype(np.float32), name)
               for name, shape in (("W", (2, 16, 3)), ("R", (2, 16, 4)), ("B", (2, 32)))]
    graph = helper.make_graph([helper.make_node("LSTM", ["x", "W", "R", "B"], ["y", "y_h", "y_c"], name="/rnn/LSTM",
                                                hidden_size=4, direction="bidirectional")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 1, 3])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "y_h", "y_c")],
                              weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    assert unroll_recurrent(model) == 1
    names = [node.name for node in model.graph.node]
    assert len(names) > 100
    # the unrolled steps name the LSTM; the copies into its outputs name those outputs
    assert {source_op(n) for n in names} == {"/rnn/LSTM", "y", "y_h", "y_c"}
    ops = source_ops({n: "CC" for n in names})
    assert (ops.compared, ops.agree, ops.vendor_cpu) == (4, 4, 4)


def test_a_source_op_agrees_only_when_all_its_nodes_do_and_is_on_the_cpu_when_any_is() -> None:
    placements = {"a/unrolled/m_1": "AA", "a/unrolled/m_2": "AC", "b": "AA", "c": "CC", "d": "A-", "e": "-C"}
    ops = source_ops(placements)
    assert (ops.compared, ops.agree, ops.trivial_agree) == (5, 2, 1)  # a disagrees; d, e unmatched; trivial: b only
    assert (ops.vendor_cpu, ops.edgepipe_cpu, ops.both_cpu) == (3, 1, 1)  # a, c, e / c / c


def _row(model: str, status: str, placements: dict[str, str] | None = None, **counts: int) -> Row:
    return Row(model, "held_out", "rk3588", status, placements=placements or {}, **counts)


def test_failures_count_as_zero_and_a_predicted_failure_as_agreement() -> None:
    assert score(_row("m", "failure predicted")).agreement == 1.0
    assert score(_row("m", "failure predicted")).trivial == 0.0
    for status in ("compile_failed", "failed", "no artifact"):
        got = score(_row("m", status, {"x": "A-"} if status != "no artifact" else None))
        assert (got.agreement, got.trivial, got.exact) == (0.0, 0.0, False)


def test_a_big_model_weighs_one_model_in_the_macro_figure_and_no_row_is_dropped() -> None:
    big = {f"lstm/unrolled/op_{i}": "CA" for i in range(15_000)}  # one source op, wrong
    rows = [_row("blstm", "ran", big), _row("cnn", "ran", {"conv": "AA", "relu": "AA", "pool": "AC"}),
            _row("broken", "compile_failed", {"n1": "A-", "n2": "A-"}), _row("none", "no artifact"),
            _row("blocked", "failure predicted")]
    f = figures("rk3588", rows)
    assert f.models == 5 and f.by_status == {"ran": 2, "compile_failed": 1, "no artifact": 1, "failure predicted": 1}
    assert f.macro == pytest.approx((0 + 2 / 3 + 0 + 0 + 1) / 5)
    assert f.exact == pytest.approx(1 / 5)
    assert (f.compared, f.agree) == (1 + 3 + 2, 2)  # the failed compile's source ops count, and disagree
    assert f.trivial_macro == pytest.approx((1 + 2 / 3) / 5)  # the trivial checker: blstm right, cnn 2 of 3
    assert f.trivial_pooled == pytest.approx(3 / 6)
    assert (f.vendor_cpu, f.edgepipe_cpu, f.both_cpu) == (1, 1, 0)
    assert f.cpu_recall == 0.0 and f.cpu_precision == 0.0


def test_rows_without_per_node_placements_give_node_counts_and_no_trivial_baseline() -> None:
    f = figures("rk3588", [_row("old", "ran", None, compared=10, agree=9, vendor_cpu=2, edgepipe_cpu=1, both_cpu=1)])
    assert not f.per_node and f.pooled == 0.9 and f.cpu_recall == 0.5
    assert math.isnan(f.trivial_macro) and math.isnan(f.trivial_pooled)
