"""Model preparation for what real exports contain: opset < 13, shared-name dims, 2-D biases, shipped int8.

Built on :func:`tests.models.onnx_exports.paddle_like` (the shape of a paddle2onnx export) and on
silero-vad (a real model) quantized with ``onnxruntime.quantization.quantize_dynamic``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from edgepipe.data.dataset import Dataset
from edgepipe.errors import ModelLoadError
from edgepipe.export.onnx_dequantized import strip_qdq
from edgepipe.load import load_model
from edgepipe.load.onnx_quantized import quantized_kind
from edgepipe.metrics.label_free import cosine
from edgepipe.quantize.onnx_prepare import default_opset, prepare_onnx, upgrade_opset
from edgepipe.quantize.onnx_qdq import quantize_onnx
from edgepipe.quantize.recipe import QuantRecipe
from tests.conftest import run_cli
from tests.models.onnx_exports import image_batches, paddle_like, shared_bias

SHAPE = [1, 3, 32, 48]


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The paddle-like model loaded with ``input_shapes`` and saved as the build's float artifact would be."""
    folder = tmp_path_factory.mktemp("paddle")
    model = load_model(paddle_like(folder / "source.onnx"), input_shapes={"x": SHAPE})
    onnx.save(model.handle, str(folder / "model.onnx"))
    return folder / "model.onnx"


def _dataset(count: int, seed: int) -> Dataset:
    return Dataset(Path(f"images_{seed}.npz"), (image_batches(count, 32, 48, seed),), None, "0" * 64)


def _outputs(path: Path, data: Dataset) -> list[np.ndarray]:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    runs = [session.run(None, {"x": sample[0]}) for sample in data.samples()]
    return [np.concatenate([r[i] for r in runs]) for i in range(len(runs[0]))]


def test_shared_name_dims_and_minus_one_batch_are_fixed(tmp_path: Path) -> None:
    """``x [-1, 3, ?, ?]`` with ``?`` standing for both 32 and 48: once 'Can't replace existing fixed size'."""
    source = paddle_like(tmp_path / "source.onnx")
    model = load_model(source, input_shapes={"x": SHAPE})
    assert model.signature.inputs[0].shape == tuple(SHAPE)
    free = load_model(source)  # no input_shapes: the -1 batch becomes 1, '?' stays for the user to fix
    assert free.signature.inputs[0].shape == (1, 3, None, None)
    with pytest.raises(ModelLoadError, match="fixes to 3"):
        load_model(source, input_shapes={"x": [1, 4, 32, 48]})


def test_opset_11_gets_per_channel_qdq_that_loads_and_follows_float(fixed: Path, tmp_path: Path) -> None:
    """Once: 'DequantizeLinear … Unrecognized attribute: axis'; and the 2-D Gemm bias 'truth value … ambiguous'."""
    calibration = _dataset(16, 0)
    prepared = prepare_onnx(fixed, tmp_path / "model_prep.onnx", list(calibration.samples(4)))
    assert prepared.per_channel and prepared.opset == 13
    assert any(n.startswith("opset 11 upgraded to 13") for n in prepared.notes)
    assert any("reshaped to (N,)" in n for n in prepared.notes)
    assert json.loads((tmp_path / "model_prep.json").read_text())["notes"] == prepared.notes  # cached with reasons
    int8 = quantize_onnx(fixed, tmp_path / "model_int8.onnx", calibration, QuantRecipe(per_channel=True), tmp_path)
    graph = onnx.load(str(int8)).graph
    axes = [a for n in graph.node if n.op_type == "DequantizeLinear" for a in n.attribute if a.name == "axis"]
    assert len(axes) >= 3  # per-channel weights of the convolutions (and the fused Gemm)
    evaluation = _dataset(8, 1)
    reference, got = _outputs(fixed, evaluation), _outputs(int8, evaluation)
    assert cosine(reference[1], got[1]) > 0.99  # the sigmoid map
    assert cosine(reference[0], got[0]) > 0.95  # the class probabilities


def test_refused_upgrade_keeps_the_model_and_says_why(fixed: Path) -> None:
    """An upgrade whose outputs cannot be checked (inputs of the wrong shape) is refused with ORT's reason."""
    model = onnx.load(str(fixed))
    wrong = [[np.zeros((1, 3, 8, 8, 1), np.float32)]]
    kept, note = upgrade_opset(model, wrong)
    assert kept is model and default_opset(kept) == 11
    assert "upgrade rejected" in note and "ONNX Runtime" in note


