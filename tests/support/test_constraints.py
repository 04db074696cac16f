"""One test per constraint: a small graph that fails it (with the values in the detail) and one that passes.

ONNX graphs come from onnx.helper (tests/support/graphs.py); TFLite graphs from a Keras net through the
TFLite converter (the session fixture ``probe_graphs``), for the rules only TFLite carries.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnx import TensorProto

from edgepipe.graph.opgraph import OpGraph
from edgepipe.rules import CONSTRAINTS, load_constraints
from tests.support.graphs import conv, single

FLOAT, INT8 = TensorProto.FLOAT, TensorProto.INT8


def verdict(name: str, node, graph, param):  # noqa: ANN001, ANN201 - tiny test helper
    return load_constraints()[name](node, graph, param)


def test_dtypes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    ok, detail = verdict("dtypes", node, graph, ["int8", "int16"])
    assert not ok and "is float32, not one of int8, int16" in detail
    assert verdict("dtypes", node, graph, ["float32"])[0]


def test_dtypes_not_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4], dtype=TensorProto.INT16)
    ok, detail = verdict("dtypes_not_in", node, graph, ["int8", "int16"])
    assert not ok and detail == "Relu feature map 'x0' is int16"
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("dtypes_not_in", node, graph, ["int8", "int16"]) == (True, "dtypes ok")


def test_weight_dtypes(probe_graphs: dict[str, OpGraph]) -> None:
    float_conv, int8_conv = probe_graphs["float"].nodes[0], probe_graphs["int8"].nodes[0]
    ok, detail = verdict("weight_dtypes", float_conv, probe_graphs["float"], ["int8"])
    assert not ok and detail == "CONV_2D weights are float32, not one of int8"
    assert verdict("weight_dtypes", int8_conv, probe_graphs["int8"], ["int8"])[0]


def test_static_shapes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [["n", 4]], ["n", 4])
    ok, detail = verdict("static_shapes", node, graph, True)
    assert not ok and "dynamic shape (None, 4)" in detail
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("static_shapes", node, graph, True)[0]


def test_no_scalar_feature_maps(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMax", [[1, 4]], [], keepdims=0)
    ok, detail = verdict("no_scalar_feature_maps", node, graph, True)
    assert not ok and detail == "ReduceMax feature map 'y' is a scalar (rank 0)"
    assert verdict("no_scalar_feature_maps", node, graph, False)[0]
    node, graph = single(tmp_path, "Add", [[1, 4]], [1, 4], consts={"one": np.array(1.0, np.float32)})
    assert verdict("no_scalar_feature_maps", node, graph, True)[0]  # a constant scalar operand is fine


def test_max_rank(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 2, 3, 4, 5]], [1, 2, 3, 4, 5])
    assert verdict("max_rank", node, graph, 4) == (False, "Relu rank 5 > 4")
    assert verdict("max_rank", node, graph, 5)[0]


def test_operands_rank(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Max", [[1, 256], [1, 256]], [1, 256])
    ok, detail = verdict("operands_rank", node, graph, 4)
    assert not ok and "has rank 2, not 4" in detail
    node, graph = single(tmp_path, "Max", [[1, 8, 4, 4], [1, 8, 4, 4]], [1, 8, 4, 4])
    assert verdict("operands_rank", node, graph, 4)[0]


def test_max_dim(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 70000]], [1, 70000])
    assert verdict("max_dim", node, graph, 65536) == (False, "Relu dimension 70000 > 65536")
    assert verdict("max_dim", node, graph, 70000)[0]


def test_batch_one(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, batch=2)
    ok, detail = verdict("batch_one", node, graph, True)
    assert not ok and detail.startswith("Conv batch 2 != 1")
    node, graph = conv(tmp_path, batch=1)
    assert verdict("batch_one", node, graph, True)[0]


def test_quantized_tensors(probe_graphs: dict[str, OpGraph]) -> None:
    ok, detail = verdict("quantized_tensors", probe_graphs["float"].nodes[0], probe_graphs["float"], True)
    assert not ok and "has no quantization parameters" in detail
    assert verdict("quantized_tensors", probe_graphs["int8"].nodes[0], probe_graphs["int8"], True)[0]


def test_per_tensor_quantization(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    conv_node = next(n for n in graph.nodes if n.op == "CONV_2D")
    ok, detail = verdict("per_tensor_quantization", conv_node, graph, True)
    assert not ok and "is quantized per axis" in detail
    pool = next(n for n in graph.nodes if n.op == "AVERAGE_POOL_2D")
    assert verdict("per_tensor_quantization", pool, graph, True)[0]


def test_constant_weights(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "MatMul", [[1, 4], [4, 2]], [1, 2])
    ok, detail = verdict("constant_weights", node, graph, True)
    assert not ok and detail == "MatMul input 'x1' is not constant"
    node, graph = single(tmp_path, "MatMul", [[1, 4]], [1, 2], consts={"w": np.ones((4, 2), np.float32)})
    assert verdict("constant_weights", node, graph, True)[0]


def test_same_input_shapes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Add", [[1, 4, 4], [1, 1, 4]], [1, 4, 4])
    ok, detail = verdict("same_input_shapes", node, graph, True)
    assert not ok and detail.startswith("Add broadcasts")
    node, graph = single(tmp_path, "Add", [[1, 4, 4], [1, 4, 4]], [1, 4, 4])
    assert verdict("same_input_shapes", node, graph, True)[0]


def test_max_tensor_bytes(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Softmax", [[1, 20000]], [1, 20000], dtype=FLOAT)
    assert verdict("max_tensor_bytes", node, graph, 16000) == (False, "Softmax feature map of 80000 bytes > 16000")
    node, graph = single(tmp_path, "Softmax", [[1, 1000]], [1, 1000], dtype=FLOAT)
    assert verdict("max_tensor_bytes", node, graph, 16000)[0]


def test_kernel_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=7)
    assert verdict("kernel_max", node, graph, 5) == (False, "Conv kernel 7x7 > 5")
    assert verdict("kernel_max", *conv(tmp_path, kernel=3), 5)[0]


def test_kernel_height_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=7)
    assert verdict("kernel_height_max", node, graph, 5) == (False, "Conv kernel height 7 > 5")
    assert verdict("kernel_height_max", node, graph, 7)[0]


def test_kernel_product_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=9)
    assert verdict("kernel_product_max", node, graph, 64) == (False, "Conv kernel 9x9 = 81 > 64")
    assert verdict("kernel_product_max", node, graph, 81)[0]


def test_same_padding_kernel_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, kernel=9, auto_pad="SAME_UPPER")
    assert verdict("same_padding_kernel_max", node, graph, 8) == (False, "Conv same padding kernel 9x9 > 8")
    assert verdict("same_padding_kernel_max", *conv(tmp_path, kernel=9, auto_pad="VALID"), 8)[0]


def test_stride_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, stride=5)
    assert verdict("stride_max", node, graph, 3) == (False, "Conv stride 5 > 3")
    assert verdict("stride_max", *conv(tmp_path, stride=3), 3)[0]


def test_stride_max_unless_valid(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, stride=4, auto_pad="SAME_UPPER")
    assert verdict("stride_max_unless_valid", node, graph, 3) == (False, "Conv stride 4 > 3 with same padding")
    assert verdict("stride_max_unless_valid", *conv(tmp_path, stride=4, auto_pad="VALID"), 3)[0]


def test_dilation_max(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, dilation=3)
    assert verdict("dilation_max", node, graph, 2) == (False, "Conv dilation 3 > 2")
    assert verdict("dilation_max", *conv(tmp_path, dilation=2), 2)[0]


def test_dilated_reach_channels_max(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import dilated_conv1d_onnx

    graph = read_graph(dilated_conv1d_onnx(tmp_path / "far.onnx", 100, 15692, 4096))  # 100 channels count as 128
    node = graph.nodes[0]
    assert verdict("dilated_reach_channels_max", node, graph, 1048448) == (
        False, "Conv dilated reach 8193 x 128 channels = 1048704 >= 1048448")
    padded = read_graph(dilated_conv1d_onnx(tmp_path / "pad.onnx", 128, 7500, 4096, padded=True))
    assert verdict("dilated_reach_channels_max", padded.nodes[0], padded, 1048448) == (
        True, "reach 7500 x 128 channels")  # the reach is cut to the input's length


def test_padding_in(tmp_path: Path) -> None:
    node, graph = conv(tmp_path, auto_pad="SAME_UPPER")
    assert verdict("padding_in", node, graph, ["valid"]) == (False, "Conv padding same not in valid")
    assert verdict("padding_in", *conv(tmp_path, auto_pad="VALID"), ["valid"])[0]


def test_ifm_hw_product_max(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    first = graph.nodes[0]  # 32x32 input
    assert verdict("ifm_hw_product_max", first, graph, 1024) == (False, "CONV_2D input height x width 1024 >= 1024")
    assert verdict("ifm_hw_product_max", first, graph, 1025)[0]


def test_depthwise_multiplier_max(probe_graphs: dict[str, OpGraph]) -> None:
    graph = probe_graphs["int8"]
    depthwise = next(n for n in graph.nodes if n.op == "DEPTHWISE_CONV_2D")
    assert verdict("depthwise_multiplier_max", depthwise, graph, 1) == (
        False, "DEPTHWISE_CONV_2D depth multiplier 2 > 1")
    assert verdict("depthwise_multiplier_max", depthwise, graph, 2)[0]


def test_axis_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Concat", [[1, 2, 4, 4], [1, 2, 4, 4]], [1, 4, 4, 4], axis=1)
    assert verdict("axis_in", node, graph, [3, -1]) == (False, "Concat axis 1 not in 3, -1")
    node, graph = single(tmp_path, "Concat", [[1, 2, 4, 4], [1, 2, 4, 4]], [1, 2, 4, 8], axis=-1)
    assert verdict("axis_in", node, graph, [3])[0]


def test_opset_max(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import conv_net_onnx

    graph = read_graph(conv_net_onnx(tmp_path / "c21.onnx", ["Relu"], opset=21))
    assert graph.opset == 21
    assert verdict("opset_max", graph.nodes[0], graph, 19) == (False, "the model imports ONNX opset 21 > 19")
    assert verdict("opset_max", graph.nodes[1], graph, 19)[0]  # named once, on the first node
    assert verdict("opset_max", graph.nodes[0], graph, 21)[0]


def test_state_slice_aligned(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import stacked_gru_onnx

    for hidden, ok in ((200, False), (208, True)):
        graph = read_graph(stacked_gru_onnx(tmp_path / f"gru{hidden}.onnx", hidden))
        gather = next(n for n in graph.nodes if n.op == "Gather")
        assert verdict("state_slice_aligned", gather, graph, 16)[0] is ok
    assert verdict("state_slice_aligned", gather, graph, 16)[1] == "aligned state slice"


def test_time_axis_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReverseSequence", [[98, 1, 64], [1]], [98, 1, 64], time_axis=1, batch_axis=0)
    assert verdict("time_axis_in", node, graph, [0]) == (False, "ReverseSequence time_axis 1 not in 0")
    node, graph = single(tmp_path, "ReverseSequence", [[98, 1, 64], [1]], [98, 1, 64], time_axis=0, batch_axis=1)
    assert verdict("time_axis_in", node, graph, [0])[0]


def test_reverse_sequence_of_run_time_lengths_is_a_cpu_op(tmp_path: Path) -> None:
    """rk3588 / rk3576: a ReverseSequence runs on the NPU with time first and constant lengths only."""
    from edgepipe.support import check_model
    from edgepipe.targets import load_profile
    from tests.verify.models import reverse_sequence_onnx

    for target in ("rk3588", "rk3576"):
        profile = load_profile(target)
        for time_axis, lengths, where in ((0, "constant", "accelerator"), (0, "input", "cpu"), (1, "constant", "cpu")):
            model = reverse_sequence_onnx(tmp_path / f"rev{time_axis}{lengths}.onnx", time_axis, lengths)
            verdict_ = next(v for v in check_model(model, profile).node_verdicts if v.op == "ReverseSequence")
            assert verdict_.placement == where, (target, time_axis, lengths, verdict_.failed)


def test_no_batch_dims(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "GatherND", [[1, 200, 80], [1, 98, 5, 1]], [1, 98, 5, 80], batch_dims=1)
    assert verdict("no_batch_dims", node, graph, True) == (False, "GatherND batch_dims 1")
    node, graph = single(tmp_path, "GatherND", [[1, 200, 80], [1, 98, 5, 2]], [1, 98, 5, 80])
    assert verdict("no_batch_dims", node, graph, True)[0]


def test_reduced_axis_max(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMean", [[1, 5000, 4]], [1, 1, 4], axes=[1])
    assert verdict("reduced_axis_max", node, graph, 4096) == (False, "ReduceMean reduced axis of 5000 >= 4096")
    node, graph = single(tmp_path, "ReduceMean", [[1, 50, 4]], [1, 1, 4], axes=[1])
    assert verdict("reduced_axis_max", node, graph, 4096)[0]


def test_reduce_keeps_batch(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMean", [[2, 5, 4]], [1, 5, 4], axes=[0])
    assert verdict("reduce_keeps_batch", node, graph, True) == (False, "ReduceMean reduces over the batch axis")
    node, graph = single(tmp_path, "ReduceMean", [[2, 5, 4]], [2, 1, 4], axes=[1])
    assert verdict("reduce_keeps_batch", node, graph, True)[0]


def test_not_graph_output(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("not_graph_output", node, graph, True) == (False, "Relu writes graph output 'y'")
    assert verdict("not_graph_output", node, graph, False)[0]


def test_not_graph_input(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("not_graph_input", node, graph, True) == (False, "Relu reads graph input 'x0'")
    assert verdict("not_graph_input", node, graph, False)[0]


def test_not_graph_input_through_a_transpose(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import nhwc_input_onnx, qdq_onnx

    graph = read_graph(qdq_onnx(nhwc_input_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 16, 16, 3)))
    quantize = next(n for n in graph.nodes if n.op == "QuantizeLinear" and n.inputs[0].name == "t")
    assert verdict("not_graph_input", quantize, graph, True) == (False, "QuantizeLinear reads graph input 'x'")
    conv = next(n for n in graph.nodes if n.op == "Conv")
    assert verdict("not_graph_input", conv, graph, True)[0]


def test_not_a_table_lookup(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import int32_ids_onnx

    graph = read_graph(int32_ids_onnx(tmp_path / "ids.onnx"))
    lookup = next(n for n in graph.nodes if n.op == "Gather")
    assert verdict("not_a_table_lookup", lookup, graph, True) == (
        False, "Gather looks up rows of constant 'table' by run-time indices 'shifted'")
    assert verdict("not_a_table_lookup", lookup, graph, False)[0]


def test_max_inputs(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Sum", [[1, 4]] * 3, [1, 4])
    assert verdict("max_inputs", node, graph, 2) == (False, "Sum has 3 inputs > 2")
    assert verdict("max_inputs", node, graph, 3)[0]


def test_perm_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Transpose", [[1, 2, 3, 4]], [1, 3, 4, 2], perm=[0, 2, 3, 1])
    assert verdict("perm_in", node, graph, ["0132"]) == (False, "Transpose permutation 0231 not in 0132")
    assert verdict("perm_in", node, graph, ["0231"])[0]


def test_static_control_flow(tmp_path: Path) -> None:
    """rknn-toolkit2 refuses any Loop and an If known only at run time; an If whose condition the static input
    shapes decide is replaced by its branch, and passes."""
    from edgepipe.support import read_graph
    from tests.support.graphs import loop_onnx, squeeze_if_onnx
    from tests.verify.models import runtime_if_onnx

    cases = {"loop": (loop_onnx(tmp_path / "loop.onnx"), "Loop"),
             "runtime_if": (runtime_if_onnx(tmp_path / "if.onnx"), "If"),
             "static_if": (squeeze_if_onnx(tmp_path / "squeeze.onnx"), "If")}
    verdicts = {}
    for name, (path, op) in cases.items():
        graph = read_graph(path)
        node = next(n for n in graph.nodes if n.op == op)
        verdicts[name] = verdict("static_control_flow", node, graph, True)
        assert verdict("static_control_flow", node, graph, False) == (True, "not required")
    assert verdicts == {
        "loop": (False, "Loop 'loop' runs its body at run time; the compiler does not unroll it"),
        "runtime_if": (False, "If 'verify' has a condition only known at run time"),
        "static_if": (True, "static")}


def test_graph_input_dtypes_not_in(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Cast", [[1, 4]], [1, 4], dtype=TensorProto.INT16, to=TensorProto.FLOAT)
    assert verdict("graph_input_dtypes_not_in", node, graph, ["int16"]) == (
        False, "Cast reads graph input 'x0' of type int16")
    assert verdict("graph_input_dtypes_not_in", node, graph, ["uint8"]) == (True, "no such input")


def test_scales_no_cpu_output_for_reshape(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import log10_scalings_onnx

    graph = read_graph(log10_scalings_onnx(tmp_path / "log10.onnx"))
    found = {n.name: verdict("scales_no_cpu_output_for_reshape", n, graph, ["Log"]) for n in graph.nodes
             if n.name.startswith("scale")}
    assert found == {"scale0": (False, "Mul scales Log 'log0' by a constant for a reshape, with it on the CPU"),
                     "scale1": (True, "not a lone scaling of a CPU op's output")}
    assert verdict("scales_no_cpu_output_for_reshape", graph.nodes[2], graph, ["Sqrt"])[0]


def test_strides_powers_of_two(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import transposed_gelu_onnx

    for stride, expected in ((5, (False, "ConvTranspose stride 5 is not a power of two")), (4, (True, "strides 4"))):
        graph = read_graph(transposed_gelu_onnx(tmp_path / f"s{stride}.onnx", stride))
        node = next(n for n in graph.nodes if n.op == "ConvTranspose")
        ok, detail = verdict("strides_powers_of_two", node, graph, True)
        assert ok == expected[0] and expected[1] in detail
    assert verdict("strides_powers_of_two", node, graph, False)[0]


def test_every_constraint_has_a_test_and_a_rule() -> None:
    """Each constraint has a ``test_<name>`` here or in a ``test_constraints_<topic>.py`` beside this file."""
    import importlib

    load_constraints()
    modules = [sys.modules[__name__]] + [importlib.import_module(f"tests.support.{path.stem}")
                                         for path in sorted(Path(__file__).parent.glob("test_constraints_*.py"))]
    missing = [name for name in CONSTRAINTS if not any(hasattr(m, f"test_{name}") for m in modules)]
    assert not missing, f"constraints without a fail/pass test: {missing}"
    for item in CONSTRAINTS.values():
        assert item.rule_template.endswith(".") and "{param}" in item.rule_template or item.param_type is bool


@pytest.mark.parametrize("value", ["three", [1, 2]])
def test_parameter_type_is_checked(value: object) -> None:
    with pytest.raises(ValueError, match="constraint 'stride_max' takes"):
        load_constraints()["stride_max"].validate_param(value)


def _dq_int32(tmp: Path, user: str):  # noqa: ANN202 - returns (dq node, graph)
    """DequantizeLinear of an int32 constant 'b', read by a Conv as bias or by an Add."""
    from onnx import helper

    consts = {"bq": np.ones(4, np.int32), "s": np.array(0.1, np.float32), "z": np.array(0, np.int32),
              "w": np.ones((4, 4, 1, 1), np.float32)}
    dq = helper.make_node("DequantizeLinear", ["bq", "s", "z"], ["b"], name="dq")
    if user == "Conv":
        op = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")
    else:
        op = helper.make_node("Add", ["x", "b"], ["y"], name="add")
    from tests.support.graphs import onnx_graph

    graph = onnx_graph(tmp, [dq, op], {"x": ([1, 4, 2, 2] if user == "Conv" else [1, 4], FLOAT)},
                       {"y": ([], FLOAT)}, consts)
    return graph.nodes[0], graph


def test_int32_dequantize_only_as_bias(tmp_path: Path) -> None:
    node, graph = _dq_int32(tmp_path, "Add")
    ok, detail = verdict("int32_dequantize_only_as_bias", node, graph, ["Conv", "Gemm"])
    assert not ok and detail == "DequantizeLinear of int32 'bq' feeds Add 'add', not a bias"
    assert verdict("int32_dequantize_only_as_bias", *_dq_int32(tmp_path, "Conv"), ["Conv", "Gemm"])[0]


@pytest.mark.parametrize(("group", "stored", "ok"), [(4, "int16", False), (4, "uint16", True), (1, "int16", True)])
def test_grouped_input_not_dequantized_from(tmp_path: Path, group: int, stored: str, ok: bool) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    dq = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"], name="dq")
    conv = helper.make_node("Conv", ["xf", "w"], ["y"], name="conv", kernel_shape=[3], pads=[1, 1], group=group)
    dtype = {"int16": TensorProto.INT16, "uint16": TensorProto.UINT16}[stored]
    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.dtype(stored)),
              "w": np.ones((4, 4 // group, 3), np.float32)}
    graph = onnx_graph(tmp_path, [dq, conv], {"x": ([1, 4, 8], dtype)}, {"y": ([1, 4, 8], FLOAT)}, consts)
    verdict_ = verdict("grouped_input_not_dequantized_from", graph.nodes[1], graph, ["int16"])
    assert verdict_ == ((True, "not grouped" if group == 1 else "input ok") if ok else
                        (False, "Conv (group 4) reads 'xf' dequantized from int16"))


@pytest.mark.parametrize(("activation", "left", "ok"), [("uint16", True, False), ("int8", True, True),
                                                     ("uint16", False, True)])
def test_per_channel_not_matmul_a_beside(tmp_path: Path, activation: str, left: bool, ok: bool) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    wdq = helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["w"], name="wdq", axis=1)
    xdq = helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"], name="xdq")
    mm = helper.make_node("MatMul", ["w", "xf"] if left else ["xf", "w"], ["y"], name="mm")
    dtype = {"uint16": TensorProto.UINT16, "int8": TensorProto.INT8}[activation]
    consts = {"wq": np.ones((4, 4), np.int8), "ws": np.full(4, 0.1, np.float32), "wz": np.zeros(4, np.int8),
              "xs": np.array(0.1, np.float32), "xz": np.array(0, np.dtype(activation))}
    graph = onnx_graph(tmp_path, [wdq, xdq, mm], {"x": ([4, 4], dtype)}, {"y": ([4, 4], FLOAT)}, consts)
    result = verdict("per_channel_not_matmul_a_beside", graph.nodes[0], graph, ["uint8", "uint16"])
    assert result == ((True, "not beside such a MatMul") if ok else
                      (False, "per-channel weights into MatMul 'mm' beside an activation dequantized from uint16"))


def test_no_int32_dequantized_params(tmp_path: Path) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    params = {n: np.ones(4, np.float32) for n in ("sc", "bb", "m", "v")}
    dq = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["sc"], name="dq")
    bn = helper.make_node("BatchNormalization", ["x", "sc", "bb", "m", "v"], ["y"], name="bn")
    quantized = {"q": np.ones(4, np.int32), "s": np.array(0.1, np.float32), "z": np.array(0, np.int32)}
    consts = {k: v for k, v in params.items() if k != "sc"} | quantized
    graph = onnx_graph(tmp_path, [dq, bn], {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, consts)
    ok, detail = verdict("no_int32_dequantized_params", graph.nodes[1], graph, True)
    assert not ok and detail == "BatchNormalization parameter 'sc' is dequantized from int32"
    plain = onnx_graph(tmp_path, [bn], {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, params)
    assert verdict("no_int32_dequantized_params", plain.nodes[0], plain, True)[0]


def test_graph_output_after_layout_op(tmp_path: Path) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8), "w": np.ones((4, 4, 1, 1), np.float32)}

    def ending(first: Any) -> OpGraph:
        nodes = [first, helper.make_node("QuantizeLinear", ["a", "s", "z"], ["q"], name="q"),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
        return onnx_graph(tmp_path, nodes, {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)}, consts)

    norm = ending(helper.make_node("LpNormalization", ["x"], ["a"], name="norm", axis=1))
    ok, detail = verdict("graph_output_after_layout_op", norm.nodes[2], norm, ["Conv"])
    assert not ok and detail == "DequantizeLinear writes graph output 'y' after LpNormalization 'norm'"
    conv_graph = ending(helper.make_node("Conv", ["x", "w"], ["a"], name="conv"))
    assert verdict("graph_output_after_layout_op", conv_graph.nodes[2], conv_graph, ["Conv"])[0]
    # the layout transpose moves through a Softmax after the Conv, not through a LayerNormalization
    for op, moved in (("Softmax", True), ("LayerNormalization", False)):
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                 helper.make_node(op, ["c", *(["g"] if op == "LayerNormalization" else [])], ["a"], name="op",
                                  axis=1),
                 helper.make_node("QuantizeLinear", ["a", "s", "z"], ["q"], name="q"),
                 helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
        graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4, 2, 2], FLOAT)}, {"y": ([1, 4, 2, 2], FLOAT)},
                           consts | {"g": np.ones((4, 2, 2), np.float32)})
        assert verdict("graph_output_after_layout_op", graph.nodes[3], graph, ["Conv"])[0] is moved


def test_align_corners_whole_steps(tmp_path: Path) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    for size, ok in ((15, True), (16, False)):
        consts = {"roi": np.zeros(0, np.float32), "sc": np.zeros(0, np.float32),
                  "sz": np.array([1, 4, size, size], np.int64)}
        resize = helper.make_node("Resize", ["x", "roi", "sc", "sz"], ["y"], name="rz", mode="linear",
                                  coordinate_transformation_mode="align_corners")
        graph = onnx_graph(tmp_path, [resize], {"x": ([1, 4, 8, 8], FLOAT)}, {"y": ([1, 4, size, size], FLOAT)},
                           consts)
        passed, detail = verdict("align_corners_whole_steps", graph.nodes[0], graph, True)
        assert passed is ok
        if not ok:
            assert detail == "Resize aligns corners from [1, 4, 8, 8] to [1, 4, 16, 16]: 8 -> 16 is not a whole " \
                             "number of steps"


def test_padding_counted(tmp_path: Path) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    for counted, pads, ok in ((0, [1, 1, 1, 1], False), (1, [1, 1, 1, 1], True), (0, [0, 0, 0, 0], True)):
        pool = helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3, 3], pads=pads,
                                count_include_pad=counted)
        out = 8 if any(pads) else 6
        graph = onnx_graph(tmp_path, [pool], {"x": ([1, 4, 8, 8], FLOAT)}, {"y": ([1, 4, out, out], FLOAT)}, {})
        assert verdict("padding_counted", graph.nodes[0], graph, True)[0] is ok


def test_transpose_axes_product_max(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Transpose", [[1, 4, 28, 56, 56]], [1, 28, 4, 56, 56], perm=[0, 2, 1, 3, 4])
    assert verdict("transpose_axes_product_max", node, graph, 65536) == (
        False, "Transpose product of 3 axes 87808 > 65536")
    node, graph = single(tmp_path, "Transpose", [[1, 1, 8, 16, 32]], [1, 1, 16, 8, 32], perm=[0, 1, 3, 2, 4])
    assert verdict("transpose_axes_product_max", node, graph, 65536)[0]


def test_variable_data_dtypes(tmp_path: Path) -> None:
    from edgepipe.graph.tflite_reader import read_tflite
    from tests.verify.models import variable_tflite

    int8 = read_tflite(variable_tflite(tmp_path / "int8.tflite"))
    flt = read_tflite(variable_tflite(tmp_path / "float.tflite", int8_state=False))
    allowed = ["int8", "int16"]
    for op in ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"):
        assert verdict("variable_data_dtypes", next(n for n in int8.nodes if n.op == op), int8, allowed)[0]
        ok, detail = verdict("variable_data_dtypes", next(n for n in flt.nodes if n.op == op), flt, allowed)
        assert not ok and "is float32, not one of int8, int16" in detail, detail


def _hardsigmoid_unit(tmp_path: Path) -> OpGraph:
    """DequantizeLinear -> HardSigmoid -> QuantizeLinear, plus the same DQ feeding a Relu."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"], name="dq"),
             helper.make_node("HardSigmoid", ["f"], ["h"], name="hsig"),
             helper.make_node("Relu", ["f"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["h", "s", "z"], ["y"], name="q_after"),
             helper.make_node("QuantizeLinear", ["r", "s", "z"], ["y2"], name="q_relu")]
    consts = {"s": np.array(0.1, np.float32), "z": np.array(0, np.int8)}
    return onnx_graph(tmp_path, nodes, {"q": ([1, 4], INT8)}, {"y": ([1, 4], INT8), "y2": ([1, 4], INT8)}, consts)


