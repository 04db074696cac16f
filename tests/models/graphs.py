"""Tiny ONNX graphs built with onnx.helper, read back through edgepipe's ONNX reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.graph.opgraph import OpGraph, OpNode


def onnx_graph(tmp: Path, nodes: list[Any], inputs: dict[str, tuple[list[Any], int]],
               outputs: dict[str, tuple[list[Any], int]], consts: dict[str, np.ndarray] | None = None,
               opset: int = 13) -> OpGraph:
    """Write the graph to ``tmp`` and read it with :func:`edgepipe.graph.onnx_reader.read_onnx`.

    ``inputs``/``outputs``: name → (shape, onnx elem type); ``consts``: initializers.
    """
    import onnx
    from onnx import helper, numpy_helper

    from edgepipe.graph.onnx_reader import read_onnx

    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info(n, t, s) for n, (s, t) in inputs.items()],
        [helper.make_tensor_value_info(n, t, s) for n, (s, t) in outputs.items()],
        [numpy_helper.from_array(v, k) for k, v in (consts or {}).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp / f"g{len(list(tmp.glob('*.onnx')))}.onnx"
    onnx.save(model, path)
    return read_onnx(path)


def conv(tmp: Path, *, kernel: int = 3, stride: int = 1, dilation: int = 1, auto_pad: str = "VALID",
         size: int = 16, batch: Any = 1, channels: int = 4, group: int = 1, dtype: int = 1) -> tuple[OpNode, OpGraph]:
    """One Conv node (NCHW) with the given geometry; returns (node, graph)."""
    from onnx import helper

    weight = np.ones((channels, channels // group, kernel, kernel), np.float32)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[kernel, kernel],
                            strides=[stride, stride], dilations=[dilation, dilation], auto_pad=auto_pad, group=group)
    graph = onnx_graph(tmp, [node], {"x": ([batch, channels, size, size], dtype)}, {"y": ([], dtype)}, {"w": weight})
    return graph.nodes[0], graph


def single(tmp: Path, op: str, shapes: list[list[Any]], out_shape: list[Any] | None = None, dtype: int = 1,
           consts: dict[str, np.ndarray] | None = None, opset: int = 13, **attrs: Any) -> tuple[OpNode, OpGraph]:
    """One node of ``op`` reading inputs x0, x1, … of ``shapes`` (plus constants) and writing ``y``."""
    from onnx import helper

    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node(op, [*names, *(consts or {})], ["y"], name=op.lower(), **attrs)
    graph = onnx_graph(tmp, [node], {n: (s, dtype) for n, s in zip(names, shapes)},
                       {"y": (out_shape or [], dtype)}, consts, opset)
    return graph.nodes[0], graph


def squeeze_if_onnx(path: Path, columns: int = 16) -> Path:
    """PyTorch's export of ``x.squeeze(2)`` on a dimension it cannot see: ``Shape -> Gather -> Equal -> If``
    (then: Squeeze, else: Identity), with static input shapes, so the condition is known (true) before the
    model runs; then a MatMul with constant weights of ``columns`` columns, its bias Add and a Sigmoid."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    then_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["axes"], name="axes",
                          value=numpy_helper.from_array(np.array([2], np.int64))),
         helper.make_node("Squeeze", ["r", "axes"], ["squeezed"], name="squeeze")], "then", [],
        [helper.make_tensor_value_info("squeezed", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([helper.make_node("Identity", ["r"], ["same"], name="same")], "else", [],
                                    [helper.make_tensor_value_info("same", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["shape"], name="shape"),
             helper.make_node("Gather", ["shape", "two"], ["dim"], name="gather", axis=0),
             helper.make_node("Equal", ["dim", "one"], ["is_one"], name="equal"),
             helper.make_node("If", ["is_one"], ["s"], name="if", then_branch=then_branch, else_branch=else_branch),
             helper.make_node("Transpose", ["s"], ["t"], name="transpose", perm=[0, 2, 1]),
             helper.make_node("MatMul", ["t", "w"], ["m"], name="matmul"),
             helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
             helper.make_node("Sigmoid", ["a"], ["y"], name="sigmoid")]
    consts = {"two": np.array(2, np.int64), "one": np.array(1, np.int64),
              "w": rng.standard_normal((8, columns)).astype(np.float32) * 0.3,
              "b": rng.standard_normal(columns).astype(np.float32) * 0.1}
    graph = helper.make_graph(nodes, "squeeze_if", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                  [1, 8, 1, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in consts.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def loop_onnx(path: Path, trips: int = 3) -> Path:
    """Relu -> a Loop of a constant trip count and a constant true condition whose body adds one to its carried
    [1, 8] tensor -> Sigmoid: the simplest Loop, as a decoder's step loop (SLANet's) is one at heart."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    body = helper.make_graph(
        [helper.make_node("Constant", [], ["one"], name="one", value=numpy_helper.from_array(
            np.ones((1, 8), np.float32))),
         helper.make_node("Add", ["carried", "one"], ["carried_out"], name="step"),
         helper.make_node("Identity", ["condition"], ["condition_out"], name="keep_going")], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("condition", TensorProto.BOOL, []),
         helper.make_tensor_value_info("carried", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("condition_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("carried_out", TensorProto.FLOAT, [1, 8])])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Loop", ["trips", "true", "r"], ["looped"], name="loop", body=body),
             helper.make_node("Sigmoid", ["looped"], ["y"], name="sigmoid")]
    graph = helper.make_graph(nodes, "loop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
                              [numpy_helper.from_array(np.array(trips, np.int64), "trips"),
                               numpy_helper.from_array(np.array(True), "true")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def anchor_decode() -> Any:
    """A YOLOv8-style box decode, x [1, 2, 7]: distances ``d = Relu(x)`` taken from an anchor grid the exporter
    computes from the map's shape (Shape -> Gather -> Range -> Cast -> Unsqueeze), ``y = anchors - d`` (node
    ``/head/Sub``)."""
    from onnx import TensorProto, helper, numpy_helper

    constants = [numpy_helper.from_array(np.array(v, np.int64), n)
                 for n, v in (("two", 2), ("zero", 0), ("one", 1), ("axes", [0, 1]))]
    nodes = [helper.make_node("Relu", ["x"], ["d"]),
             helper.make_node("Shape", ["d"], ["shape"]),
             helper.make_node("Gather", ["shape", "two"], ["n"], axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["steps"]),
             helper.make_node("Cast", ["steps"], ["grid"], to=TensorProto.FLOAT),
             helper.make_node("Unsqueeze", ["grid", "axes"], ["anchors"]),
             helper.make_node("Sub", ["anchors", "d"], ["y"], name="/head/Sub")]
    graph = helper.make_graph(nodes, "anchors", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model