def test_static_qdq_input_gets_a_float_reference_without_qdq(fixed: Path, tmp_path: Path) -> None:
    int8 = quantize_onnx(fixed, tmp_path / "shipped.onnx", _dataset(16, 0), QuantRecipe(), tmp_path)
    model = onnx.load(str(int8))
    assert quantized_kind(model).form == "qdq"
    reference, weights, pairs, _ = strip_qdq(model)
    assert weights >= 4 and pairs >= 4
    assert not {"QuantizeLinear", "DequantizeLinear"} & {n.op_type for n in reference.graph.node}
    onnx.save(reference, str(tmp_path / "reference.onnx"))
    data = _dataset(4, 2)
    floats, stripped = _outputs(fixed, data), _outputs(tmp_path / "reference.onnx", data)
    assert cosine(floats[1], stripped[1]) > 0.99  # only the int8 weight (and int32 bias) rounding differs


@pytest.mark.slow
def test_dynamic_quantized_real_model_is_dequantized_and_quantized_again(tmp_path: Path) -> None:
    """silero-vad through quantize_dynamic (ConvInteger, DynamicQuantizeLSTM): with calibration data it is read back to
    float, said so (the float model computes what the shipped one does), and quantized again as static QDQ, whose
    fidelity the build's gate then judges like any other int8 model."""
    from onnxruntime.quantization import quantize_dynamic

    from edgepipe.graph.onnx_edit import constants_to_initializers
    from edgepipe.metrics.similarity import cosine
    from tests.realmodels import fetch
    from tests.realmodels.data.audio import silero_stream

    source = onnx.load(str(fetch.silero()))
    constants_to_initializers(source)  # quantize_dynamic only quantizes weights stored as initializers
    onnx.save(source, str(tmp_path / "float.onnx"))
    dynamic = tmp_path / "silero_dynamic.onnx"
    quantize_dynamic(str(tmp_path / "float.onnx"), str(dynamic), op_types_to_quantize=["Conv", "LSTM", "MatMul"])
    assert quantized_kind(onnx.load(str(dynamic))).form == "dynamic"
    stream = silero_stream(dynamic, 24)
    np.savez(tmp_path / "calibration.npz", **{k: v[:16] for k, v in stream.items()})
    np.savez(tmp_path / "evaluation.npz", **{k: v[16:] for k, v in stream.items()})
    proc = run_cli("build", "-q", "--model", str(dynamic), "--calib", "calibration.npz", "--eval",
                   "evaluation.npz", "--no-cache", "-o", "out", cwd=tmp_path)
    assert proc.returncode in (0, 1, 2), proc.stdout + proc.stderr  # never 3
    folder = tmp_path / "out" / "silero_dynamic" / "host-cpu"
    report = json.loads((folder / "report.json").read_text())
    export = [s for s in report["stages"] if s["name"] == "export"]
    assert any("dequantized to float by edgepipe (ConvInteger" in s["detail"] for s in export), export
    assert {a["path"]: a["route"] for a in report["artifacts"]}["model.onnx"] == "dequantized by edgepipe"
    assert quantized_kind(onnx.load(str(folder / "model.onnx"))).form == "float"
    assert quantized_kind(onnx.load(str(folder / "model_int8.onnx"))).form == "qdq"
    shipped = ort.InferenceSession(str(dynamic), providers=["CPUExecutionProvider"])
    read_back = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    feeds = [{"input": stream["input"][k:k + 1], "state": stream["state"][k]} for k in range(16, 24)]
    assert cosine([shipped.run(None, f)[0] for f in feeds], [read_back.run(None, f)[0] for f in feeds]) > 0.99
    assert report["accuracy"]["label_free"] is not None, report["accuracy"]  # the int8 model was judged


