"""QAT of ONNX inputs (ladder step d): onnx2torch, fake quantization, distillation, weights written back.

One real third-party model (PaddleOCR's v4 text recognizer, from its pinned wheel) at a small size,
and tiny hand-made graphs for the two ways conversion fails (an op onnx2torch has no converter for,
and an op whose converter needs torchvision).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from edgepipe.data.dataset import Dataset
from edgepipe.quantize.ladder import LadderContext, LadderSettings
from edgepipe.quantize.onnx_to_torch import ConversionFailed, convert_onnx
from edgepipe.quantize.qat_torch_step import torch_qat_step

pytestmark = pytest.mark.slow


def _dataset(path: Path, arrays: list[np.ndarray]) -> Dataset:
    return Dataset(path, tuple(arrays), None, "0" * 64)


def _tiny(tmp_path: Path, op: onnx.NodeProto, extra: list[onnx.TensorProto], out_type: int = TensorProto.FLOAT,
          pads: tuple[int, ...] = (1, 1, 1, 1), stride: int = 1) -> Path:
    """Conv (with its weights as a Constant node, as Paddle2ONNX writes them), then ``op``."""
    rng = np.random.default_rng(0)
    weight = helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(
        rng.normal(size=(4, 3, 3, 3)).astype(np.float32), "w"))
    conv = helper.make_node("Conv", ["x", "w"], ["c"], pads=list(pads), strides=[stride, stride])
    graph = helper.make_graph([weight, conv, op], "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                         [1, 3, 8, 8])],
                              [helper.make_tensor_value_info(op.output[0], out_type, None)], extra)
    path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def test_conversion_failure_names_the_op(tmp_path: Path) -> None:
    path = _tiny(tmp_path, helper.make_node("Hardmax", ["c"], ["y"], axis=1), [])
    data = _dataset(path, [np.random.default_rng(1).normal(size=(4, 1, 3, 8, 8)).astype(np.float32)[:, 0]])
    with pytest.raises(ConversionFailed, match="Hardmax"):
        convert_onnx(path, data)


def test_a_graph_whose_converter_needs_torchvision_is_a_reported_failure(tmp_path: Path) -> None:
    boxes = numpy_helper.from_array(np.random.default_rng(2).uniform(size=(1, 8, 4)).astype(np.float32), "boxes")
    scores = helper.make_node("ReduceMean", ["c"], ["scores"], axes=[3], keepdims=0)  # 4 classes x 8 boxes
    most = numpy_helper.from_array(np.array([3], np.int64), "most")
    nms = helper.make_node("NonMaxSuppression", ["boxes", "scores", "most"], ["y"])
    path = _tiny(tmp_path, nms, [boxes, most], TensorProto.INT64)
    model = onnx.load(str(path))
    model.graph.node.insert(2, scores)
    onnx.save(model, str(path))
    data = _dataset(path, [np.random.default_rng(1).normal(size=(4, 3, 8, 8)).astype(np.float32)])
    with pytest.raises(ConversionFailed, match="torchvision"):
        convert_onnx(path, data)
    assert "torchvision" not in sys.modules or hasattr(sys.modules["torchvision"], "__file__"), "placeholder gone"


def test_onnx_qat_over_its_modelled_budget_is_skipped_with_the_key_that_allows_it(tmp_path: Path) -> None:
    from edgepipe.load import load_model

    path, data = _relu_graph(tmp_path)
    settings = LadderSettings(steps=("ptq", "qat"), qat_epochs=3, qat_budget_s=1e-6)
    context = LadderContext(model=load_model(path), graph=None, floats={"onnx": path}, calibration=data,
                            selection=None, evaluation=None, train=None, threshold=1.0, settings=settings,
                            work=tmp_path / "ladder")
    qat = torch_qat_step(context)
    assert qat.outcome.status == "skipped" and not qat.artifacts
    assert "one pass over 8 calibration samples" in qat.outcome.note
    assert "quantization.qat_budget_s" in qat.outcome.note
    assert not (tmp_path / "ladder" / "qat" / "model_qat_float.onnx").exists()


def _relu_graph(tmp_path: Path, pads: tuple[int, ...] = (1, 1, 1, 1), stride: int = 1) -> tuple[Path, Dataset]:
    path = _tiny(tmp_path, helper.make_node("Relu", ["c"], ["y"]), [], pads=pads, stride=stride)
    model = onnx.load(str(path))
    side = (8 + pads[0] + pads[2] - 3) // stride + 1
    model.graph.output[0].CopyFrom(helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, side, side]))
    onnx.save(model, str(path))
    return path, _dataset(path, [np.random.default_rng(1).normal(size=(8, 3, 8, 8)).astype(np.float32)])


@pytest.mark.parametrize(("pads", "stride"), [((1, 1, 1, 1), 1), ((0, 0, 1, 1), 2)], ids=["same-pads", "tf2onnx-same"])
def test_the_fake_quantized_module_computes_what_orts_int8_model_computes(tmp_path: Path, pads: tuple[int, ...],
                                                                          stride: int) -> None:
    """Trained at the QuantizeLinear scales of ORT's own int8 model, the simulation is that model.

    Pads that differ per side (tf2onnx's stride-2 'SAME' convolution) become a Pad + Conv2d container in
    onnx2torch; its convolution was once left float: MediaPipe's hand landmark model's first layer."""
    import torch

    from edgepipe.metrics.compare import run_outputs
    from edgepipe.quantize.fake_quant_fx import insert_fake_quant
    from edgepipe.quantize.onnx_qdq import orts_quantization
    from edgepipe.quantize.onnx_to_torch import run_module
    from edgepipe.quantize.recipe import QuantRecipe

    path, data = _relu_graph(tmp_path, pads, stride)
    graph, reference = orts_quantization(path, data, QuantRecipe(), tmp_path)
    qparams = reference.activations
    assert set(qparams) == {"x", "y"}  # "c" only feeds the Relu, which ORT folds into the Conv's output range
    assert qparams["y"].zero_point == -128 and (qparams["y"].low, qparams["y"].high) == (-128, 127)
    trainable = convert_onnx(graph, data)
    quantizers = insert_fake_quant(trainable.module, True, reference, trainable.tensors, trainable.sources)
    assert len(quantizers) == 2 and all(q.active for q in quantizers)
    with torch.no_grad():
        simulated = np.concatenate([run_module(trainable.module, tuple(s))[0].numpy() for s in data.samples()])
    int8 = run_outputs(tmp_path / "tiny_minmax_per-channel_int8.onnx", data).arrays[0]
    floats = run_outputs(path, data).arrays[0]
    assert np.abs(int8 - floats).max() > 0.05  # int8 rounding is there to be simulated
    np.testing.assert_allclose(simulated.reshape(int8.shape), int8, atol=1e-6)


def test_tuned_weights_are_quantized_at_the_ranges_they_were_trained_at(tmp_path: Path) -> None:
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.qdq_params import activation_qparams
    from edgepipe.quantize.recipe import QuantRecipe

    path, data = _relu_graph(tmp_path)
    tuned = onnx.load(str(path))
    weight = next(n for n in tuned.graph.node if n.op_type == "Constant").attribute[0]
    weight.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight.t) * 3, "w"))
    (tmp_path / "qat").mkdir()
    tuned_path = tmp_path / "qat" / "tuned.onnx"
    onnx.save(tuned, str(tuned_path))
    recipe = QuantRecipe()
    original = activation_qparams(quantize_onnx(path, tmp_path / "a.onnx", data, recipe, tmp_path))
    fresh = activation_qparams(quantize_onnx(tuned_path, tmp_path / "b.onnx", data, recipe, tmp_path))
    kept = activation_qparams(quantize_onnx(tuned_path, tmp_path / "c.onnx", data, recipe, tmp_path, ranges_of=path))
    assert fresh["y"].scale == pytest.approx(3 * original["y"].scale, rel=1e-3)  # a new calibration follows the weights
    assert kept == original


def test_ranges_are_shared_when_the_source_was_quantized_for_another_target_group(tmp_path: Path) -> None:
    """Regression: a second target group's ladder gets a copy of the first group's int8 file
    (quantized_once), not its ranges cache; QAT's final quantization then read a missing cache
    (FileNotFoundError, exit 3, on BlazeFace built for two target groups)."""
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.qdq_params import activation_qparams
    from edgepipe.quantize.quantized_once import QuantizationMemo
    from edgepipe.quantize.recipe import QuantRecipe

    path, data = _relu_graph(tmp_path)
    recipe, memo = QuantRecipe(), QuantizationMemo()  # one build's memo, shared by its target groups
    first, second = tmp_path / "group-0", tmp_path / "group-1"
    first.mkdir(), second.mkdir()
    original = activation_qparams(quantize_onnx(path, first / "int8.onnx", data, recipe, first, memo=memo))
    quantize_onnx(path, second / "int8.onnx", data, recipe, second, memo=memo)  # the copy of group-0's file
    assert not list((second / "calibration_ranges").glob("*.json"))
    tuned = second / "qat"
    tuned.mkdir()
    shutil.copyfile(path, tuned / "tuned.onnx")
    kept = quantize_onnx(tuned / "tuned.onnx", tuned / "int8.onnx", data, recipe, second, ranges_of=path,
                         memo=memo)
    assert activation_qparams(kept) == original


def test_activation_qparams_read_a_renamed_graph_output(tmp_path: Path) -> None:
    from edgepipe.quantize.qdq_params import QParams, activation_qparams

    scale = numpy_helper.from_array(np.array(0.5, np.float32), "s")
    zero = numpy_helper.from_array(np.array(3, np.int8), "z")
    nodes = [helper.make_node("QuantizeLinear", ["y_QuantizeLinear_Input", "s", "z"], ["q"]),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("y_QuantizeLinear_Input", TensorProto.FLOAT,
                                                                         [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [scale, zero])
    path = tmp_path / "qdq.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    assert activation_qparams(path) == {"y": QParams(0.5, 3, -128, 127)}


def test_qat_that_only_hurts_keeps_the_weights_it_started_from(tmp_path: Path) -> None:
    from edgepipe.quantize.qat_onnx import OnnxQatRequest, run_onnx_qat
    from edgepipe.quantize.recipe import QuantRecipe

    path, data = _relu_graph(tmp_path)
    request = OnnxQatRequest(float_onnx=path, calibration=data, recipe=QuantRecipe(), samples=8, steps=40,
                             learning_rate=10.0)  # steps so large that every check is worse than the start
    result = run_onnx_qat(request, tmp_path)
    assert result.kept_step == 0 and [s for s, _ in result.held_out] == [0, 16, 32, 40]
    assert [s for s, _ in result.rates] == [1, 17, 33] and result.rates[1][1] == pytest.approx(10.0 / 3)
    before, after = onnx.load(str(path)), onnx.load(str(result.tuned_onnx))
    weight = next(n for n in before.graph.node if n.op_type == "Constant").attribute[0].t
    tuned = next(i for i in after.graph.initializer if i.name == "w") if after.graph.initializer else \
        next(n for n in after.graph.node if n.op_type == "Constant").attribute[0].t
    np.testing.assert_array_equal(numpy_helper.to_array(weight), numpy_helper.to_array(tuned))


@pytest.mark.realzoo
def test_onnx_qat_distils_a_real_recognizer_on_the_graph_ort_quantizes(tmp_path: Path) -> None:
    """PaddleOCR's v4 recognizer: trained where and as ORT quantizes it, never kept worse than where it started."""
    import torch

    from edgepipe.config import load_config
    from edgepipe.data.dataset import load_dataset
    from edgepipe.load import load_model
    from edgepipe.metrics.compare import run_outputs
    from edgepipe.quantize.fake_quant_fx import insert_fake_quant
    from edgepipe.quantize.onnx_qdq import orts_quantization
    from edgepipe.quantize.onnx_to_torch import run_module
    from edgepipe.quantize.qat_onnx import subset
    from edgepipe.quantize.steps.ptq import ptq_step
    from tests.realmodels.zoo import BY_NAME, DataSize, prepare

    config_path = prepare(BY_NAME["ppocr_v4_rec"], tmp_path, DataSize(calibration=8, evaluation=2))
    config = load_config(config_path)
    model = load_model(config_path.parent / config.model, input_shapes=config.input_shapes)
    float_path = tmp_path / "model.onnx"
    onnx.save(model.handle, str(float_path))
    calibration = load_dataset(config_path.parent / config.data.calibration, model.signature, role="calibration",
                               preprocess=config.preprocess)
    settings = LadderSettings(steps=("ptq", "qat"), qat_epochs=3, qat_learning_rate=1e-4)
    context = LadderContext(model=model, graph=None, floats={"onnx": float_path}, calibration=calibration,
                            selection=None, evaluation=None, train=None, threshold=1.0, settings=settings,
                            work=tmp_path / "ladder")
    ptq, qat = ptq_step(context), torch_qat_step(context)

    assert qat.outcome.status == "missed" and "distilled from the original float ONNX" in qat.outcome.note
    assert "at the scales of ORT's minmax int8 model" in qat.outcome.note and "held-out" in qat.outcome.note
    graph = onnx.load(str(qat.artifacts["onnx"].path)).graph
    assert sum(n.op_type == "QuantizeLinear" for n in graph.node) >= 20
    # trained on the graph ORT quantizes (HardSwish fused, scales folded): only its weights changed
    prepared_path = tmp_path / "ladder" / "model_prep.onnx"
    prepared = onnx.load(str(prepared_path))
    tuned = onnx.load(str(tmp_path / "ladder" / "qat" / "model_qat_float.onnx"))
    assert any(n.op_type == "HardSwish" for n in prepared.graph.node)
    assert [(n.op_type, list(n.input)) for n in prepared.graph.node] == \
        [(n.op_type, list(n.input)) for n in tuned.graph.node]
    # kept weights are never worse on the held-out samples than the float ones QAT started from
    ptq_fidelity = context.fidelity("onnx", ptq.artifacts["onnx"].path)
    qat_fidelity = context.fidelity("onnx", qat.artifacts["onnx"].path)
    assert qat_fidelity.cosine >= ptq_fidelity.cosine - 0.01, (ptq_fidelity, qat_fidelity, qat.outcome.note)

    # the fake quantization QAT trains under is (most of) the int8 model's own rounding, not another noise
    _, reference = orts_quantization(float_path, calibration, context.settings.start, tmp_path / "ladder")
    data = subset(calibration, 2)
    trainable = convert_onnx(prepared_path, data)
    insert_fake_quant(trainable.module, True, reference, trainable.tensors, trainable.sources)
    floats, int8 = run_outputs(float_path, data).arrays[0], run_outputs(ptq.artifacts["onnx"].path, data).arrays[0]
    with torch.no_grad():
        simulated = np.concatenate([run_module(trainable.module, tuple(s))[0].numpy() for s in data.samples()])
    int8_error = np.linalg.norm(int8 - floats)
    assert np.linalg.norm(simulated.reshape(int8.shape) - int8) < 0.6 * int8_error


@pytest.mark.thirdparty
def test_a_tflite_input_is_trained_through_its_onnx_form(tmp_path: Path) -> None:
    """MediaPipe's face detector (a float TFLite): QAT distils through the ONNX form tf2onnx made of it."""
    from edgepipe.config import load_config
    from edgepipe.data.dataset import load_dataset
    from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx
    from edgepipe.load import load_model
    from tests.realmodels.zoo import BY_NAME, DataSize, prepare

    config_path = prepare(BY_NAME["blazeface"], tmp_path, DataSize(calibration=4, evaluation=2))
    config = load_config(config_path)
    model = load_model(config_path.parent / config.model, input_shapes=config.input_shapes)
    assert model.format == "tflite"
    calibration = load_dataset(config_path.parent / config.data.calibration, model.signature, role="calibration",
                               preprocess=config.preprocess)
    float_onnx = convert_tflite_to_onnx(config_path.parent / config.model, tmp_path / "model.onnx",
                                        [list(s) for s in calibration.samples(2)]).path
    settings = LadderSettings(steps=("ptq", "qat"), qat_epochs=1, qat_learning_rate=1e-5)
    context = LadderContext(model=model, graph=None, floats={"onnx": float_onnx}, calibration=calibration,
                            selection=None, evaluation=None, train=None, threshold=1.0, settings=settings,
                            work=tmp_path / "ladder")
    qat = torch_qat_step(context)
    assert qat.outcome.title == "quantization-aware training (onnx2torch, distillation)", qat.outcome.note
    assert qat.outcome.status == "missed" and "distilled from the original float ONNX" in qat.outcome.note
    assert sum(n.op_type == "QuantizeLinear" for n in onnx.load(str(qat.artifacts["onnx"].path)).graph.node) >= 10
