"""One test per constraint of edgepipe/rules/dense.py (dense layers run as 1 x 1 convolutions): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import squeeze_if_graph, verdict

FLOAT = TensorProto.FLOAT


def test_matmul_columns_max(tmp_path: Path) -> None:
    """A (16, 9000) product of constant weights, its bias Add and the Sigmoid after it; a one-row MatMul.

    rknn-toolkit2 2.5.0: the transpose back of more channels falls back to the CPU ("channel is too large").
    """
    graph = squeeze_if_graph(tmp_path, columns=9000)
    matmul, bias, sigmoid = (next(n for n in graph.nodes if n.op == op) for op in ("MatMul", "Add", "Sigmoid"))
    for node in (matmul, bias, sigmoid):
        assert verdict("matmul_columns_max", node, graph, 8192) == (False, "MatMul 'matmul' writes 9000 columns > 8192")
        assert verdict("matmul_columns_max", node, graph, 9000)[0]
    one_row, graph = single(tmp_path, "MatMul", [[1, 8]], [1, 9000],
                            consts={"w": np.zeros((8, 9000), np.float32)})
    assert verdict("matmul_columns_max", one_row, graph, 8192)[0]


def test_output_columns_multiple(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs a Gemm or such a MatMul as a Conv; the Reshape back to 2-D it adds at a graph output
    of other widths (a 1000-class head, a hand-presence score) runs on the CPU (a MatMul probed with 3 columns)."""
    consts = {"w": np.ones((24, 8), np.float32)}
    node, graph = single(tmp_path, "Gemm", [[1, 8]], [1, 24], consts=consts, transB=1)
    expected = (False, "Gemm writes graph output 'y' of 24 columns, not a multiple of 16")
    assert verdict("output_columns_multiple", node, graph, 16) == expected
    assert verdict("output_columns_multiple", node, graph, 8) == (True, "24 columns")


def test_reshaped_columns_max(tmp_path: Path) -> None:
    """ddddocr's OCR head: Gemm [32, 1024] x [1024, 8210], reshaped to [32, 1, 8210].

    rknn-toolkit2 2.5.0 on RK3588; read by an activation instead, the Gemm stays on the NPU.
    """
    def head(columns: int, rows: int, reader: str) -> OpGraph:
        then = helper.make_node("Reshape", ["g", "shape"], ["y"], name="then") if reader == "Reshape" else \
            helper.make_node("Sigmoid", ["g"], ["y"], name="then")
        out = [rows, 1, columns] if reader == "Reshape" else [rows, columns]
        return onnx_graph(tmp_path, [helper.make_node("Gemm", ["x", "w"], ["g"], name="head", transB=1), then],
                          {"x": ([rows, 64], FLOAT)}, {"y": (out, FLOAT)},
                          {"w": np.zeros((columns, 64), np.float32), "shape": np.array(out[:3], np.int64)})

    graph = head(8210, 32, "Reshape")
    assert verdict("reshaped_columns_max", graph.nodes[0], graph, 8192) == (
        False, "Gemm writes 8210 columns > 8192 over 32 rows to a reshape")
    for columns, rows, reader in ((8192, 32, "Reshape"), (8210, 32, "Sigmoid"), (8210, 1, "Reshape")):
        graph = head(columns, rows, reader)
        assert verdict("reshaped_columns_max", graph.nodes[0], graph, 8192)[0], (columns, rows, reader)


@pytest.mark.parametrize(("plane", "transposed", "trans_b", "ok"), [
    ((19, 19), True, False, False),  # chess-fen-detector's head: the NHWC Transpose folded into the weights
    ((19, 19), False, True, False), ((9, 9), False, True, False), ((7, 8), False, True, False),
    ((16, 16), False, True, True), ((8, 8), False, True, True),  # planes of a multiple of 16
    ((7, 7), False, True, True), ((3, 3), True, False, True),  # folded into the dense layer as its kernel
    ((19, 19), True, True, True),  # a Transpose the compiler keeps: not this reshape
])
def test_dense_plane_aligned(tmp_path: Path, plane: tuple[int, int], transposed: bool, trans_b: bool,
                             ok: bool) -> None:
    """rknn-toolkit2 2.5.0 on RK3588 (chess-fen-detector's 19 x 19 plane of 32 channels); probed: 8 x 8, 16 x 16, 3
    x 3, 7 x 7, 6 x 7, 5 x 6, 2 x 3 and 1 x 7 on the NPU; 9 x 9, 19 x 19, 10 x 10, 7 x 8, 9 x 7, 6 x 10, 5 x 11 and
    1 x 9 on the CPU, with and without the Transpose; RK3576 runs them all on the NPU."""
    from edgepipe.support import read_graph
    from tests.models.probes.heads import flattened_dense_onnx

    graph = read_graph(flattened_dense_onnx(tmp_path / "d.onnx", 8, *plane, transposed=transposed, trans_b=trans_b))
    dense, relu, conv = (next(n for n in graph.nodes if n.name == name) for name in ("dense", "relu1", "relu0"))
    for node in (dense, relu):
        assert verdict("dense_plane_aligned", node, graph, 16)[0] is ok
    assert verdict("dense_plane_aligned", conv, graph, 16)[0]
    if not ok:
        assert verdict("dense_plane_aligned", dense, graph, 16)[1] == (
            f"Gemm 'dense' reads a flatten of [1, 8, {plane[0]}, {plane[1]}]: an H x W plane of "
            f"{plane[0] * plane[1]} elements, not a multiple of 16, wider than 7")
