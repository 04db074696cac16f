"""Slices that reverse a whole axis are rewritten as Gathers before onnx2tf (edgepipe.export.onnx_reverse_slices):
onnx2tf converts a step -1 Slice of a [T, F] sequence into a graph that computes something else (madmom's
bidirectional networks reverse their sequences that way; their TFLite was refused at export)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from tests.models.probes.onnx_files import ort_outputs, save_opset

STEPS, FEATURES = 20, 8


def _reversal_onnx(path: Path, start: int, end: int, step: int = -1) -> Path:
    """x [STEPS, FEATURES] -> MatMul -> h; y = h + Slice(h, start, end, axis 0, step): a sequence and its reversal."""
    from onnx import TensorProto, helper, numpy_helper

    constants = [numpy_helper.from_array(np.random.default_rng(0).normal(0, 1, (FEATURES, FEATURES))
                                         .astype(np.float32), "w")]
    constants += [numpy_helper.from_array(np.array([v], np.int64), n)
                  for n, v in (("start", start), ("end", end), ("axis", 0), ("step", step))]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="project"),
             helper.make_node("Slice", ["h", "start", "end", "axis", "step"], ["r"], name="reverse"),
             helper.make_node("Add", ["h", "r"], ["y"], name="add")]
    shape = [STEPS, FEATURES]
    graph = helper.make_graph(nodes, "reversal", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], constants)
    return save_opset(graph, path, 17)


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    return ort_outputs(model, {"x": x})[0]


@pytest.mark.parametrize(("start", "end", "rewritten"), [
    (-1, -(2 ** 63), True), (STEPS - 1, -STEPS - 1, True), (STEPS + 5, -(2 ** 63), True),  # the whole axis, reversed
    (-2, -(2 ** 63), False), (-1, 0, False)])  # all but the last step; all but the first
def test_whole_axis_reversals_become_gathers_and_compute_the_same(tmp_path: Path, start: int, end: int,
                                                                   rewritten: bool) -> None:
    import onnx

    from edgepipe.export.onnx_reverse_slices import reverse_slices_as_gathers

    model = onnx.load(str(_reversal_onnx(tmp_path / "r.onnx", start, end)))
    x = np.random.default_rng(1).normal(0, 1, (STEPS, FEATURES)).astype(np.float32)
    if not rewritten:  # the Slice keeps part of the axis; its output has another length than the Add takes
        assert reverse_slices_as_gathers(model) == 0
        return
    want = _run(model, x)
    assert reverse_slices_as_gathers(model) == 1
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Gather", "Add"]
    np.testing.assert_array_equal(_run(model, x), want)


def test_a_reversed_sequence_converts_exactly(tmp_path: Path) -> None:
    """onnx2tf gave the reversal cosine 0.70 in a hand-run probe; the rewritten one is the same function."""
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = _reversal_onnx(tmp_path / "r.onnx", -1, -(2 ** 63))
    x = np.random.default_rng(1).normal(0, 1, (8, STEPS, FEATURES)).astype(np.float32)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(x,), labels=None, sha256="", whole=(True,))
    converted = convert_onnx_to_tflite(source, tmp_path / "r.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
