"""One test per constraint of edgepipe/rules/constants.py (the constants a node reads): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.graph.opgraph import OpGraph
from tests.models.graphs import single
from tests.unit.rules.graphs import verdict


def test_weight_dtypes(probe_graphs: dict[str, OpGraph]) -> None:
    float_conv, int8_conv = probe_graphs["float"].nodes[0], probe_graphs["int8"].nodes[0]
    ok, detail = verdict("weight_dtypes", float_conv, probe_graphs["float"], ["int8"])
    assert not ok and detail == "CONV_2D weights are float32, not one of int8"
    assert verdict("weight_dtypes", int8_conv, probe_graphs["int8"], ["int8"])[0]


def test_constant_weights(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "MatMul", [[1, 4], [4, 2]], [1, 2])
    ok, detail = verdict("constant_weights", node, graph, True)
    assert not ok and detail == "MatMul input 'x1' is not constant"
    node, graph = single(tmp_path, "MatMul", [[1, 4]], [1, 2], consts={"w": np.ones((4, 2), np.float32)})
    assert verdict("constant_weights", node, graph, True)[0]


def test_nonempty_constant_inputs(tmp_path: Path) -> None:
    """A RESHAPE to a scalar reads an empty new-shape constant, which Vela refuses (held-out PLCMOS v2).

    Vela 5.2.0 refuses the whole file ("Constant tensors must not have empty buffers"); PLCMOS v2's one-value output
    is such a RESHAPE, as the TFLite converter writes it.
    """
    node, graph = single(tmp_path, "Reshape", [[1, 1]], [], consts={"shape": np.zeros((0,), np.int64)})
    assert verdict("nonempty_constant_inputs", node, graph, True) == (
        False, "Reshape reads constant 'shape' of shape [0], no elements")
    assert verdict("nonempty_constant_inputs", node, graph, False) == (True, "not required")
    node, graph = single(tmp_path, "Reshape", [[1, 1]], [1], consts={"shape": np.array([1], np.int64)})
    assert verdict("nonempty_constant_inputs", node, graph, True) == (True, "no empty constant")


def test_constants_not_nan(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0's quantizer computes such a constant's range as NaN and the build fails ("cannot convert
    float NaN to integer"), whatever op reads it (a Where's fill value, an Add's constant; an unused one is
    dropped): Fracast's masking of missing steps, probed on RK3588 and RK3576."""
    from edgepipe.support import read_graph
    from tests.models.probes.arithmetic import nan_fill_onnx

    masked = read_graph(nan_fill_onnx(tmp_path / "nan.onnx", float("nan")))
    where = next(n for n in masked.nodes if n.op == "Where")
    assert verdict("constants_not_nan", where, masked, True) == (
        False, "Where reads constant 'fill' holding NaN (replace it by a finite value)")
    assert all(verdict("constants_not_nan", n, masked, True)[0] for n in masked.nodes if n.op != "Where")
    zeros = read_graph(nan_fill_onnx(tmp_path / "zero.onnx", 0.0))
    assert all(verdict("constants_not_nan", n, zeros, True)[0] for n in zeros.nodes)


def test_value_attribute_written(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0's loader fails on a ConstantOfShape without ``value`` ("'numpy.ndarray' object has no
    attribute 'data_type'"), rejecting the whole model (SwiftF0; probed)."""
    from edgepipe.support import read_graph
    from tests.models.probes.inputs import default_constant_of_shape_onnx

    bare = read_graph(default_constant_of_shape_onnx(tmp_path / "bare.onnx", False))
    assert verdict("value_attribute_written", bare.nodes[0], bare, True) == (
        False, "ConstantOfShape leaves its value attribute to the default (write value = 0 into the node)")
    written = read_graph(default_constant_of_shape_onnx(tmp_path / "written.onnx", True))
    assert verdict("value_attribute_written", written.nodes[0], written, True)[0]


def _run_time_expand(tmp_path: Path) -> tuple[OpGraph, dict[str, Any]]:
    """The graph of tests/models/probes/inputs.run_time_expand_onnx and its nodes by name."""
    from edgepipe.support import read_graph
    from tests.models.probes.inputs import run_time_expand_onnx

    graph = read_graph(run_time_expand_onnx(tmp_path / "expand.onnx"))
    return graph, {node.name: node for node in graph.nodes}


def test_shape_input_stored(tmp_path: Path) -> None:
    """ONNX Runtime's QNN EP sees no static output shape otherwise and leaves the op to the CPU (VoiceFilter-Lite's
    zero LSTM states expanded to a shape made from its input's Shape; probed)."""
    graph, nodes = _run_time_expand(tmp_path)
    assert verdict("shape_input_stored", nodes["expand_computed"], graph, True) == (
        False, "Expand shape 'target' computed at run time by Concat")
    assert verdict("shape_input_stored", nodes["expand_stored"], graph, True)[0]


def test_reads_no_run_time_shape(tmp_path: Path) -> None:
    """ONNX Runtime's QNN EP knows no static shape for such an output and leaves the reader to the CPU too
    (VoiceFilter-Lite's and text2tashkeel's Slices of their zero LSTM states; an Add probed; a Concat runs on the
    HTP)."""
    graph, nodes = _run_time_expand(tmp_path)
    assert verdict("reads_no_run_time_shape", nodes["add"], graph, True) == (
        False, "Add reads 'zeros', which Expand shapes at run time")
    assert verdict("reads_no_run_time_shape", nodes["relu"], graph, True)[0]
