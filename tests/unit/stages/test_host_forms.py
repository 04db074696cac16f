"""The host int8 forms: constant divisions become products (ORT has no quantized Div), values unchanged."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from edgepipe.quantize.host.forms import divisions_as_products


def _hardswish_model(path):
    """x · clip(x + 3, 0, 6) / 6, the way PaddlePaddle exports HardSwish, after a 1x1 convolution."""
    weight = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 2, 1, 1)).astype(np.float32), "w")
    consts = [numpy_helper.from_array(np.array(v, np.float32), n) for n, v in
              (("three", 3.0), ("zero", 0.0), ("six", 6.0), ("six_div", 6.0))]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("Add", ["c", "three"], ["a"]),
             helper.make_node("Clip", ["a", "zero", "six"], ["k"]),
             helper.make_node("Mul", ["c", "k"], ["m"]),
             helper.make_node("Div", ["m", "six_div"], ["y"])]
    graph = helper.make_graph(nodes, "hs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])], [weight, *consts])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def _run(path, x):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_constant_division_becomes_a_product_with_the_same_values(tmp_path):
    source = _hardswish_model(tmp_path / "hs.onnx")
    out = divisions_as_products(source, tmp_path / "hs_mul.onnx")
    assert out == tmp_path / "hs_mul.onnx"
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert "Div" not in ops and ops.count("Mul") == 2
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 5)).astype(np.float32) * 4
    np.testing.assert_allclose(_run(out, x), _run(source, x), rtol=1e-6, atol=1e-6)


def test_model_without_constant_division_is_left_alone(tmp_path, tiny):
    assert divisions_as_products(tiny["onnx"], tmp_path / "unused.onnx") == tiny["onnx"]
    assert not (tmp_path / "unused.onnx").exists()


def test_same_recipe_on_the_same_float_model_is_quantized_once(tiny, tmp_path, caplog):
    """A second quantization group reaching the same recipe gets a byte copy, not a second calibration."""
    from edgepipe.data.dataset import load_dataset
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.quantized_once import QuantizationMemo
    from edgepipe.quantize.recipe import QuantRecipe
    from edgepipe.runtimes import open_runner

    with open_runner(tiny["onnx"]) as runner:
        calibration = load_dataset(tiny["onnx_calib"], runner.signature, role="calibration")
    memo = QuantizationMemo()
    with caplog.at_level(logging.INFO, logger="edgepipe.quantize.quantized_once"):
        first = quantize_onnx(tiny["onnx"], tmp_path / "a.onnx", calibration, QuantRecipe(), tmp_path, memo=memo)
        second = quantize_onnx(tiny["onnx"], tmp_path / "b.onnx", calibration, QuantRecipe(), tmp_path, memo=memo)
        other = quantize_onnx(tiny["onnx"], tmp_path / "c.onnx", calibration, QuantRecipe(per_channel=False),
                              tmp_path, memo=memo)
        again = quantize_onnx(tiny["onnx"], tmp_path / "d.onnx", calibration, QuantRecipe(), tmp_path)
    reused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reused the quantization")]
    assert reused == [f"reused the quantization of {first} for b.onnx"]
    assert second.read_bytes() == first.read_bytes() and other.read_bytes() != first.read_bytes()
    assert again.read_bytes() == first.read_bytes()  # without the build's memo: quantized again, same bytes


def _stage_inputs(tmp_path, labels):
    from edgepipe.artifacts import Artifact
    from edgepipe.data.dataset import Dataset
    from edgepipe.load import load_model
    from edgepipe.stages.inputs import BuildInputs
    from edgepipe.targets import load_profile

    source = _hardswish_model(tmp_path / "model.onnx")
    x = np.random.default_rng(1).uniform(-4, 4, (8, 2, 5, 5)).astype(np.float32)
    data = Dataset(tmp_path / "data.npz", (x,), labels, "3" * 64)
    inputs = BuildInputs(model=load_model(source), calibration=data, evaluation=data,
                         targets=(load_profile("host-cpu"),))
    folder = tmp_path / "artifacts"
    folder.mkdir()
    return inputs, [Artifact(source, "onnx", "fp32")], folder


def test_a_host_form_that_misses_the_label_free_gate_is_left_out_with_the_reason(tmp_path):
    """The QOperator form (no QDQ model to shift to uint8 here) is plain min/max PTQ of the float model: when
    it misses accuracy.min_cosine on the calibration samples of a label-free build, it is not offered (it would
    fail the target whatever the ladder made of model_int8.onnx); with a gate it meets, or with labels, it stays."""
    from edgepipe.stage_log import StageLog
    from edgepipe.stages.host_forms import host_forms_stage

    inputs, artifacts, folder = _stage_inputs(tmp_path, None)
    stages = StageLog()
    forms, cosines = host_forms_stage(inputs, artifacts, folder, tmp_path, stages, min_cosine=1.0 + 1e-9)
    assert forms == [] and "model_int8_qoperator.onnx" not in cosines[0]  # (host, exact int8) cosines
    assert not (folder / "model_int8_qoperator.onnx").exists()
    (skipped,) = [r for r in stages.records if r.name == "host-forms:model_int8_qoperator.onnx"]
    assert skipped.status == "skipped" and "< accuracy.min_cosine" in skipped.detail
    kept, cosines = host_forms_stage(inputs, artifacts, folder, tmp_path, StageLog(), min_cosine=0.5)
    assert [f.key for f in kept] == ["model_int8_qoperator.onnx"] and cosines[0]["model_int8_qoperator.onnx"] > 0.5
    (tmp_path / "labelled").mkdir()
    labelled, _, _ = _stage_inputs(tmp_path / "labelled", np.zeros(8, np.int64))
    kept, _ = host_forms_stage(labelled, artifacts, folder, tmp_path, StageLog(), min_cosine=1.0 + 1e-9)
    assert [f.key for f in kept] == ["model_int8_qoperator.onnx"]  # top-1 gate: cosine is not the measure
