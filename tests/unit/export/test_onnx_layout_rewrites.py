"""The graph rewrites a conversion route applies before onnx2tf compute exactly what they replace
(edgepipe.export.onnx_layout_rewrites): ONNX Runtime gives the same outputs before and after, and each rewrite
takes only the nodes it is for."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.models.graphs import anchor_decode


def _model(nodes: list[Any], x_shape: list[int], initializers: list[Any] | None = None) -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph(nodes, "rewrite", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializers or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _rewritten(name: str, model: Any, x: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, list[str]]:
    import onnx

    from edgepipe.export.onnx_layout_rewrites import REWRITES

    want = _run(model, x)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    count = REWRITES[name].apply(copy)
    return count, want, _run(copy, x), [n.op_type for n in copy.graph.node]


@pytest.mark.parametrize(("axis", "rewritten"), [(1, True), (-3, True), (2, True), (3, False), (-1, False)])
def test_a_softmax_off_the_last_axis_becomes_transposes_around_a_last_axis_softmax(axis: int,
                                                                                  rewritten: bool) -> None:
    from onnx import helper

    model = _model([helper.make_node("Softmax", ["x"], ["y"], name="head", axis=axis)], [1, 5, 3, 4])
    x = np.random.default_rng(0).normal(0, 2, (1, 5, 3, 4)).astype(np.float32)
    count, want, got, ops = _rewritten("softmax-last-axis", model, x)
    assert count == int(rewritten)
    assert ops == (["Transpose", "Softmax", "Transpose"] if rewritten else ["Softmax"])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_a_channel_concat_becomes_a_last_axis_concat_with_the_same_values() -> None:
    from onnx import helper, numpy_helper

    other = numpy_helper.from_array(np.arange(1 * 2 * 3 * 4, dtype=np.float32).reshape(1, 2, 3, 4), "boxes")
    model = _model([helper.make_node("Relu", ["x"], ["r"]),
                    helper.make_node("Concat", ["r", "boxes"], ["y"], name="head", axis=1)], [1, 5, 3, 4], [other])
    x = np.random.default_rng(1).normal(0, 1, (1, 5, 3, 4)).astype(np.float32)
    count, want, got, ops = _rewritten("concat-last-axis", model, x)
    assert count == 1 and ops.count("Transpose") == 3 and ops.count("Concat") == 1
    np.testing.assert_array_equal(got, want)


def test_a_real_one_sided_dft_becomes_a_matmul_with_the_fourier_basis() -> None:
    from onnx import helper, numpy_helper

    n = 64
    length = numpy_helper.from_array(np.array(n, np.int64), "n")
    model = _model([helper.make_node("DFT", ["x", "n"], ["y"], name="fft", axis=1, onesided=1)], [1, n, 1], [length])
    x = np.random.default_rng(2).normal(0, 1, (1, n, 1)).astype(np.float32)
    count, want, got, ops = _rewritten("dft-as-matmul", model, x)
    assert count == 1 and ops == ["Reshape", "MatMul", "Reshape"] and got.shape == (1, n // 2 + 1, 2)
    np.testing.assert_allclose(got, want, atol=2e-4 * float(np.max(np.abs(want))))


def test_an_inverse_or_two_sided_dft_is_left_alone() -> None:
    from onnx import helper

    from edgepipe.export.onnx_layout_rewrites import REWRITES

    for attrs in ({"inverse": 1, "onesided": 0}, {"onesided": 0}):
        model = _model([helper.make_node("DFT", ["x"], ["y"], axis=1, **attrs)], [1, 16, 1])
        assert REWRITES["dft-as-matmul"].apply(model) == 0


@pytest.mark.parametrize(("op", "first", "shape", "rewritten"), [
    ("Sub", True, [8], True),  # beta - mean * gamma of a TF LayerNorm: the constant first, rank 1 beside rank 3
    ("Mul", False, [3, 8], True), ("Add", False, [8], True), ("Div", False, [1, 1, 8], False),  # already full rank
    ("Pow", False, [], True)])
def test_a_low_rank_constant_is_stored_at_its_partners_rank(op: str, first: bool, shape: list[int],
                                                             rewritten: bool) -> None:
    from onnx import helper, numpy_helper

    value = np.random.default_rng(3).uniform(0.5, 2, shape).astype(np.float32)
    inputs = ["c", "r"] if first else ["r", "c"]
    model = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node(op, inputs, ["y"], name="ln")],
                   [1, 3, 8], [numpy_helper.from_array(value, "c")])
    x = np.random.default_rng(4).normal(0, 1, (1, 3, 8)).astype(np.float32)
    count, want, got, ops = _rewritten("constant-full-rank", model, x)
    assert count == int(rewritten) and ops == ["Relu", op]
    np.testing.assert_array_equal(got, want)


def test_constants_beside_low_rank_tensors_or_other_constants_stay() -> None:
    from onnx import helper, numpy_helper

    from edgepipe.export.onnx_layout_rewrites import REWRITES

    c = numpy_helper.from_array(np.ones(4, np.float32), "c")
    flat = _model([helper.make_node("Add", ["x", "c"], ["y"], name="add")], [2, 4], [c])
    assert REWRITES["constant-full-rank"].apply(flat) == 0  # a rank-2 partner: onnx2tf keeps its layout


def test_rewrites_named_for_the_failing_node_apply_only_there() -> None:
    from onnx import helper

    from edgepipe.export.onnx_layout_rewrites import REWRITES

    model = _model([helper.make_node("Softmax", ["x"], ["y"], name="head", axis=1)], [1, 5, 3, 4])
    assert REWRITES["softmax-last-axis"].applies(model, "head")
    assert not REWRITES["softmax-last-axis"].applies(model, "other")
    assert not REWRITES["softmax-last-axis"].applies(model, None)


def test_an_anchor_grid_minus_a_feature_map_becomes_an_add_of_its_negation() -> None:
    """Found on a YOLOv8 head: onnx2tf laid out ``anchors - distances`` transposed (cosine 0.98 for that tensor, 0.26
    after the box Concat that follows, 0.41 for the whole output); written as an Add every tensor of the head was
    exact. A Mul by -1, not a Neg: Vela placed the NEG on the CPU."""
    model = anchor_decode()
    x = np.random.default_rng(5).normal(0, 3, (1, 2, 7)).astype(np.float32)
    count, want, got, ops = _rewritten("constant-minus-as-add", model, x)
    assert count == 1 and ops[-2:] == ["Mul", "Add"]  # Mul by -1: NPUs run it, NEG often not
    np.testing.assert_array_equal(got, want)  # the same IEEE arithmetic, bit for bit


def test_a_subtraction_of_two_feature_maps_or_from_one_stays() -> None:
    from onnx import helper, numpy_helper

    from edgepipe.export.onnx_layout_rewrites import REWRITES

    c = numpy_helper.from_array(np.ones((1, 2, 7), np.float32), "c")
    for inputs in (["r", "x"], ["r", "c"]):
        model = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Sub", inputs, ["y"])], [1, 2, 7],
                       [c])
        assert REWRITES["constant-minus-as-add"].apply(model) == 0, inputs


def test_the_subtraction_rewrite_is_tried_only_after_a_failure_that_names_no_node() -> None:
    from edgepipe.export.onnx_layout_rewrites import REWRITES

    model = anchor_decode()
    assert REWRITES["constant-minus-as-add"].applies(model, None)  # converted, but computed something else
    assert not REWRITES["constant-minus-as-add"].applies(model, "/head/Sub")