def test_feeds_none_of(tmp_path: Path) -> None:
    graph = _hardsigmoid_unit(tmp_path)
    ok, detail = verdict("feeds_none_of", graph.nodes[0], graph, ["HardSigmoid"])
    assert not ok and detail == "DequantizeLinear feeds HardSigmoid 'hsig', whose QDQ node unit runs on the CPU"
    assert verdict("feeds_none_of", graph.nodes[0], graph, ["Softmax"])[0]


def test_not_written_by(tmp_path: Path) -> None:
    graph = _hardsigmoid_unit(tmp_path)
    after, after_relu = graph.nodes[3], graph.nodes[4]
    ok, detail = verdict("not_written_by", after, graph, ["HardSigmoid"])
    assert not ok and detail == "QuantizeLinear reads the output of HardSigmoid 'hsig', which runs on the CPU"
    assert verdict("not_written_by", after_relu, graph, ["HardSigmoid"])[0]


def test_not_quantized(tmp_path: Path) -> None:
    graph = _hardsigmoid_unit(tmp_path)
    hsig = graph.nodes[1]
    ok, detail = verdict("not_quantized", hsig, graph, True)
    assert not ok and detail == "HardSigmoid 'hsig' is quantized (reads DequantizeLinear 'dq')"
    assert verdict("not_quantized", hsig, graph, False)[0]
    node, graph = single(tmp_path, "Neg", [[1, 4]], [1, 4])
    assert verdict("not_quantized", node, graph, True) == (True, "float")