def test_incomplete_symbolic_shape_inference_falls_back_and_leaves_the_working_folder_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ORT's symbolic shape inference gives up on dims it cannot merge (here: Add of two differently named dims)
    and then saves its partial model into the current folder; edgepipe falls back and writes nothing there."""
    graph = onnx.helper.make_graph(
        [onnx.helper.make_node("Add", ["x", "y"], ["z"])], "unmergeable",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["a"]),
         onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["b"])],
        [onnx.helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, None)])
    source = tmp_path / "model.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), str(source))
    user_folder = tmp_path / "cwd"
    user_folder.mkdir()
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(user_folder)

    prepared = prepare_onnx(source, tmp_path / "out" / "prepared.onnx")

    assert prepared.path.exists()
    assert any("symbolic shape inference failed" in note for note in prepared.notes)
    assert list(user_folder.iterdir()) == []


def test_a_type_error_inside_symbolic_shape_inference_falls_back_too(tmp_path: Path) -> None:
    """Fracast (held out): a DFT with a dft_length input leaves its output shape unknown to ORT's symbolic
    shape inference, which then raises a TypeError on the Slice after it; the quantizer failed on the whole model.
    edgepipe pre-processes with ONNX shape inference instead, and the model quantizes."""
    helper = onnx.helper
    ints = {"axes": [-1], "starts": [0], "ends": [1], "slice_axes": [-1]}
    inits = [onnx.numpy_helper.from_array(np.array(v, np.int64), k) for k, v in ints.items()]
    inits.append(onnx.numpy_helper.from_array(np.array(64, np.int64), "length"))
    graph = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes"], ["x3"]),
         helper.make_node("DFT", ["x3", "length"], ["spectrum"], onesided=1, axis=1),
         helper.make_node("Slice", ["spectrum", "starts", "ends", "slice_axes"], ["real"]),
         helper.make_node("Mul", ["real", "real"], ["power"]),
         helper.make_node("Squeeze", ["power", "axes"], ["y"])], "periodogram",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 33])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    source = tmp_path / "periodogram.onnx"
    onnx.save(model, str(source))
    prepared = prepare_onnx(source, tmp_path / "prepared.onnx")
    assert any("TypeError in symbolic_shape_infer" in note for note in prepared.notes), prepared.notes
    data = Dataset(tmp_path / "x.npz", (np.random.default_rng(0).normal(size=(8, 64)).astype(np.float32),), None, "t")
    int8 = quantize_onnx(source, tmp_path / "int8.onnx", data, QuantRecipe(per_channel=True), tmp_path)
    assert ort.InferenceSession(str(int8)).run(None, {"x": data.inputs[0][:1]})[0].shape == (1, 33)


def test_a_shared_bias_never_takes_an_activation_name(tmp_path: Path) -> None:
    """Seen on a held-out tf2onnx model (Basic Pitch): the int8 ONNX failed to load ("Concat ... same rank")."""
    source = shared_bias(tmp_path / "model.onnx", SHAPE)
    prepared = prepare_onnx(source, tmp_path / "model_prep.onnx")
    assert any("bias initializers shared" in note for note in prepared.notes), prepared.notes
    data = _dataset(8, 0)
    int8 = quantize_onnx(source, tmp_path / "model_int8.onnx", data, QuantRecipe(per_channel=True), tmp_path)
    (reference,), (quantized,) = _outputs(source, data), _outputs(int8, data)  # loads: the graph is intact
    assert quantized.shape == reference.shape and cosine(reference, quantized) > 0.99


def test_fixed_inputs_leave_no_stale_symbolic_shapes(tmp_path: Path) -> None:
    """PyTorch annotates values with formulas of the input dims (a YOLO head's ``floor(height/2 - 1/2)*...``).

    Seen on a held-out YOLOv8 export: after ``input_shapes`` its output still declared a formula. The stale
    annotations go, and the output gets the static shape inference finds (through a Reshape's -1 too).
    """
    from onnx import helper, numpy_helper

    weight = numpy_helper.from_array(np.full((8, 3, 3, 3), 0.1, np.float32), "w")
    half = "floor(height/2 - 1/2) + 1"
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Constant", [], ["minus_one"], value=numpy_helper.from_array(np.array([1, 8, -1]))),
             helper.make_node("Reshape", ["c", "minus_one"], ["y"])]
    graph = helper.make_graph(
        nodes, "stale", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["batch", 8, f"({half})*(floor(width/2))"])],
        [weight], value_info=[helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, ["batch", 8, half, "w2"])])
    source = tmp_path / "yolo_like.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(source))
    model = load_model(source, input_shapes={"x": [1, 3, 32, 48]}).handle
    (output,) = model.graph.output
    assert [d.dim_value for d in output.type.tensor_type.shape.dim] == [1, 8, 16 * 24]
    assert not [v.name for v in model.graph.value_info if any(d.dim_param for d in v.type.tensor_type.shape.dim)]


def test_an_output_declared_with_the_wrong_rank_gets_its_inferred_shape(tmp_path: Path) -> None:
    """madmom's converter declares every output as ``[output_0_dim_0]`` (rank 1) whatever its rank; a [100, 88]
    piano roll kept that placeholder after ``input_shapes``, so the support check put its last Squeeze on the
    CPU for a "dynamic" shape that rknn-toolkit2 (which infers it) runs on the NPU."""
    from onnx import helper, numpy_helper

    nodes = [helper.make_node("Unsqueeze", ["x", "axes"], ["u"]), helper.make_node("Relu", ["u"], ["r"]),
             helper.make_node("Squeeze", ["r", "axes"], ["y"])]
    graph = helper.make_graph(
        nodes, "wrong_rank", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["input_dim_0", 88])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["output_0_dim_0"])],
        [numpy_helper.from_array(np.array([1], np.int64), "axes")])
    source = tmp_path / "madmom_like.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(source))
    model = load_model(source, input_shapes={"x": [100, 88]}).handle
    (output,) = model.graph.output
    assert [d.dim_value for d in output.type.tensor_type.shape.dim] == [100, 88]
