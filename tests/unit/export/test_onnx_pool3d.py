"""3-D pools become 2-D pools before onnx2tf (edgepipe.export.onnx_pool3d): TFLite has no 3-D pooling builtin and
onnx2tf 1.28.8 writes ``FlexMaxPool3D``/``FlexAvgPool3D``, which LiteRT's builtin resolver and every NPU refuse
(a video pulse estimator and a brain-MRI segmenter among the real models; tests/realmodels has the first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset
from tests.models.probes.onnx_files import ort_outputs, save_opset

SHAPE = [1, 2, 6, 7, 8]  # N, C, D, H, W: odd sizes so that ceil_mode and padding reach the edges


def _pooled_onnx(path: Path, op: str, conv: bool = False, **attrs: Any) -> Path:
    """x [1, 2, 6, 7, 8] (-> Conv3D 1x1x1 when ``conv``, a linear mix with negative values) -> 3-D ``op``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    nodes, source, weights = [], "x", []
    if conv:
        kernel = np.random.default_rng(2).normal(0, 1, (2, 2, 1, 1, 1)).astype(np.float32)
        weights.append(numpy_helper.from_array(kernel, "k"))
        nodes.append(helper.make_node("Conv", ["x", "k"], ["mixed"], name="mix"))
        source = "mixed"
    nodes.append(helper.make_node(op, [source], ["y"], name="pool", **attrs))
    graph = helper.make_graph(nodes, "pool3d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list("ncdhw"))], weights)
    save_opset(graph, path, 17)
    onnx.checker.check_model(onnx.load(str(path)))
    return path


def _inputs(count: int = 4) -> np.ndarray:
    return np.random.default_rng(1).normal(0, 1, (count, *SHAPE)).astype(np.float32)


@pytest.mark.parametrize(("op", "attrs"), [
    ("MaxPool", {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}),
    ("MaxPool", {"kernel_shape": [1, 2, 2], "strides": [1, 2, 2]}),  # a plane-only pool: no depth step
    ("MaxPool", {"kernel_shape": [3, 1, 1], "strides": [2, 1, 1]}),  # a depth-only pool: no plane step
    ("MaxPool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 0, 1, 1, 1, 0], "ceil_mode": 1}),
    ("AveragePool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1]}),
    ("AveragePool", {"kernel_shape": [3, 3, 3], "strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1],
                     "count_include_pad": 1}),
    ("AveragePool", {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
    ("MaxPool", {"kernel_shape": [2, 2, 2], "auto_pad": "VALID"})])
def test_a_3d_pool_becomes_2d_pools_and_computes_the_same(tmp_path: Path, op: str, attrs: dict[str, Any]) -> None:
    import onnx

    from edgepipe.export.onnx_pool3d import pools_3d_as_2d

    model = onnx.load(str(_pooled_onnx(tmp_path / "p.onnx", op, **attrs)))
    xs = _inputs()
    want = [ort_outputs(model, {"x": x})[0] for x in xs]
    assert pools_3d_as_2d(model) == 1
    onnx.checker.check_model(model)
    pools = [n for n in model.graph.node if n.op_type == op]
    assert pools and all(len(onnx.helper.get_attribute_value(a)) == 2 for n in pools for a in n.attribute
                         if a.name == "kernel_shape")
    for x, expected in zip(xs, want, strict=True):
        np.testing.assert_allclose(ort_outputs(model, {"x": x})[0], expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("attrs", [{"kernel_shape": [2, 2, 2], "dilations": [2, 1, 1]},
                                   {"kernel_shape": [2, 2, 2], "auto_pad": "SAME_UPPER"}])
def test_a_pool_the_rewrite_cannot_carry_stays(tmp_path: Path, attrs: dict[str, Any]) -> None:
    import onnx

    from edgepipe.export.onnx_pool3d import pools_3d_as_2d

    model = onnx.load(str(_pooled_onnx(tmp_path / "p.onnx", "MaxPool", **attrs)))
    before = model.SerializeToString()
    assert pools_3d_as_2d(model) == 0
    assert model.SerializeToString() == before


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_a_3d_pooling_model_converts_to_builtins_and_computes_the_same(tmp_path: Path, op: str) -> None:
    """Without the rewrite onnx2tf's TFLite needs the Flex delegate; with it LiteRT's builtins run it."""
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite
    from edgepipe.graph.read import read_graph

    source = _pooled_onnx(tmp_path / "p.onnx", op, conv=True, kernel_shape=[2, 2, 2], strides=[2, 2, 2])
    data = Dataset(path=tmp_path / "calib.npz", inputs=(_inputs(8),), labels=None, sha256="", whole=(True,))
    converted = convert_onnx_to_tflite(source, tmp_path / "p.tflite", data, ["x"], tmp_path / "scratch")
    assert not [n.op for n in read_graph(converted).nodes if "Flex" in n.op or "POOL_3D" in n.op]
    assert float_mismatch(source, converted, data) is None