def test_max_squeezed_rank(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 2, 4, 8, 8]], [1, 2, 4, 8, 8])
    assert verdict("max_squeezed_rank", node, graph, 4) == (True, "4 dimensions larger than 1")
    node, graph = single(tmp_path, "Relu", [[2, 2, 4, 8, 8]], [2, 2, 4, 8, 8])
    assert verdict("max_squeezed_rank", node, graph, 4) == (False, "Relu has 5 dimensions larger than 1 > 4")


def test_in_layer_norm_pattern(tmp_path: Path) -> None:
    """The Sqrt of ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div, and a lone Sqrt."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1]),
             helper.make_node("Sub", ["x", "m"], ["d"], name="sub"),
             helper.make_node("Pow", ["d", "two"], ["p"], name="pow"),
             helper.make_node("ReduceMean", ["p"], ["v"], name="var", axes=[-1]),
             helper.make_node("Add", ["v", "eps"], ["ve"], name="add_eps"),
             helper.make_node("Sqrt", ["ve"], ["s"], name="sqrt"),
             helper.make_node("Div", ["d", "s"], ["y"], name="div"),
             helper.make_node("Sqrt", ["x"], ["y2"], name="lone_sqrt")]
    consts = {"two": np.array(2.0, np.float32), "eps": np.array(1e-5, np.float32)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 8, 16], FLOAT)}, {"y": ([1, 8, 16], FLOAT),
                                                                    "y2": ([1, 8, 16], FLOAT)}, consts)
    assert verdict("in_layer_norm_pattern", graph.nodes[5], graph, True) == (True, "inside a layer normalization")
    ok, detail = verdict("in_layer_norm_pattern", graph.nodes[7], graph, True)
    assert not ok and detail == "Sqrt 'lone_sqrt' is not the Sqrt of a decomposed layer normalization"


def test_in_gelu_pattern(tmp_path: Path) -> None:
    """The Erf of x / sqrt(2) -> Erf -> Add 1 -> Mul (PyTorch's exact GELU), and a lone Erf."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"], name="div"),
             helper.make_node("Erf", ["d"], ["e"], name="erf"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Mul", ["x", "a"], ["y"], name="mul"),
             helper.make_node("Erf", ["x"], ["y2"], name="lone_erf")]
    consts = {"sqrt2": np.array(1.4142135, np.float32), "one": np.array(1.0, np.float32)}
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 8], FLOAT)}, {"y": ([1, 8], FLOAT), "y2": ([1, 8], FLOAT)}, consts)
    assert verdict("in_gelu_pattern", graph.nodes[1], graph, True) == (True, "inside a GELU")
    ok, detail = verdict("in_gelu_pattern", graph.nodes[4], graph, True)
    assert not ok and detail == "Erf 'lone_erf' is not the Erf of a decomposed GELU"


