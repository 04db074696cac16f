"""The ONNX model edgepipe gives rknn-toolkit2 2.5.0: Ifs known from static shapes inlined, infinite constants made
finite, long tensor names shortened and put back, a layer norm's default epsilon written out."""

from __future__ import annotations

from pathlib import Path

import pytest
from onnx import TensorProto, helper

from edgepipe.support import read_graph
from edgepipe.vendors.rknn.toolkit import Rknn, seeded_inputs
from tests.models.graphs import squeeze_if_onnx
from tests.models.probes.convolutions import (
    conv_then_onnx,
)
from tests.models.probes.heads import (
    LABELS_NAME,
    labelled_head_onnx,
)
from tests.models.probes.inputs import (
    runtime_if_onnx,
)
from tests.vendors.rknn.conftest import agreement_with_vendor


def test_an_if_known_from_static_shapes_is_replaced_by_its_branch_for_the_toolkit(rknn_installed: Rknn,
                                                                                   tmp_path: Path) -> None:
    """rknn-toolkit2 folds such an If as a constant, and everything after it: the model as exported does not
    compile; the copy edgepipe hands it (the branch inlined under the If's name) does, and every node agrees."""
    model = squeeze_if_onnx(tmp_path / "squeeze_if.onnx")
    (tmp_path / "raw").mkdir()
    answer, _ = rknn_installed.run_runner({"model": str(model), "inputs": seeded_inputs(read_graph(model), tmp_path),
                                           "target_platform": "rk3588", "workdir": str(tmp_path / "raw"),
                                           "accuracy": False}, tmp_path / "raw")
    assert answer["steps"]["build"] == -1 and "of model are constants" in str(answer["log"]), answer["raised"]
    cpu_ops, _ = agreement_with_vendor(model, "rk3588", tmp_path / "work")
    assert cpu_ops == {}


def test_an_infinite_constant_is_made_finite_for_the_toolkit(rknn_installed: Rknn, tmp_path: Path) -> None:
    """Max(-inf, x), the start of a running max (magika): the toolkit's quantizer turned the -inf into NaN and
    failed; with -3.4e38 in its place the graph compiles and the simulator's output matches the float model."""
    import numpy as np

    from tests.models.graphs import onnx_graph

    onnx_graph(tmp_path, [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                          helper.make_node("Max", ["floor", "c"], ["y"], name="running_max")],
               {"x": ([1, 4, 8, 8], TensorProto.FLOAT)}, {"y": ([1, 4, 8, 8], TensorProto.FLOAT)},
               {"w": np.full((4, 4, 1, 1), 0.25, np.float32), "floor": np.array(-np.inf, np.float32)})
    model = next(tmp_path.glob("*.onnx"))
    result = rknn_installed.compile(model, read_graph(model), {"target-platform": "rk3588"}, tmp_path / "w")
    assert result.status == "compiled", result.detail
    assert set(result.placement) == {"conv", "running_max"}
    assert float(result.extra["rknn_output_cosine"]) > 0.99


def test_long_tensor_names_are_shortened_everywhere_and_put_back(tmp_path: Path) -> None:
    """The copy the toolkit compiles renames tensors over MAX_TENSOR_NAME characters, in the branches of an If
    too; node names stay, and the toolkit's text reads with the model's own names again."""
    import onnx

    from edgepipe.vendors.rknn.model import MAX_TENSOR_NAME, toolkit_model

    model = runtime_if_onnx(tmp_path / "if.onnx")
    long = "flat_" + "x" * MAX_TENSOR_NAME
    proto = onnx.load(str(model))
    for graph in (proto.graph, *(attr.g for attr in proto.graph.node[-1].attribute)):
        for node in graph.node:
            node.input[:] = [long if name == "flat" else name for name in node.input]
            node.output[:] = [long if name == "flat" else name for name in node.output]
    onnx.save(proto, str(model))
    prepared = toolkit_model(model, read_graph(model), tmp_path / "named.onnx")
    assert prepared.original_names == {"edgepipe_tensor_0": long} and prepared.runtime_ifs == ("verify",)
    copy = onnx.load(str(prepared.path))
    onnx.checker.check_model(copy)
    assert [n.name for n in copy.graph.node] == ["flatten", "gemm", "sigmoid", "above", "condition", "verify"]
    then = next(attr.g for attr in copy.graph.node[-1].attribute if attr.name == "then_branch")
    assert copy.graph.node[0].output[0] == then.node[0].input[0] == "edgepipe_tensor_0"
    assert prepared.original_text("[Reshape] edgepipe_tensor_0-rs 0.99") == f"[Reshape] {long}-rs 0.99"


def test_an_output_named_with_a_long_json_compiles_and_agrees(rknn_installed: Rknn, tmp_path: Path) -> None:
    """openWakeWord's timer names its output with a 139-character JSON of its classes: the toolkit cuts the name
    to 128 characters, then looks it up whole (KeyError in its quantizer); the shortened copy compiles, every
    node agrees, and the accuracy table names the output as the model does."""
    model = labelled_head_onnx(tmp_path / "head.onnx")
    (tmp_path / "raw").mkdir()
    answer, _ = rknn_installed.run_runner({"model": str(model), "inputs": seeded_inputs(read_graph(model), tmp_path),
                                           "target_platform": "rk3588", "workdir": str(tmp_path / "raw"),
                                           "accuracy": False}, tmp_path / "raw")
    assert answer["steps"]["build"] == -1 and "KeyError" in answer["raised"]["build"], answer["raised"]
    cpu_ops, result = agreement_with_vendor(model, "rk3588", tmp_path / "work")
    assert cpu_ops == {} and result.compared == 5
    assert LABELS_NAME in str(result.extra["rknn_worst_layers"])


@pytest.mark.parametrize("target", ["rk3588", "rk3576"])
def test_a_layer_norm_without_epsilon_is_given_the_default_and_runs_on_the_npu(rknn_installed: Rknn, tmp_path: Path,
                                                                              target: str) -> None:
    """The toolkit's LayerNormalization rewrite fails on a node that leaves ``epsilon`` to its default (KeyError;
    with the rule disabled it ran on the CPU): the copy the toolkit compiles states the default, and it runs on the
    NPU as edgepipe says."""
    import numpy as np
    import onnx

    from edgepipe.vendors.rknn.model import toolkit_model

    constants = {"scale": np.ones(16, np.float32), "bias": np.zeros(16, np.float32)}
    model = conv_then_onnx(tmp_path / "ln.onnx", [1, 64, 16], "LayerNormalization", constants, axis=-1)
    prepared = toolkit_model(model, read_graph(model), tmp_path / "named.onnx")
    norm = next(n for n in onnx.load(str(prepared.path)).graph.node if n.op_type == "LayerNormalization")
    assert [a.f for a in norm.attribute if a.name == "epsilon"] == [np.float32(1e-5)]
    assert agreement_with_vendor(model, target, tmp_path / "w")[0] == {}
