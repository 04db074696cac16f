"""Exact rewrites before quantization: decomposed HardSwish fused, constant affine ops folded into the Conv.

On :func:`tests.models.onnx_exports.decomposed_ops` (the shape of a PP-LCNet Paddle export) through
``prepare_onnx``, and on the real PP-OCRv4 text detector, where the decomposed HardSwish made min/max PTQ
lose the model (output cosine 0.20).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from edgepipe.quantize.onnx_fusions import fold_affine_into_conv, fuse_decomposed_hardswish, name_nodes
from edgepipe.quantize.onnx_prepare import prepare_onnx
from tests.models.onnx_exports import decomposed_ops


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def test_prepare_fuses_hardswish_and_folds_the_affine_block(tmp_path: Path) -> None:
    source = decomposed_ops(tmp_path / "source.onnx")
    prepared = prepare_onnx(source, tmp_path / "prep.onnx")
    model = onnx.load(str(prepared.path))
    ops = Counter(n.op_type for n in model.graph.node)
    assert ops["HardSwish"] == 1 and ops["Clip"] == 0 and ops["Div"] == 0
    assert ops["Conv"] == 2 and ops["Mul"] == 0  # scale and shift live in conv1 now
    assert ops["Add"] == 1  # the (16,) row shift broadcasts over the width, not the channels: kept
    assert prepared.opset >= 14
    assert any("1 decomposed HardSwish" in n and "2 constant Mul/Div/Add/Sub" in n for n in prepared.notes)
    x = np.random.default_rng(0).normal(0, 1, (1, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(_run(prepared.path, x), _run(source, x), rtol=1e-4, atol=1e-4)


def test_a_chain_with_another_reader_is_not_fused(tmp_path: Path) -> None:
    model = onnx.load(str(decomposed_ops(tmp_path / "source.onnx", opset=14)))
    model.graph.output.append(onnx.helper.make_tensor_value_info("relu6", onnx.TensorProto.FLOAT, None))
    assert fuse_decomposed_hardswish(model) == 0  # relu6 is read by the graph output too


def test_every_node_gets_a_unique_name(tmp_path: Path) -> None:
    model = onnx.load(str(decomposed_ops(tmp_path / "source.onnx")))
    for node in model.graph.node[:3]:
        node.name = ""
    model.graph.node[3].name = "Conv_0"  # the name the first unnamed node would get
    assert name_nodes(model) == 3
    names = [n.name for n in model.graph.node]
    assert all(names) and len(set(names)) == len(names)


def test_fold_leaves_a_conv_with_a_computed_bias_alone(tmp_path: Path) -> None:
    model = onnx.load(str(decomposed_ops(tmp_path / "source.onnx")))
    conv = model.graph.node[0]
    model.graph.node.insert(0, onnx.helper.make_node("Identity", ["b1"], ["b1_computed"], name="bias_id"))
    conv.input[2] = "b1_computed"
    assert fold_affine_into_conv(model) == 0


@pytest.mark.thirdparty
def test_ppocr_detector_min_max_ptq_no_longer_collapses(tmp_path: Path) -> None:
    """PP-OCRv4's detector: 24 decomposed HardSwish and its affine blocks rewritten; min/max PTQ on rendered pages
    goes from cosine 0.20 (int8 products of x * relu6(x + 3)) to above 0.8 (320x320, 8 rendered pages)."""
    from edgepipe.data.dataset import Dataset
    from edgepipe.metrics.label_free import cosine
    from edgepipe.quantize.onnx_qdq import quantize_onnx
    from edgepipe.quantize.recipe import QuantRecipe
    from tests.realmodels import fetch
    from tests.realmodels.data.text_images import write_pages

    source = onnx.load(str(fetch.model_file(fetch.RAPIDOCR, "rapidocr_onnxruntime/models/ch_PP-OCRv4_det_infer.onnx")))
    for dim, size in zip(source.graph.input[0].type.tensor_type.shape.dim, (1, 3, 320, 320)):
        dim.Clear()
        dim.dim_value = size
    for output in source.graph.output:
        output.type.tensor_type.shape.Clear()
    float_path = tmp_path / "det.onnx"
    onnx.save(source, str(float_path))
    from PIL import Image

    pages = write_pages(tmp_path / "pages", 8, (640, 640), 0)
    mean, std = np.array([0.485, 0.456, 0.406], np.float32), np.array([0.229, 0.224, 0.225], np.float32)
    images = np.stack([((np.asarray(Image.open(p).convert("RGB").resize((320, 320)), np.float32) / 255 - mean) / std)
                       .transpose(2, 0, 1) for p in sorted(pages.glob("*.png"))])
    data = Dataset(tmp_path / "pages.npz", (images,), None, "d" * 64)
    prepared = prepare_onnx(float_path, tmp_path / "prep.onnx")
    assert any("24 decomposed HardSwish" in note for note in prepared.notes), prepared.notes
    int8 = quantize_onnx(float_path, tmp_path / "int8.onnx", data, QuantRecipe(method="minmax"), tmp_path)
    options = ort.SessionOptions()
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    reference = ort.InferenceSession(str(float_path), providers=["CPUExecutionProvider"])
    quantized = ort.InferenceSession(str(int8), options, providers=["CPUExecutionProvider"])
    ref = np.concatenate([reference.run(None, {"x": x[None]})[0] for x in images])
    got = np.concatenate([quantized.run(None, {"x": x[None]})[0] for x in images])
    assert cosine(ref, got) > 0.8