def _squeeze_if_graph(tmp_path: Path, columns: int = 16) -> OpGraph:
    from edgepipe.graph.onnx_reader import read_onnx
    from tests.support.graphs import squeeze_if_onnx

    return read_onnx(squeeze_if_onnx(tmp_path / f"squeeze_if_{columns}.onnx", columns=columns))


def test_branch_ops_in(tmp_path: Path) -> None:
    """An If whose condition comes from static shapes takes its Squeeze branch; its output shape is known."""
    graph = _squeeze_if_graph(tmp_path)
    node = next(n for n in graph.nodes if n.op == "If")
    assert node.attrs["branch_ops"] == ("Squeeze",) and node.outputs[0].shape == (1, 8, 16)
    assert verdict("branch_ops_in", node, graph, ["Squeeze", "Identity"]) == (True, "branch of Squeeze")
    assert verdict("branch_ops_in", node, graph, ["Identity"]) == (False, "If takes a branch with Squeeze")
    unknown, graph = single(tmp_path, "If", [[1]], [1], dtype=TensorProto.BOOL)
    assert verdict("branch_ops_in", unknown, graph, ["Squeeze"]) == (
        False, "If 'if' has a condition only known at run time")


def test_matmul_columns_max(tmp_path: Path) -> None:
    """A (16, 9000) product of constant weights, its bias Add and the Sigmoid after it; a one-row MatMul."""
    graph = _squeeze_if_graph(tmp_path, columns=9000)
    matmul, bias, sigmoid = (next(n for n in graph.nodes if n.op == op) for op in ("MatMul", "Add", "Sigmoid"))
    for node in (matmul, bias, sigmoid):
        assert verdict("matmul_columns_max", node, graph, 8192) == (False, "MatMul 'matmul' writes 9000 columns > 8192")
        assert verdict("matmul_columns_max", node, graph, 9000)[0]
    one_row, graph = single(tmp_path, "MatMul", [[1, 8]], [1, 9000],
                            consts={"w": np.zeros((8, 9000), np.float32)})
    assert verdict("matmul_columns_max", one_row, graph, 8192)[0]


