"""If nodes whose condition is known once the input shapes are static, inlined the way rknn-toolkit2 needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from edgepipe.graph.onnx_branches import inline_known_branches, known_conditions
from tests.models.graphs import squeeze_if_onnx


def test_a_known_branch_is_inlined_under_the_if_name_with_the_same_outputs(tmp_path: Path) -> None:
    path = squeeze_if_onnx(tmp_path / "m.onnx")
    model = onnx.load(str(path))
    assert known_conditions(model) == {"is_one": True}
    assert inline_known_branches(model) == ["if"]
    inlined = [n for n in model.graph.node if n.name == "if"]
    assert [n.op_type for n in inlined] == ["Squeeze"] and not any(n.op_type == "If" for n in model.graph.node)
    assert "axes" in {init.name for init in model.graph.initializer}  # the branch's Constant became an initializer
    x = np.random.default_rng(0).random((1, 8, 1, 16), dtype=np.float32)
    want = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    got = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


def test_a_condition_only_known_at_run_time_is_left_alone(tmp_path: Path) -> None:
    model = onnx.load(str(squeeze_if_onnx(tmp_path / "m.onnx")))
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "t"  # the squeezed dim is no longer known
    assert known_conditions(model) == {}
    assert inline_known_branches(model) == [] and any(n.op_type == "If" for n in model.graph.node)
