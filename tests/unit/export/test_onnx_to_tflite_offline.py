"""onnx2tf reads no network: for a model whose only input is a 3-channel NHWC image it loads sample images even
with calibration data given, and edgepipe writes them into its working folder first (open_nsfw, held out: the
TFLite export failed offline on a GitHub download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _nhwc_onnx(path: Path) -> Path:
    """x [1, 8, 8, 3] NHWC -> Transpose to NCHW -> 3x3 Conv (4 channels) -> Relu."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(1).normal(0, .4, (4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["t", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "nhwc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], [weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_an_nhwc_image_model_converts_without_the_network(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from edgepipe.data.dataset import Dataset
    from edgepipe.export.float_match import float_mismatch
    from edgepipe.export.onnx_to_tflite import SAMPLE_IMAGES, convert_onnx_to_tflite

    for proxy in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):  # any download fails at once
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    source = _nhwc_onnx(tmp_path / "m.onnx")
    images = np.random.default_rng(0).uniform(0, 1, (8, 8, 8, 3)).astype(np.float32)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(images,), labels=None, sha256="")
    converted = convert_onnx_to_tflite(source, tmp_path / "m.tflite", data, ["x"], tmp_path / "scratch")
    assert float_mismatch(source, converted, data) is None
    assert np.load(tmp_path / "scratch" / SAMPLE_IMAGES).shape == (8, 8, 8, 3)
