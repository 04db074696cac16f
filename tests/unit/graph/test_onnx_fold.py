"""Shape computations folded as compilers fold them: the ops after them get static shapes, and a profile that
folds constants (edge-box-npu: rknn-toolkit2) never puts them on the CPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import TensorProto, helper

from edgepipe.support import check_graph
from edgepipe.targets import load_profile
from tests.models.graphs import onnx_graph


def _flatten_by_shape(tmp_path: Path):  # noqa: ANN202 - OpGraph
    """PaddlePaddle's flatten: Shape -> Cast -> Slice -> Concat(-1) -> Reshape, then MatMul and Softmax."""
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["p"], name="pool"),
             helper.make_node("Shape", ["p"], ["shape"], name="shape"),
             helper.make_node("Cast", ["shape"], ["shape32"], name="cast", to=TensorProto.INT32),
             helper.make_node("Slice", ["shape32", "zero", "one"], ["batch"], name="slice"),
             helper.make_node("Cast", ["batch"], ["batch_int64"], name="cast64", to=TensorProto.INT64),
             helper.make_node("Concat", ["batch_int64", "minus_one"], ["target"], name="concat", axis=0),
             helper.make_node("Reshape", ["p", "target"], ["flat"], name="reshape"),
             helper.make_node("MatMul", ["flat", "w"], ["logits"], name="matmul"),
             helper.make_node("Softmax", ["logits"], ["y"], name="softmax")]
    consts = {"zero": np.array([0], np.int32), "one": np.array([1], np.int32),
              "minus_one": np.array([-1], np.int64), "w": np.ones((8, 2), np.float32)}
    return onnx_graph(tmp_path, nodes, {"x": ([1, 8, 4, 4], TensorProto.FLOAT)},
                      {"y": ([-1, 2], TensorProto.FLOAT)}, consts)


def test_shape_chain_is_folded_and_downstream_shapes_are_static(tmp_path: Path) -> None:
    graph = _flatten_by_shape(tmp_path)
    folded = [n.name for n in graph.nodes if n.attrs.get("folded")]
    assert folded == ["shape", "cast", "slice", "cast64", "concat"]
    by_name = {n.name: n for n in graph.nodes}
    assert by_name["reshape"].outputs[0].shape == (1, 8)
    assert by_name["softmax"].outputs[0].shape == (1, 2)  # the declared (-1, 2) output is inferred again
    report = check_graph(graph, load_profile("rk3576"))  # rk3588 runs a reshape of 8 elements on the CPU
    assert report.cpu_ops == {}, [(v.name, v.failed) for v in report.node_verdicts if v.failed]


def test_a_profile_that_does_not_fold_places_the_shape_op_itself(tmp_path: Path) -> None:
    """mobile-npu (the QNN emulator runs with ONNX Runtime's optimisations off) places the Shape op as an op."""
    graph = _flatten_by_shape(tmp_path)
    report = check_graph(graph, load_profile("mobile-npu"))
    assert report.cpu_ops == {"Shape": 1}


def test_a_mul_by_zero_folds_and_what_only_it_reads_is_unused(tmp_path: Path) -> None:
    """rknn-toolkit2 folds a Mul by an all-zero constant and drops the nodes only it reads (tf2onnx's SelectV2:
    ``Cast(Not(c)) * 0``); the edge-box profiles place them nowhere, not on the CPU."""
    nodes = [helper.make_node("Less", ["x", "limit"], ["c"], name="less"),
             helper.make_node("Not", ["c"], ["not_c"], name="not"),
             helper.make_node("Cast", ["not_c"], ["not_f"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["zeros", "not_f"], ["dropped"], name="times_zero"),
             helper.make_node("Add", ["x", "dropped"], ["y"], name="add")]
    consts = {"limit": np.array(49.0, np.float32), "zeros": np.zeros((1, 4), np.float32)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4], TensorProto.FLOAT)},
                       {"y": ([1, 4], TensorProto.FLOAT), "c": ([1, 4], TensorProto.BOOL)}, consts)
    assert [n.name for n in graph.nodes if n.attrs.get("folded")] == ["times_zero"]
    assert [n.name for n in graph.nodes if n.attrs.get("unused")] == ["not", "cast"]
    assert check_graph(graph, load_profile("rk3588")).cpu_ops == {"Less": 1}


def test_a_node_an_if_branch_reads_is_not_unused(tmp_path: Path) -> None:
    """A tensor read only inside an If's branch (PyTorch's squeeze-if) is still needed: not marked unused, even
    where the If's condition folds."""
    branch = helper.make_graph([helper.make_node("Identity", ["r"], ["out"], name="inner")], "branch", [],
                               [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4])])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["x"], ["shape"], name="shape"),
             helper.make_node("Equal", ["shape", "two"], ["cond"], name="equal"),
             helper.make_node("ReduceMin", ["cond_i"], ["c"], name="unused_by_name", keepdims=0),
             helper.make_node("If", ["flag"], ["y"], name="if", then_branch=branch, else_branch=branch)]
    consts = {"two": np.array([1, 4], np.int64), "cond_i": np.array([1], np.int64), "flag": np.array(True)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4], TensorProto.FLOAT)}, {"y": ([1, 4], TensorProto.FLOAT)},
                       consts)
    assert not [n.name for n in graph.nodes if n.attrs.get("unused")]
