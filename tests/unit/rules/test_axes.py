"""One test per constraint of edgepipe/rules/axes.py: a graph that fails it and one that passes.

The module holds rules on axes, reductions, permutations, pads and strided slices.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from edgepipe.graph.opgraph import OpGraph, OpNode
from tests.models.graphs import onnx_graph, single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def test_axis_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Concat", [[1, 2, 4, 4], [1, 2, 4, 4]], [1, 4, 4, 4], axis=1)
    assert verdict("axis_in", node, graph, [3, -1]) == (False, "Concat axis 1 not in 3, -1")
    node, graph = single(tmp_path, "Concat", [[1, 2, 4, 4], [1, 2, 4, 4]], [1, 2, 4, 8], axis=-1)
    assert verdict("axis_in", node, graph, [3])[0]


def test_reduced_axis_max(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMean", [[1, 5000, 4]], [1, 1, 4], axes=[1])
    assert verdict("reduced_axis_max", node, graph, 4096) == (False, "ReduceMean reduced axis of 5000 >= 4096")
    node, graph = single(tmp_path, "ReduceMean", [[1, 50, 4]], [1, 1, 4], axes=[1])
    assert verdict("reduced_axis_max", node, graph, 4096)[0]


def test_reduce_keeps_batch(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMean", [[2, 5, 4]], [1, 5, 4], axes=[0])
    assert verdict("reduce_keeps_batch", node, graph, True) == (False, "ReduceMean reduces over the batch axis")
    node, graph = single(tmp_path, "ReduceMean", [[2, 5, 4]], [2, 1, 4], axes=[1])
    assert verdict("reduce_keeps_batch", node, graph, True)[0]


def test_keeps_an_axis(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMax", [[1, 8, 32]], [], keepdims=0)
    assert verdict("keeps_an_axis", node, graph, True) == (False, "ReduceMax reduces (1, 8, 32) to one value")
    node, graph = single(tmp_path, "ReduceMax", [[1, 8, 32]], [1, 8, 1], axes=[-1])
    assert verdict("keeps_an_axis", node, graph, True)[0]


def reduce_max(tmp: Path, shape: list[int], axes: list[int], keepdims: int = 1) -> tuple[OpNode, OpGraph]:
    """A ReduceMax at opset 18, its axes as a constant second input."""
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keepdims else \
        [d for i, d in enumerate(shape) if i not in axes]
    node = helper.make_node("ReduceMax", ["x", "axes"], ["y"], name="rmax", keepdims=keepdims)
    graph = onnx_graph(tmp, [node], {"x": (shape, FLOAT)}, {"y": (out, FLOAT)}, {"axes": np.array(axes, np.int64)},
                       opset=18)
    return graph.nodes[0], graph


def test_reduce_axes_are_read_from_the_opset_18_input(tmp_path: Path) -> None:
    node, _ = reduce_max(tmp_path, [1, 112, 20, 64], [1, 2], keepdims=0)
    assert node.attrs["axes"] == (1, 2)


def test_reduces_only_axes(tmp_path: Path) -> None:
    """DNSMOS's global max pooling over axes 1 and 2: CPU on RK3576; a channel max: NPU; RK3588: CPU always.

    rknn-toolkit2 2.5.0 runs ReduceMax on RK3588's CPU in every probed form, and on RK3576's NPU only over axis 1: a
    channel max of [N, C, H, W], not DNSMOS's global max pooling of [1, 112, 20, 64] over axes 1 and 2.
    """
    node, graph = reduce_max(tmp_path, [1, 112, 20, 64], [1, 2], keepdims=0)
    ok, detail = verdict("reduces_only_axes", node, graph, [1])
    assert not ok and "reduces axis 2 of [1, 112, 20, 64]" in detail
    node, graph = reduce_max(tmp_path, [1, 112, 20, 64], [1])
    assert verdict("reduces_only_axes", node, graph, [1])[0]
    assert not verdict("reduces_only_axes", node, graph, [])[0]
    node, graph = reduce_max(tmp_path, [1, 32, 128], [-2])
    assert verdict("reduces_only_axes", node, graph, [1])[0], "a negative axis is counted from the back"


def test_perm_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Transpose", [[1, 2, 3, 4]], [1, 3, 4, 2], perm=[0, 2, 3, 1])
    assert verdict("perm_in", node, graph, ["0132"]) == (False, "Transpose permutation 0231 not in 0132")
    assert verdict("perm_in", node, graph, ["0231"])[0]


def test_transpose_axes_product_max(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Transpose", [[1, 4, 28, 56, 56]], [1, 28, 4, 56, 56], perm=[0, 2, 1, 3, 4])
    assert verdict("transpose_axes_product_max", node, graph, 65536) == (
        False, "Transpose product of 3 axes 87808 > 65536")
    node, graph = single(tmp_path, "Transpose", [[1, 1, 8, 16, 32]], [1, 1, 16, 8, 32], perm=[0, 1, 3, 2, 4])
    assert verdict("transpose_axes_product_max", node, graph, 65536)[0]


@pytest.mark.parametrize(("channels", "pads", "ok"), [
    (24, [0, 0, 0, 0, 0, 4, 0, 0], False),  # BlazeFace's channel_padding: 24 -> 28 channels at the end
    (32, [0, 0, 0, 0, 0, 4, 0, 0], True),
    (24, [0, 4, 0, 0, 0, 4, 0, 0], True),
    (16, [0, 4, 1, 1, 0, 0, 1, 1], False),
    (24, [0, 0, 1, 1, 0, 0, 1, 1], True),
])
def test_channel_pad_aligned(tmp_path: Path, channels: int, pads: list[int], ok: bool) -> None:
    """rknn-toolkit2 2.5.0 runs the other channel pads on the CPU, e.g. MobileNet's and BlazeFace's
    "channel_padding" of 24 to 28 channels."""
    node, graph = single(tmp_path, "Pad", [[1, channels, 8, 8]], consts={"pads": np.array(pads, np.int64)})
    assert node.attrs["pads"] == tuple(pads)
    assert verdict("channel_pad_aligned", node, graph, 16)[0] is ok


def test_channel_pad_aligned_reads_the_pads_attribute_of_old_opsets_and_passes_run_time_pads(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Pad", [[1, 24, 8, 8]], pads=[0, 0, 0, 0, 0, 4, 0, 0], opset=10)
    expected = (False, "Pad adds 4 channels after 24, not a multiple of 16")
    assert verdict("channel_pad_aligned", node, graph, 16) == expected
    node, graph = single(tmp_path, "Pad", [[1, 24, 8, 8], [8]])  # pads computed at run time: nothing to judge
    assert "pads" not in node.attrs and verdict("channel_pad_aligned", node, graph, 16)[0]


def test_strided_after_strided(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 runs a strided Slice of a graph input or of a Conv's output on the CPU, as the first
    Slices of YOLOv5's "Focus"; the second Slice of each pair, which reads the first, runs on the NPU."""
    def strided(name: str, source: str) -> list[str]:  # the Slice's inputs; its constants are in ``consts``
        return [source, f"{name}_s", f"{name}_e", f"{name}_a", f"{name}_t"]

    consts = {f"{n}_{k}": np.array([v], np.int64) for n, axis, step in (("h", 2, 2), ("w", 3, 2), ("one", 2, 1))
              for k, v in (("s", 0), ("e", 2 ** 62), ("a", axis), ("t", step))}
    graph = onnx_graph(tmp_path, [helper.make_node("Slice", strided("h", "x"), ["a"], name="h"),
                                  helper.make_node("Slice", strided("w", "a"), ["b"], name="w"),
                                  helper.make_node("Slice", strided("one", "x"), ["c"], name="one")],
                       {"x": ([1, 3, 8, 8], FLOAT)}, {"b": ([1, 3, 4, 4], FLOAT), "c": ([1, 3, 8, 8], FLOAT)}, consts)
    first, second, plain = graph.nodes
    assert first.attrs["steps"] == (2,)
    assert verdict("strided_after_strided", first, graph, True) == (
        False, "Slice of steps [2] reads 'x', not a strided Slice's output")
    assert verdict("strided_after_strided", second, graph, True) == (True, "reads a strided Slice")
    assert verdict("strided_after_strided", plain, graph, True)[0]
