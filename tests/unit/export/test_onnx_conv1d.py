"""Conv1Ds written as 2-D Convs over an inserted unit axis (tf2onnx's Keras Conv1D, Paddle's conv1d) are folded into
1-D Convs before onnx2tf (edgepipe.export.onnx_conv1d): onnx2tf failed on the chain in ``tf.squeeze`` or
``tf.nn.convolution`` (humanactivity's HAR CNN, BeliefPPG, CI-SpliceAI, slovorez, PP-OCRv6 tiny got no TFLite)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset

STEPS, CHANNELS, FILTERS = 24, 6, 12  # FILTERS: a multiple of every group count used


def _axes(name: str, axes: list[int], opset: int) -> tuple[dict[str, Any], list[str], list[Any]]:
    """An Unsqueeze's or Squeeze's ``axes`` as the opset writes them: (attributes, extra inputs, initializers)."""
    from onnx import numpy_helper

    if opset < 13:
        return {"axes": axes}, [], []
    return {}, [name], [numpy_helper.from_array(np.array(axes, np.int64), name)]


def _conv1d_chain(x: str, y: str, prefix: str, channels: int, *, nwc: bool, opset: int = 17, kernel: int = 3,
                  stride: int = 1, dilation: int = 1, pads: tuple[int, int] | None = (1, 1), auto_pad: str = "",
                  group: int = 1, bias: bool = True, seed: int = 0) -> tuple[list[Any], list[Any]]:
    """tf2onnx's Conv1D from ``x`` to ``y``: with ``nwc`` the [N, W, C] sequence is Unsqueezed at -3, Transposed to
    NCHW and back after the Conv, and Squeezed at 1 ([N, W', F] out); else [N, C, W] is Unsqueezed and Squeezed at
    2 (Paddle's form, and tf2onnx's once its optimizer has moved the Transposes away)."""
    from onnx import helper, numpy_helper

    rng = np.random.default_rng(seed)
    weight = rng.normal(0, 0.5, (FILTERS, channels // group, 1, kernel)).astype(np.float32)
    constants = [numpy_helper.from_array(weight, f"{prefix}_w")]
    conv_in = [f"{prefix}_nchw", f"{prefix}_w"]
    if bias:
        constants.append(numpy_helper.from_array(rng.normal(0, 0.5, FILTERS).astype(np.float32), f"{prefix}_b"))
        conv_in.append(f"{prefix}_b")
    attrs: dict[str, Any] = {"kernel_shape": [1, kernel], "strides": [1, stride], "dilations": [1, dilation],
                             "group": group}
    if auto_pad:
        attrs["auto_pad"] = auto_pad
    elif pads is not None:
        attrs["pads"] = [0, pads[0], 0, pads[1]]
    unsqueeze_attrs, unsqueeze_in, unsqueeze_const = _axes(f"{prefix}_uaxes", [-3 if nwc else 2], opset)
    squeeze_attrs, squeeze_in, squeeze_const = _axes(f"{prefix}_saxes", [1 if nwc else 2], opset)
    nodes = [helper.make_node("Unsqueeze", [x, *unsqueeze_in], [f"{prefix}_4d" if nwc else f"{prefix}_nchw"],
                              name=f"{prefix}/ExpandDims", **unsqueeze_attrs)]
    if nwc:
        nodes.append(helper.make_node("Transpose", [f"{prefix}_4d"], [f"{prefix}_nchw"], perm=[0, 3, 1, 2],
                                      name=f"{prefix}/to_nchw"))
    nodes.append(helper.make_node("Conv", conv_in, [f"{prefix}_conv"], name=f"{prefix}/Conv1D", **attrs))
    squeezed = f"{prefix}_conv"
    if nwc:
        nodes.append(helper.make_node("Transpose", [f"{prefix}_conv"], [f"{prefix}_nhwc"], perm=[0, 2, 3, 1],
                                      name=f"{prefix}/to_nhwc"))
        squeezed = f"{prefix}_nhwc"
    nodes.append(helper.make_node("Squeeze", [squeezed, *squeeze_in], [y], name=f"{prefix}/Squeeze", **squeeze_attrs))
    return nodes, [*constants, *unsqueeze_const, *squeeze_const]


def _model(nodes: list[Any], constants: list[Any], x_shape: list[int], opset: int = 17) -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph(nodes, "conv1d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset >= 13 else 6
    return model


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _input(nwc: bool, batch: int = 1) -> np.ndarray:
    shape = (batch, STEPS, CHANNELS) if nwc else (batch, CHANNELS, STEPS)
    return np.random.default_rng(7).normal(0, 1, shape).astype(np.float32)


VARIANTS = [  # (nwc, opset, stride, dilation, pads, auto_pad, group, bias)
    (True, 17, 1, 1, (1, 1), "", 1, True),  # Keras padding="same", kernel 3
    (True, 17, 2, 1, (0, 0), "", 1, False),  # strided, valid, no bias
    (True, 17, 1, 3, (3, 3), "", 1, True),  # dilated (CI-SpliceAI's residual blocks)
    (False, 17, 1, 1, (2, 0), "", 1, True),  # causal padding
    (False, 17, 1, 1, None, "SAME_UPPER", 1, True),  # slovorez: auto_pad
    (False, 17, 2, 1, None, "SAME_LOWER", 1, False),
    (False, 17, 1, 1, None, "VALID", 2, True),  # grouped
    (False, 11, 1, 1, (1, 1), "", CHANNELS, True),  # depthwise, axes as attributes (Paddle, opset 11)
    (True, 11, 3, 2, (1, 2), "", 3, False),
]


@pytest.mark.parametrize(("nwc", "opset", "stride", "dilation", "pads", "auto_pad", "group", "bias"), VARIANTS)
def test_unit_axis_conv1ds_fold_into_1d_convs_that_compute_the_same(nwc: bool, opset: int, stride: int,
                                                                    dilation: int, pads: tuple[int, int] | None,
                                                                    auto_pad: str, group: int, bias: bool) -> None:
    from edgepipe.export.onnx_conv1d import fold_conv1d_chains

    nodes, constants = _conv1d_chain("x", "y", "c", CHANNELS, nwc=nwc, opset=opset, stride=stride,
                                     dilation=dilation, pads=pads, auto_pad=auto_pad, group=group, bias=bias)
    x_shape = [1, STEPS, CHANNELS] if nwc else [1, CHANNELS, STEPS]
    model = _model(nodes, constants, x_shape, opset)
    x = _input(nwc)
    want = _run(model, x)
    assert fold_conv1d_chains(model) == 1
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    assert [n.op_type for n in model.graph.node] == (["Transpose", "Conv", "Transpose"] if nwc else ["Conv"])
    assert convs[0].name == "c/Conv1D" and model.graph.node[-1].output[0] == "y"
    assert {t.name for t in model.graph.initializer} == {"c_w_conv1d", *(["c_b"] if bias else [])}
    got = _run(model, x)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_chains_sharing_an_unsqueeze_share_one_transpose() -> None:
    """CI-SpliceAI reads its one-hot input into five parallel Conv1Ds: one Transpose to [N, C, W] serves them all,
    and the Unsqueeze nothing reads any more is gone."""
    from onnx import helper

    from edgepipe.export.onnx_conv1d import fold_conv1d_chains

    first, constants = _conv1d_chain("x", "a", "c", CHANNELS, nwc=True, seed=1)
    second, more = _conv1d_chain("x", "b", "d", CHANNELS, nwc=True, seed=2)
    second[1].input[0] = first[0].output[0]  # the second chain's Transpose reads the first chain's Unsqueeze
    nodes = [*first, *second[1:], helper.make_node("Add", ["a", "b"], ["y"], name="sum")]
    model = _model(nodes, [*constants, *(c for c in more if c.name != "d_uaxes")], [1, STEPS, CHANNELS])
    x = _input(True)
    want = _run(model, x)
    assert fold_conv1d_chains(model) == 2
    assert [n.op_type for n in model.graph.node].count("Transpose") == 3  # one in, one out of each Conv
    assert "Unsqueeze" not in {n.op_type for n in model.graph.node}
    np.testing.assert_allclose(_run(model, x), want, rtol=1e-5, atol=1e-5)


def test_an_unsqueeze_read_elsewhere_stays() -> None:
    from onnx import helper

    from edgepipe.export.onnx_conv1d import fold_conv1d_chains

    nodes, constants = _conv1d_chain("x", "c_out", "c", CHANNELS, nwc=False)
    nodes += [helper.make_node("ReduceMean", ["c_nchw"], ["m"], axes=[1, 2, 3], keepdims=0, name="mean"),
              helper.make_node("Add", ["c_out", "m"], ["y"], name="add")]
    model = _model(nodes, constants, [1, CHANNELS, STEPS])
    x = _input(False)
    want = _run(model, x)
    assert fold_conv1d_chains(model) == 1
    assert [n.op_type for n in model.graph.node] == ["Unsqueeze", "Conv", "ReduceMean", "Add"]
    np.testing.assert_allclose(_run(model, x), want, rtol=1e-5, atol=1e-5)


def _set_kernel(conv: Any, constants: list[Any], kernel: list[int], pads: list[int]) -> None:
    """Give the chain's Conv (weights ``c_w``) a ``kernel`` of fresh weights and ``pads``."""
    from onnx import numpy_helper

    weight = np.random.default_rng(0).normal(0, 1, (FILTERS, CHANNELS, *kernel)).astype(np.float32)
    constants[0].CopyFrom(numpy_helper.from_array(weight, "c_w"))
    for attribute in conv.attribute:
        if attribute.name == "kernel_shape":
            attribute.ints[:] = kernel
        if attribute.name == "pads":
            attribute.ints[:] = pads


def _negative(case: str) -> Any:
    """A chain that is not a 1-D convolution over the unit axis, or whose parts are read elsewhere."""
    from onnx import helper, numpy_helper

    nodes, constants = _conv1d_chain("x", "y", "c", CHANNELS, nwc=False)
    conv = next(n for n in nodes if n.op_type == "Conv")
    if case == "unit axis padded":  # a 3 x k kernel over the padded unit axis
        _set_kernel(conv, constants, [3, 3], [1, 1, 1, 1])
    elif case == "conv output read elsewhere":
        nodes.append(helper.make_node("Identity", ["c_conv"], ["z"], name="also"))
        return _model(nodes, constants, [1, CHANNELS, STEPS]), "z"
    elif case == "weights computed":
        nodes.insert(0, helper.make_node("Neg", ["c_w"], ["c_w_neg"], name="neg"))
        conv.input[1] = "c_w_neg"
    elif case == "squeezes all unit axes":
        squeeze = nodes[-1]
        del squeeze.input[1:]
    elif case == "unit axis last":  # Unsqueeze at 3, a k x 1 kernel: a convolution over the H axis
        _set_kernel(conv, constants, [3, 1], [1, 0, 1, 0])
        for name in ("c_uaxes", "c_saxes"):
            next(c for c in constants if c.name == name).CopyFrom(numpy_helper.from_array(np.array([3]), name))
    return _model(nodes, constants, [1, CHANNELS, STEPS]), None


@pytest.mark.parametrize("case", ["unit axis padded", "conv output read elsewhere", "weights computed",
                                  "squeezes all unit axes", "unit axis last"])
def test_other_chains_are_left_untouched(case: str) -> None:
    from edgepipe.export.onnx_conv1d import fold_conv1d_chains

    model, extra_output = _negative(case)
    if extra_output:
        from onnx import TensorProto, helper

        model.graph.output.append(helper.make_tensor_value_info(extra_output, TensorProto.FLOAT, None))
    _run(model, _input(False))  # a valid model ONNX Runtime runs
    before = model.SerializeToString()
    assert fold_conv1d_chains(model) == 0
    assert model.SerializeToString() == before


def _keras_conv1d_stack(path: Path) -> Path:
    """Two Keras Conv1Ds (padding "same", then a dilated one) with ReLUs as tf2onnx writes them: the first reads the
    [N, W, C] input through Unsqueeze and Transpose, the second the [N, C, W] output of the first, and the result is
    transposed back to Keras's [N, W, F]."""
    import onnx
    from onnx import helper, numpy_helper

    first, constants = _conv1d_chain("x", "c1_out", "c1", CHANNELS, nwc=False, bias=False, seed=1)
    first[0].input[0] = "x_nwc4d"
    first[0].op_type, first[0].name = "Transpose", "c1/to_nchw"
    del first[0].input[1:]
    first[0].attribute.append(helper.make_attribute("perm", [0, 3, 1, 2]))
    first.insert(0, helper.make_node("Unsqueeze", ["x", "c1_uaxes"], ["x_nwc4d"], name="c1/ExpandDims"))
    constants = [c if c.name != "c1_uaxes" else numpy_helper.from_array(np.array([-3], np.int64), "c1_uaxes")
                 for c in constants]
    bias = numpy_helper.from_array(np.random.default_rng(3).normal(0, 0.5, (1, FILTERS, 1)).astype(np.float32),
                                   "c1_bias")
    second, more = _conv1d_chain("c1_relu", "c2_out", "c2", FILTERS, nwc=False, dilation=2, pads=(2, 2), seed=2)
    nodes = [*first, helper.make_node("Add", ["c1_out", "c1_bias"], ["c1_biased"], name="c1/BiasAdd"),
             helper.make_node("Relu", ["c1_biased"], ["c1_relu"], name="c1/Relu"), *second,
             helper.make_node("Relu", ["c2_out"], ["c2_relu"], name="c2/Relu"),
             helper.make_node("Transpose", ["c2_relu"], ["y"], perm=[0, 2, 1], name="to_nwc")]
    onnx.save(_model(nodes, [*constants, bias, *more], [1, STEPS, CHANNELS]), str(path))
    return path


def _tflite(path: Path, x: np.ndarray) -> np.ndarray:
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path))
    interpreter.allocate_tensors()
    (spec,) = interpreter.get_input_details()
    assert tuple(spec["shape"]) == x.shape  # the input keeps its ONNX shape
    interpreter.set_tensor(spec["index"], x)
    interpreter.invoke()
    return np.asarray(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))


def test_a_keras_conv1d_stack_converts_and_matches_onnx_runtime(tmp_path: Path) -> None:
    """onnx2tf fails on this model as tf2onnx writes it (a hand run without the fold: ``ValueError`` in
    ``tf.squeeze_1`` at ONNX node c2/Squeeze, as on BeliefPPG); folded, the float TFLite computes ONNX Runtime's
    outputs, and the ONNX file given is not rewritten."""
    import onnx

    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = _keras_conv1d_stack(tmp_path / "k.onnx")
    original = source.read_bytes()
    x = _input(True, batch=8)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(x,), labels=None, sha256="", whole=(True,))
    converted = convert_onnx_to_tflite(source, tmp_path / "k.tflite", data, ["x"], tmp_path / "scratch")
    assert source.read_bytes() == original
    want = _run(onnx.load(str(source)), x[:1])
    np.testing.assert_allclose(_tflite(converted, x[:1]), want, rtol=1e-4, atol=1e-4)