def test_keeps_an_axis(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "ReduceMax", [[1, 8, 32]], [], keepdims=0)
    assert verdict("keeps_an_axis", node, graph, True) == (False, "ReduceMax reduces (1, 8, 32) to one value")
    node, graph = single(tmp_path, "ReduceMax", [[1, 8, 32]], [1, 8, 1], axes=[-1])
    assert verdict("keeps_an_axis", node, graph, True)[0]


@pytest.mark.parametrize(("channels", "pads", "ok"), [
    (24, [0, 0, 0, 0, 0, 4, 0, 0], False),  # BlazeFace's channel_padding: 24 -> 28 channels at the end
    (32, [0, 0, 0, 0, 0, 4, 0, 0], True),
    (24, [0, 4, 0, 0, 0, 4, 0, 0], True),
    (16, [0, 4, 1, 1, 0, 0, 1, 1], False),
    (24, [0, 0, 1, 1, 0, 0, 1, 1], True),
])
def test_channel_pad_aligned(tmp_path: Path, channels: int, pads: list[int], ok: bool) -> None:
    node, graph = single(tmp_path, "Pad", [[1, channels, 8, 8]], consts={"pads": np.array(pads, np.int64)})
    assert node.attrs["pads"] == tuple(pads)
    assert verdict("channel_pad_aligned", node, graph, 16)[0] is ok


