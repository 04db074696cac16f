"""One test per constraint of edgepipe/rules/graph_io.py (the opset, graph inputs and graph outputs): a graph that fails
it and one that passes."""

from __future__ import annotations

from pathlib import Path

from onnx import TensorProto

from tests.models.graphs import single
from tests.unit.rules.graphs import verdict

FLOAT = TensorProto.FLOAT


def test_opset_max(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0's loader: "Unsupport onnx opset 21, need <= 19"."""
    from edgepipe.support import read_graph
    from tests.models.probes.convolutions import conv_net_onnx

    graph = read_graph(conv_net_onnx(tmp_path / "c21.onnx", ["Relu"], opset=21))
    assert graph.opset == 21
    assert verdict("opset_max", graph.nodes[0], graph, 19) == (False, "the model imports ONNX opset 21 > 19")
    assert verdict("opset_max", graph.nodes[1], graph, 19)[0]  # named once, on the first node
    assert verdict("opset_max", graph.nodes[0], graph, 21)[0]


def test_not_graph_output(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("not_graph_output", node, graph, True) == (False, "Relu writes graph output 'y'")
    assert verdict("not_graph_output", node, graph, False)[0]


def test_not_graph_input(tmp_path: Path) -> None:
    node, graph = single(tmp_path, "Relu", [[1, 4]], [1, 4])
    assert verdict("not_graph_input", node, graph, True) == (False, "Relu reads graph input 'x0'")
    assert verdict("not_graph_input", node, graph, False)[0]


def test_not_graph_input_through_a_transpose(tmp_path: Path) -> None:
    """ONNX Runtime's layout transformation cancels a graph input's Transpose (tf2onnx's NHWC-to-NCHW one in
    open_nsfw) against the one it inserts, so the QuantizeLinear after it reads the graph input (probed)."""
    from edgepipe.support import read_graph
    from tests.models.probes.inputs import nhwc_input_onnx
    from tests.models.probes.onnx_files import qdq_onnx

    graph = read_graph(qdq_onnx(nhwc_input_onnx(tmp_path / "f.onnx"), tmp_path / "q.onnx", (1, 16, 16, 3)))
    quantize = next(n for n in graph.nodes if n.op == "QuantizeLinear" and n.inputs[0].name == "t")
    assert verdict("not_graph_input", quantize, graph, True) == (False, "QuantizeLinear reads graph input 'x'")
    conv = next(n for n in graph.nodes if n.op == "Conv")
    assert verdict("not_graph_input", conv, graph, True)[0]


def test_graph_input_dtypes_not_in(tmp_path: Path) -> None:
    """rknn-toolkit2 2.5.0 refuses an int16 or uint16 model input ("Not support input data type", NVIDIA MarbleNet's
    int16 audio) and its compiler aborts on a uint8 input ("Not Support Dtype: 2") even when a Cast makes it float
    at once (probed on RK3588 and RK3576; int8, float16 and int32 inputs build)."""
    node, graph = single(tmp_path, "Cast", [[1, 4]], [1, 4], dtype=TensorProto.INT16, to=TensorProto.FLOAT)
    assert verdict("graph_input_dtypes_not_in", node, graph, ["int16"]) == (
        False, "Cast reads graph input 'x0' of type int16")
    assert verdict("graph_input_dtypes_not_in", node, graph, ["uint8"]) == (True, "no such input")
