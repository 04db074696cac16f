"""Padded MaxPools are rewritten before onnx2tf so the float TFLite computes the ONNX model's max
(edgepipe.export.onnx_max_pool_pads): onnx2tf pads them with zeros when it writes the full-integer TFLite."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from edgepipe.data.dataset import Dataset

#: (input side, kernel, stride, pads, ceil_mode): MTCNN RNet's two ceil-mode pools (22 -> 11 pads the end, as
#: TensorFlow's SAME does; 9 -> 4 pads nothing), a stride-3 ceil-mode pool (10 -> 4: its end padding of 2 is not
#: SAME), a ResNet stem's pads=1 pool on an even side (not SAME) and on an odd side (SAME), an unpadded pool.
POOLS = [(22, 3, 2, 0, 1), (9, 3, 2, 0, 1), (10, 3, 3, 0, 1), (8, 3, 2, 1, 0), (7, 3, 2, 1, 0), (10, 2, 2, 0, 0)]


def _pool_onnx(path: Path, side: int, kernel: int, stride: int, pad: int, ceil: int) -> Path:
    """x [1, 3, side, side] -> Neg -> MaxPool -> y: mostly negative maxima, which a zero padding would change."""
    import onnx
    from onnx import TensorProto, helper

    pool = {"kernel_shape": [kernel, kernel], "strides": [stride, stride], "pads": [pad] * 4, "ceil_mode": ceil}
    nodes = [helper.make_node("Neg", ["x"], ["n"], name="neg"),
             helper.make_node("MaxPool", ["n"], ["y"], name="pool", **pool)]
    graph = helper.make_graph(nodes, "pool",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, side, side])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(onnx.shape_inference.infer_shapes(model), str(path))
    return path


def _run(model: object, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize(("side", "kernel", "stride", "pad", "ceil"), POOLS)
def test_rewritten_pools_compute_the_same_max(tmp_path: Path, side: int, kernel: int, stride: int, pad: int,
                                              ceil: int) -> None:
    import onnx

    from edgepipe.export.onnx_max_pool_pads import exact_max_pools

    model = onnx.load(str(_pool_onnx(tmp_path / "p.onnx", side, kernel, stride, pad, ceil)))
    x = np.random.default_rng(side).normal(0, 1, (1, 3, side, side)).astype(np.float32) + 1.0
    want = _run(model, x)
    rewritten = exact_max_pools(model)
    assert rewritten == (0 if (side, pad, ceil) == (7, 1, 0) else 1 if pad or ceil else 0)  # 7: pads are SAME
    attrs = {a.name: onnx.helper.get_attribute_value(a) for n in model.graph.node if n.op_type == "MaxPool"
             for a in n.attribute}
    assert attrs.get("ceil_mode", 0) == 0
    np.testing.assert_array_equal(_run(model, x), want)
    if (side, pad, ceil) in ((10, 0, 1), (8, 1, 0)):  # not TensorFlow's SAME: the edges are repeated
        assert {n.op_type for n in model.graph.node} >= {"Slice", "Concat"}
        assert attrs["pads"] == [0, 0, 0, 0]


def test_ceil_mode_pool_after_negative_values_converts_exactly(tmp_path: Path) -> None:
    """MTCNN RNet (held out: facenet-pytorch): onnx2tf's float TFLite had its box outputs at cosine 0.988 and
    was refused at export; with the pools rewritten it computes the ONNX model's outputs."""
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import convert_onnx_to_tflite

    source = _pool_onnx(tmp_path / "p.onnx", 22, 3, 2, 0, 1)
    x = np.random.default_rng(0).normal(0, 1, (8, 1, 3, 22, 22)).astype(np.float32) + 1.0
    data = Dataset(path=tmp_path / "calib.npz", inputs=(x[:, 0],), labels=None, sha256="")
    converted = convert_onnx_to_tflite(source, tmp_path / "p.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
    assert source.read_bytes() == (tmp_path / "p.onnx").read_bytes()  # the artifact itself is not rewritten


@pytest.mark.parametrize("before", ["Relu", "Neg"])
def test_pools_after_a_relu_are_left_to_onnx2tf(tmp_path: Path, before: str) -> None:
    """A pool reading a Relu's output is never negative: onnx2tf's zero padding is exact there, and its graph
    stays as onnx2tf writes it."""
    import onnx

    from edgepipe.export.onnx_max_pool_pads import exact_max_pools

    model = onnx.load(str(_pool_onnx(tmp_path / "p.onnx", 8, 3, 2, 1, 0)))
    model.graph.node[0].op_type = before
    assert exact_max_pools(model) == (0 if before == "Relu" else 1)