def test_channel_pad_aligned_reads_the_pads_attribute_of_old_opsets_and_passes_run_time_pads(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Pad", [[1, 24, 8, 8]], pads=[0, 0, 0, 0, 0, 4, 0, 0], opset=10)
    expected = (False, "Pad adds 4 channels after 24, not a multiple of 16")
    assert verdict("channel_pad_aligned", node, graph, 16) == expected
    node, graph = single(tmp_path, "Pad", [[1, 24, 8, 8], [8]])  # pads computed at run time: nothing to judge
    assert "pads" not in node.attrs and verdict("channel_pad_aligned", node, graph, 16)[0]


def test_output_columns_multiple(tmp_path: Path) -> None:
    consts = {"w": np.ones((24, 8), np.float32)}
    node, graph = single(tmp_path, "Gemm", [[1, 8]], [1, 24], consts=consts, transB=1)
    expected = (False, "Gemm writes graph output 'y' of 24 columns, not a multiple of 16")
    assert verdict("output_columns_multiple", node, graph, 16) == expected
    assert verdict("output_columns_multiple", node, graph, 8) == (True, "24 columns")


def test_strided_after_strided(tmp_path: Path) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    def strided(name: str, source: str) -> list[str]:  # the Slice's inputs; its constants are in ``consts``
        return [source, f"{name}_s", f"{name}_e", f"{name}_a", f"{name}_t"]

    consts = {f"{n}_{k}": np.array([v], np.int64) for n, axis, step in (("h", 2, 2), ("w", 3, 2), ("one", 2, 1))
              for k, v in (("s", 0), ("e", 2 ** 62), ("a", axis), ("t", step))}
    graph = onnx_graph(tmp_path, [helper.make_node("Slice", strided("h", "x"), ["a"], name="h"),
                                  helper.make_node("Slice", strided("w", "a"), ["b"], name="w"),
                                  helper.make_node("Slice", strided("one", "x"), ["c"], name="one")],
                       {"x": ([1, 3, 8, 8], FLOAT)}, {"b": ([1, 3, 4, 4], FLOAT), "c": ([1, 3, 8, 8], FLOAT)}, consts)
    first, second, plain = graph.nodes
    assert first.attrs["steps"] == (2,)
    assert verdict("strided_after_strided", first, graph, True) == (
        False, "Slice of steps [2] reads 'x', not a strided Slice's output")
    assert verdict("strided_after_strided", second, graph, True) == (True, "reads a strided Slice")
    assert verdict("strided_after_strided", plain, graph, True)[0]


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 12, 12, 6], [1, 864, 1], False),  # palm_detection's 12 x 12 classifier head before its Concat
    ([1, 24, 24, 2], [1, 1152, 1], True),  # its 24 x 24 one: an H x W of 576
    ([1, 12, 12, 6], [1, 18, 8, 6], True),  # W kept as the last axis
    ([1, 1, 44100, 1], [1, 1, 1, 44100], True),  # basic_pitch's conv1d layouts: only size-1 axes move
    ([1, 172, 264, 1], [1, 1, 172, 264], True),
    ([1, 8, 12, 6], [1, 8, 72, 1], False),
    ([1, 4, 1, 1], [1, 1, 1, 4], True),  # hand_recrop's output: a 1 x 1 plane into one channel
    ([1, 4, 1, 1], [1, 2, 1, 2], False),
    ([1, 32, 1, 1], [1, 32], True), ([1, 24, 1, 1], [1, 24], False),  # a classifier's flatten
    ([1, 4], [1, 1, 4], False), ([1, 16], [1, 1, 16], True)])  # not 4-D: the element count
def test_reshape_layout_aligned(tmp_path: Path, shape: list[int], to: list[int], npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (tests/verify/test_rknn.py)."""
    node, graph = single(tmp_path, "Reshape", [shape], to, consts={"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", node, graph, 16)[0] is npu


@pytest.mark.parametrize(("rows", "columns", "axis", "npu"), [
    (100, 59, 1, False), (96, 59, 1, True), (100, 64, 1, True),  # [1, 1, H, W]: H x W
    (96, 59, 2, False), (100, 64, 2, True), (96, 59, 3, False)])  # [1, C, 1, W] and [1, C, W, 1]: W
def test_reshape_layout_aligned_of_a_3d_graph_input_given_a_channel_axis(tmp_path: Path, rows: int, columns: int,
                                                                         axis: int, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (brainmaze's seizure spectrogram; tests/verify/test_rknn.py)."""
    from edgepipe.support import read_graph
    from tests.verify.models import spectrogram_channel_onnx

    graph = read_graph(spectrogram_channel_onnx(tmp_path / "spec.onnx", rows, columns, axis))
    ok, detail = verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)
    assert ok is npu and "gives [1, " in detail, detail


def test_reshape_layout_aligned_of_a_gate_given_its_held_form(tmp_path: Path) -> None:
    """A 1-D convolution's [1, 8, 1] gate unsqueezed to [1, 8, 1, 1] (GTCRN): RK3588 runs it on the NPU."""
    from edgepipe.support import read_graph
    from tests.verify.models import channel_gate_onnx

    graph = read_graph(channel_gate_onnx(tmp_path / "gate.onnx"))
    node = next(n for n in graph.nodes if n.op == "Unsqueeze")
    assert verdict("reshape_layout_aligned", node, graph, 16) == (
        True, "gives [1, 8, 1], held as [1, 8, 1, 1], that form")


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 8, 12, 6], [1, 8, 72], True),  # PicoDet's and PP-OCR's heads: H x W flattened, then transposed
    ([1, 8, 12, 6], [1, 576, 1], False),  # a last axis of 1 from an unaligned plane
    ([1, 8, 12, 8], [1, 768, 1], True),
    ([1, 4, 1, 1], [1, 1, 4], False)])  # 4 elements
