"""Ladder step (d), NNCF: skipped with the install line when NNCF is absent; with it, NNCF's corrected float model
(biases corrected, read back from its QDQ model) is quantized with the setting chosen so far, scored beside that
setting on the float model and kept only when it ranks above it. Mixed precision keeps a format's all-int8 artifact
that already held instead of raising its layers.

Real NNCF and ONNX Runtime on a generated Conv-ReLU-Conv whose channels span four decades; only the "is NNCF
installed" check is replaced where its absence is under test.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgepipe.artifacts import Artifact
from edgepipe.quantize import nncf_ptq
from edgepipe.quantize.ladder import LadderContext, LadderSettings, run_ladder
from edgepipe.quantize.steps import LADDER_STEPS
from edgepipe.quantize.steps import nncf as nncf_module
from edgepipe.quantize.steps.mixed import mixed_step
from tests.models.onnx_exports import conv_relu_conv
from tests.unit.quantize.conv_context import conv_context


def _context(folder: Path, steps: tuple[str, ...], precisions: tuple[str, ...] = ("int8",)) -> LadderContext:
    return conv_context(folder, LadderSettings(steps=steps, granularity="per-tensor", methods=("minmax",),
                                               granularities=("per-tensor",),
                                               precisions=precisions), bias=4.0)  # type: ignore[arg-type]


def test_nncf_is_step_d_between_equalization_and_mixed_precision() -> None:
    assert [name for name, _ in LADDER_STEPS] == ["ptq", "calibration", "equalize", "nncf", "mixed", "qat"]
    assert LadderSettings().steps == ("ptq", "calibration", "equalize", "nncf", "mixed", "qat")


def test_without_nncf_the_step_is_skipped_and_says_how_to_install_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(nncf_module, "nncf_missing", lambda: True)
    kept, report = run_ladder(_context(tmp_path, ("ptq", "nncf")))
    step = {s.step: s for s in report.steps}["nncf"]
    assert step.status == "skipped" and "NNCF is not installed: pip install 'nncf==3.4.0'" in step.note
    assert report.final_step == "ptq" and kept


def test_nncf_finds_the_package_without_importing_it() -> None:
    import importlib.util

    assert nncf_ptq.nncf_missing() == (importlib.util.find_spec("nncf") is None)


def test_nncf_corrected_model_is_quantized_with_the_chosen_setting_and_kept_only_when_it_ranks_above(
        tmp_path: Path) -> None:
    pytest.importorskip("nncf")
    context = _context(tmp_path, ("ptq", "calibration", "nncf"))
    kept, report = run_ladder(context)
    step = {s.step: s for s in report.steps}["nncf"]
    assert "NNCF bias correction of 2 layer(s)" in step.note, step.note  # both convolutions have a bias
    before, after = step.candidates
    assert before.recipe == "minmax/per-tensor/int8" and after.recipe == "NNCF-corrected, minmax/per-tensor/int8"
    assert before.sqnr_db is not None and after.sqnr_db is not None
    corrected = tmp_path / "ladder" / "nncf" / "model_corrected.onnx"
    assert [n.op_type for n in onnx.load(str(corrected)).graph.node] == ["Conv", "Relu", "Conv"]  # float again
    quantized = tmp_path / "ladder" / "nncf" / "model_int8.onnx"
    assert {"QuantizeLinear", "DequantizeLinear"} <= {n.op_type for n in onnx.load(str(quantized)).graph.node}
    ort.InferenceSession(str(quantized), providers=["CPUExecutionProvider"])
    if "kept on the" in step.note:  # later steps quantize the corrected float model
        assert after.sqnr_db >= before.sqnr_db and context.floats["onnx"] == corrected
    else:
        assert "not kept: it does not rank above" in step.note and context.floats["onnx"] == tmp_path / "model.onnx"
    assert kept


def test_a_qdq_model_reads_back_to_its_float_model() -> None:
    """Activation pairs become the tensor they round; a weight stored as integers becomes the source's float
    weight where that rounds to the same integers; the outputs keep their names."""
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(4, 3, 3, 3)).astype(np.float32)
    scale = (np.abs(weight).reshape(4, -1).max(1) / 127).astype(np.float32)
    integers = np.rint(weight / scale[:, None, None, None]).astype(np.int8)
    inits = [numpy_helper.from_array(integers, "q_output_w_1"), numpy_helper.from_array(scale, "s"),
             numpy_helper.from_array(np.zeros(4, np.int8), "z"),
             numpy_helper.from_array(np.array(0.02, np.float32), "xs"),
             numpy_helper.from_array(np.array(0, np.int8), "xz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["q_output_w_1", "s", "z"], ["wd"], axis=0),
             helper.make_node("Conv", ["xd", "wd"], ["c"]),
             helper.make_node("QuantizeLinear", ["c", "xs", "xz"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "xs", "xz"], ["y"])]
    shape_in, shape_out = [1, 3, 8, 8], [1, 4, 6, 6]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    assert nncf_ptq.strip_qdq(model, {"w": weight}) == 5
    assert [n.op_type for n in model.graph.node] == ["Conv", "Identity"]
    assert model.graph.node[1].output[0] == "y"
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    np.testing.assert_array_equal(values[model.graph.node[0].input[1]], weight)  # the source's weight, exactly
    x = {"x": rng.normal(size=(1, 3, 8, 8)).astype(np.float32)}
    ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, x)


def _attention(path: Path) -> onnx.ModelProto:
    """q = x Wq, k = x Wk; softmax(q k^T) x: two MatMuls of two activations, as attention has."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.normal(size=(8, 8)).astype(np.float32), n) for n in ("wq", "wk")]
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q"]), helper.make_node("MatMul", ["x", "wk"], ["k"]),
             helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]), helper.make_node("Softmax", ["s"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "x"], ["y"])]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])], weights)
    return helper.make_model(graph)


def test_attention_takes_smoothquant_and_a_conv_net_does_not(tmp_path: Path) -> None:
    assert nncf_ptq.is_transformer(_attention(tmp_path / "attention.onnx"))
    assert not nncf_ptq.is_transformer(onnx.load(str(conv_relu_conv(tmp_path / "conv.onnx"))))


def test_mixed_precision_keeps_the_artifact_of_a_format_that_already_held(tmp_path: Path) -> None:
    context = _context(tmp_path, ("ptq", "mixed"), precisions=("int8", "a16w8"))
    held = Artifact(tmp_path / "model.onnx", "onnx", "int8")
    context.held["onnx"] = ("nncf", held)
    result = mixed_step(context)
    assert result.artifacts == {"onnx": held}
    assert result.outcome.recipe == {"onnx": "kept from step nncf"} and not result.outcome.kept_layers
    assert "onnx: step nncf's all-int8 artifact already holds on the selection split; kept" in result.outcome.note
