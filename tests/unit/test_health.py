"""The invariant checked after each stage: an artifact loads and keeps the source model's inputs and outputs, but for
outputs that are constants of the model, which a converter may leave out (onnx2tf folds and drops them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.artifacts import Artifact
from edgepipe.health import StageError, check_artifact
from edgepipe.tensors import Signature, TensorSpec


def _relu_onnx(path: Path, outputs: int) -> Path:
    """x [1, 4] -> Relu, written to ``outputs`` outputs (Identity copies)."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["y0"])]
    nodes += [helper.make_node("Identity", ["y0"], [f"y{i}"]) for i in range(1, outputs)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, [1, 4])
                               for i in range(outputs)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _source(constant: tuple[str, ...]) -> Signature:
    spec = TensorSpec("x", (1, 4), np.dtype("float32"))
    outputs = (TensorSpec("scores", (1, 4), np.dtype("float32")), TensorSpec("length", (1,), np.dtype("int32")))
    return Signature((spec,), outputs, constant_outputs=constant)


def test_an_artifact_may_leave_out_only_the_constant_outputs(tmp_path: Path) -> None:
    fewer = Artifact(_relu_onnx(tmp_path / "one.onnx", 1), "onnx", "fp32")
    check_artifact(fewer, _source(("length",)))
    with pytest.raises(StageError, match="1 outputs, the source model 1 / 2"):
        check_artifact(fewer, _source(()))
    more = Artifact(_relu_onnx(tmp_path / "three.onnx", 3), "onnx", "fp32")
    with pytest.raises(StageError, match="3 outputs"):
        check_artifact(more, _source(("length",)))
