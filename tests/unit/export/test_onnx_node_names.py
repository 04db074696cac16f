"""Node names TensorFlow refuses as scope names are rewritten in onnx2tf's copy of a model
(edgepipe.export.onnx_node_names): every node of a PaddlePaddle export is named ``Op@N`` and onnx2tf failed at the
first TF op named after one ("'Softmax@0' is not a valid scope name": a text-direction classifier got no TFLite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset


def _paddle_named(path: Path | None = None) -> Any:
    """x [1, 6] -> MatMul@0 -> Add@1 -> Softmax@0 (axis 1), named the way Paddle2ONNX names nodes."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(0, 1, (6, 3)).astype(np.float32), "fc_0.w_0"),
               numpy_helper.from_array(rng.normal(0, 1, (3,)).astype(np.float32), "fc_0.b_0")]
    nodes = [helper.make_node("MatMul", ["x", "fc_0.w_0"], ["h"], name="MatMul@0"),
             helper.make_node("Add", ["h", "fc_0.b_0"], ["logits"], name="Add@1"),
             helper.make_node("Softmax", ["logits"], ["y"], name="Softmax@0", axis=1),
             helper.make_node("Identity", ["y"], ["z"], name="Softmax_0")]
    graph = helper.make_graph(nodes, "paddle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 3])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if path is not None:
        onnx.save(model, str(path))
    return model


def test_names_outside_tensorflows_scope_pattern_are_rewritten_and_stay_unique() -> None:
    from edgepipe.export.onnx_node_names import scope_safe, scope_safe_node_names

    model = _paddle_named()
    assert scope_safe_node_names(model) == 3
    assert [n.name for n in model.graph.node] == ["MatMul_0", "Add_1", "Softmax_0_1", "Softmax_0"]
    assert scope_safe("/model.22/Concat_25") == "/model.22/Concat_25"  # PyTorch's names are kept
    assert [n.output[0] for n in model.graph.node][-1] == "z"  # tensor names are not touched


@pytest.mark.slow
def test_a_paddle_named_classifier_converts_and_computes_the_same(tmp_path: Path) -> None:
    from edgepipe.export.float_match import float_agreement
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = tmp_path / "paddle.onnx"
    _paddle_named(source)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(np.random.default_rng(1).normal(0, 1, (6, 6))
                                                         .astype(np.float32),), labels=None, sha256="")
    out = convert_onnx_to_tflite(source, tmp_path / "paddle.tflite", data, ["x"], tmp_path / "scratch")
    agreement = float_agreement(source, out, data)
    assert agreement.problem is None and agreement.cosine > 0.99999