def test_reshape_layout_aligned_read_by_another_op(tmp_path: Path, shape: list[int], to: list[int],
                                                   npu: bool) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    graph = onnx_graph(tmp_path, [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                                  helper.make_node("Transpose", ["r"], ["y"], name="transpose", perm=[0, 2, 1])],
                       {"x": (shape, FLOAT)}, {"y": ([to[0], to[2], to[1]], FLOAT)},
                       {"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0] is npu


@pytest.mark.parametrize(("shape", "to", "npu"), [
    ([1, 12, 12, 6], [1, 864, 1], False),  # palm_detection's 12 x 12 classifier head
    ([1, 6, 13, 13], [1, 6, 169], True)])  # ddddocr_det's (YOLO) 13 x 13 head, concatenated on the last axis
def test_reshape_layout_aligned_read_by_a_concat(tmp_path: Path, shape: list[int], to: list[int], npu: bool) -> None:
    from onnx import helper

    from tests.support.graphs import onnx_graph

    axis = 1 if to[-1] == 1 else 2
    joined = [to[0], to[1] * 2, to[2]] if axis == 1 else [to[0], to[1], to[2] * 2]
    graph = onnx_graph(tmp_path, [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
                                  helper.make_node("Concat", ["r", "r"], ["y"], name="concat", axis=axis)],
                       {"x": (shape, FLOAT)}, {"y": (joined, FLOAT)}, {"shape": np.array(to, np.int64)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0] is npu


def _heads(tmp_path: Path, planes: list[list[int]], flat: list[list[int]], axis: int) -> OpGraph:
    """One Reshape per head, from ``planes[i]`` to ``flat[i]``, and a Concat of them on ``axis`` (a detector's
    outputs over three scales)."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    nodes = [helper.make_node("Reshape", [f"x{i}", f"s{i}"], [f"r{i}"], name=f"reshape{i}") for i in range(len(flat))]
    nodes.append(helper.make_node("Concat", [f"r{i}" for i in range(len(flat))], ["y"], name="concat", axis=axis))
    joined = list(flat[0])
    joined[axis] = sum(f[axis] for f in flat)
    return onnx_graph(tmp_path, nodes, {f"x{i}": (p, FLOAT) for i, p in enumerate(planes)}, {"y": (joined, FLOAT)},
                      {f"s{i}": np.array(f, np.int64) for i, f in enumerate(flat)})


def test_reshape_layout_aligned_judges_a_concat_input_in_the_toolkits_4d_form(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 (unsqueeze_to_4d_concat) reshapes each Concat input into the 4-D shape of the first
    input's source, resized along the concatenated axis; that reshape follows the plane rule. ddddocr_det (YOLO):
    heads [1, 6, 52 x 52], [1, 6, 26 x 26], [1, 6, 13 x 13] on the last axis: the first is left as it is, the
    26 x 26 one becomes [1, 6, 13, 52] and runs on the CPU, 169 does not divide by 52 and stays on the NPU."""
    graph = _heads(tmp_path, [[1, 6, 52, 52], [1, 6, 26, 26], [1, 6, 13, 13]], [[1, 6, 2704], [1, 6, 676],
                                                                                 [1, 6, 169]], 2)
    got = [verdict("reshape_layout_aligned", n, graph, 16) for n in graph.nodes[:3]]
    assert [ok for ok, _ in got] == [True, False, True]
    assert got[1][1] == "reads [1, 6, 26, 26] (H x W = 676, not a multiple of 16) into [1, 6, 13, 52]"
    # palm_detection: [1, 1152, 1] from [1, 24, 24, 2], then [1, 864, 1] from [1, 12, 12, 6] -> [1, 18, 24, 2]
    graph = _heads(tmp_path, [[1, 24, 24, 2], [1, 12, 12, 6]], [[1, 1152, 1], [1, 864, 1]], 1)
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16) == (
        False, "reads [1, 12, 12, 6] (H x W = 72, not a multiple of 16) into [1, 18, 24, 2]")
    graph = _heads(tmp_path, [[1, 24, 24, 36], [1, 12, 12, 108]], [[1, 1152, 18], [1, 864, 18]], 1)
    assert verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]


def test_reshape_layout_aligned_says_why(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Reshape", [[1, 12, 12, 6]], [1, 864, 1],
                         consts={"shape": np.array([1, 864, 1], np.int64)})
    assert verdict("reshape_layout_aligned", node, graph, 16) == (
        False, "reads [1, 12, 12, 6] (H x W = 72, not a multiple of 16) into [1, 864, 1]")
    node, graph = single(tmp_path, "Flatten", [[1, 4]], [1, 4])
    assert verdict("reshape_layout_aligned", node, graph, 16) == (False, "Flatten writes 'y' of 4 elements < 16")


def test_reshape_layout_aligned_merges_with_the_reshape_after_it(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 merges two reshapes, also across an Identity it drops (probe graphs, and PP-OCRv2's
    classifier output after its Softmax); a small reshape before the graph's output stays on the CPU."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    graph = onnx_graph(tmp_path, [helper.make_node("Flatten", ["x"], ["t"], name="first"),
                                  helper.make_node("Flatten", ["t"], ["y"], name="second")],
                       {"x": ([1, 4], FLOAT)}, {"y": ([1, 4], FLOAT)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16) == (True, "merged with the reshape after it")
    assert not verdict("reshape_layout_aligned", graph.nodes[1], graph, 16)[0]
    nodes = [helper.make_node("Flatten", ["x"], ["t"], name="first"), helper.make_node("Identity", ["t"], ["u"]),
             helper.make_node("Flatten", ["u"], ["y"], name="second")]
    graph = onnx_graph(tmp_path, nodes, {"x": ([1, 4], FLOAT)}, {"y": ([1, 4], FLOAT)})
    assert verdict("reshape_layout_aligned", graph.nodes[0], graph, 16) == (True, "merged with the reshape after it")
    graph = onnx_graph(tmp_path, nodes[:2], {"x": ([1, 4], FLOAT)}, {"u": ([1, 4], FLOAT)})
    assert not verdict("reshape_layout_aligned", graph.nodes[0], graph, 16)[0]


def test_reshaped_columns_max(tmp_path: Path) -> None:
    """ddddocr's OCR head: Gemm [32, 1024] x [1024, 8210], reshaped to [32, 1, 8210]."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    def head(columns: int, rows: int, reader: str) -> OpGraph:
        then = helper.make_node("Reshape", ["g", "shape"], ["y"], name="then") if reader == "Reshape" else \
            helper.make_node("Sigmoid", ["g"], ["y"], name="then")
        out = [rows, 1, columns] if reader == "Reshape" else [rows, columns]
        return onnx_graph(tmp_path, [helper.make_node("Gemm", ["x", "w"], ["g"], name="head", transB=1), then],
                          {"x": ([rows, 64], FLOAT)}, {"y": (out, FLOAT)},
                          {"w": np.zeros((columns, 64), np.float32), "shape": np.array(out[:3], np.int64)})

    graph = head(8210, 32, "Reshape")
    assert verdict("reshaped_columns_max", graph.nodes[0], graph, 8192) == (
        False, "Gemm writes 8210 columns > 8192 over 32 rows to a reshape")
    for columns, rows, reader in ((8192, 32, "Reshape"), (8210, 32, "Sigmoid"), (8210, 1, "Reshape")):
        graph = head(columns, rows, reader)
        assert verdict("reshaped_columns_max", graph.nodes[0], graph, 8192)[0], (columns, rows, reader)


@pytest.mark.parametrize(("plane", "transposed", "trans_b", "ok"), [
    ((19, 19), True, False, False),  # chess-fen-detector's head: the NHWC Transpose folded into the weights
    ((19, 19), False, True, False), ((9, 9), False, True, False), ((7, 8), False, True, False),
    ((16, 16), False, True, True), ((8, 8), False, True, True),  # planes of a multiple of 16
    ((7, 7), False, True, True), ((3, 3), True, False, True),  # folded into the dense layer as its kernel
    ((19, 19), True, True, True),  # a Transpose the compiler keeps: not this reshape
])
def test_dense_plane_aligned(tmp_path: Path, plane: tuple[int, int], transposed: bool, trans_b: bool,
                             ok: bool) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import flattened_dense_onnx

    graph = read_graph(flattened_dense_onnx(tmp_path / "d.onnx", 8, *plane, transposed=transposed, trans_b=trans_b))
    dense, relu, conv = (next(n for n in graph.nodes if n.name == name) for name in ("dense", "relu1", "relu0"))
    for node in (dense, relu):
        assert verdict("dense_plane_aligned", node, graph, 16)[0] is ok
    assert verdict("dense_plane_aligned", conv, graph, 16)[0]
    if not ok:
        assert verdict("dense_plane_aligned", dense, graph, 16)[1] == (
            f"Gemm 'dense' reads a flatten of [1, 8, {plane[0]}, {plane[1]}]: an H x W plane of "
            f"{plane[0] * plane[1]} elements, not a multiple of 16, wider than 7")


@pytest.mark.parametrize(("rank", "auto_pad", "ok"), [(3, "SAME_UPPER", False), (3, "SAME_LOWER", False),
                                                      (3, "NOTSET", True), (3, "VALID", True), (4, "SAME_UPPER", True)])
def test_conv1d_explicit_pads(tmp_path: Path, rank: int, auto_pad: str, ok: bool) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import auto_padded_conv_onnx

    graph = read_graph(auto_padded_conv_onnx(tmp_path / "c.onnx", rank, auto_pad))
    conv = next(n for n in graph.nodes if n.op == "Conv")
    assert verdict("conv1d_explicit_pads", conv, graph, True)[0] is ok
    assert verdict("conv1d_explicit_pads", conv, graph, False)[0]


def test_keeps_every_element(tmp_path: Path) -> None:
    """minilm_l6's GatherND of a (1, 64) mask by (1, 1, 1, 64, 2) constant indices, and a GatherND of one row."""
    every = np.stack([np.zeros(64, np.int64), np.arange(64)], axis=-1).reshape(1, 1, 1, 64, 2)
    node, graph = single(tmp_path, "GatherND", [[1, 64]], [1, 1, 1, 64], consts={"i": every})
    assert verdict("keeps_every_element", node, graph, True) == (True, "a reshape of its input")
    node, graph = single(tmp_path, "GatherND", [[2, 64]], [1, 64], consts={"i": np.array([[0]], np.int64)})
    assert verdict("keeps_every_element", node, graph, True) == (False, "GatherND selects a part of (2, 64)")


def _run_time_expand(tmp_path: Path) -> tuple[OpGraph, dict[str, Any]]:
    """The graph of tests/verify/models.run_time_expand_onnx and its nodes by name."""
    from edgepipe.support import read_graph
    from tests.verify.models import run_time_expand_onnx

    graph = read_graph(run_time_expand_onnx(tmp_path / "expand.onnx"))
    return graph, {node.name: node for node in graph.nodes}


def test_shape_input_stored(tmp_path: Path) -> None:
    graph, nodes = _run_time_expand(tmp_path)
    assert verdict("shape_input_stored", nodes["expand_computed"], graph, True) == (
        False, "Expand shape 'target' computed at run time by Concat")
    assert verdict("shape_input_stored", nodes["expand_stored"], graph, True)[0]


def test_reads_no_run_time_shape(tmp_path: Path) -> None:
    graph, nodes = _run_time_expand(tmp_path)
    assert verdict("reads_no_run_time_shape", nodes["add"], graph, True) == (
        False, "Add reads 'zeros', which Expand shapes at run time")
    assert verdict("reads_no_run_time_shape", nodes["relu"], graph, True)[0]


def test_value_attribute_written(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import default_constant_of_shape_onnx

    bare = read_graph(default_constant_of_shape_onnx(tmp_path / "bare.onnx", False))
    assert verdict("value_attribute_written", bare.nodes[0], bare, True) == (
        False, "ConstantOfShape leaves its value attribute to the default (write value = 0 into the node)")
    written = read_graph(default_constant_of_shape_onnx(tmp_path / "written.onnx", True))
    assert verdict("value_attribute_written", written.nodes[0], written, True)[0]


def test_constants_not_nan(tmp_path: Path) -> None:
    from edgepipe.support import read_graph
    from tests.verify.models import nan_fill_onnx

    masked = read_graph(nan_fill_onnx(tmp_path / "nan.onnx", float("nan")))
    where = next(n for n in masked.nodes if n.op == "Where")
    assert verdict("constants_not_nan", where, masked, True) == (
        False, "Where reads constant 'fill' holding NaN (replace it by a finite value)")
    assert all(verdict("constants_not_nan", n, masked, True)[0] for n in masked.nodes if n.op != "Where")
    zeros = read_graph(nan_fill_onnx(tmp_path / "zero.onnx", 0.0))
    assert all(verdict("constants_not_nan", n, zeros, True)[0] for n in zeros.nodes)


def test_in_softmax_pattern(tmp_path: Path) -> None:
    """An Exp read by a ReduceSum and by a Div by that sum is a softmax's; one behind a Transpose is not."""
    from onnx import helper

    from tests.support.graphs import onnx_graph

    axes = {"ax": np.array([1], np.int64)}
    direct = [helper.make_node("Exp", ["x"], ["e"], name="exp"),
              helper.make_node("ReduceSum", ["e", "ax"], ["s"], name="sum"),
              helper.make_node("Div", ["e", "s"], ["y"], name="div")]
    graph = onnx_graph(tmp_path, direct, {"x": ([1, 3, 8], FLOAT)}, {"y": ([1, 3, 8], FLOAT)}, axes)
    assert verdict("in_softmax_pattern", graph.nodes[0], graph, True)[0]
    moved = [direct[0], helper.make_node("Transpose", ["e"], ["t"], name="tr", perm=[0, 2, 1]),
             helper.make_node("ReduceSum", ["t", "ax"], ["s"], name="sum"),
             helper.make_node("Div", ["t", "s"], ["y"], name="div")]
    graph = onnx_graph(tmp_path, moved, {"x": ([1, 3, 8], FLOAT)}, {"y": ([1, 8, 3], FLOAT)}, axes)
    assert verdict("in_softmax_pattern", graph.nodes[0], graph, True) == (
        False, "Exp 'exp' is not the Exp of a decomposed softmax")


@pytest.mark.parametrize(("length", "channels", "npu"), [
    (1024, 4, True), (1025, 4, False), (2001, 4, False), (1100, 12, False), (1200, 16, True), (2000, 32, True)])
def test_row_transpose_aligned(tmp_path: Path, length: int, channels: int, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588 (tests/verify/test_rknn.py: one-row maps moved to NCHW)."""
    from edgepipe.support import read_graph
    from tests.verify.models import one_row_conv_onnx

    graph = read_graph(one_row_conv_onnx(tmp_path / "row.onnx", length, channels))
    node = next(n for n in graph.nodes if n.op == "Transpose")
    assert verdict("row_transpose_aligned", node, graph, True)[0] is npu
    assert verdict("row_transpose_aligned", node, graph, False)[0] is True
    unsqueeze = next(n for n in graph.nodes if n.op == "Unsqueeze")  # on the NPU when the Transpose is not
    assert verdict("reshape_layout_aligned", unsqueeze, graph, 16)[0] is (not npu or length * channels % 16 == 0)


@pytest.mark.parametrize(("channels", "width", "reader", "npu"), [
    (6, 1, "Add", True), (6, 1, "Relu", True), (3, 2, "Add", True)])
def test_reshape_layout_aligned_of_a_conv_output_squeezed_for_an_add(tmp_path: Path, channels: int, width: int,
                                                                      reader: str, npu: bool) -> None:
    """Probed with rknn-toolkit2 2.5.0 on RK3588: the Add gets a 4-D input again and both reshapes are dropped."""
    from edgepipe.support import read_graph
    from tests.verify.models import squeezed_conv_onnx

    graph = read_graph(squeezed_conv_onnx(tmp_path / "sq.onnx", channels, width, reader))
    node = next(n for n in graph.nodes if n.op == "Squeeze")
    ok, detail = verdict("reshape_layout_aligned", node, graph, 16)
    assert ok is npu and "the two reshapes cancel" in detail, detail
