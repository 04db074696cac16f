"""Float layers cut from the finished QDQ model: the kept nodes read float, the int8 rest is untouched.

On :func:`tests.models.onnx_exports.paddle_like` through the real ONNX Runtime quantizer, and on silero VAD (a real
model) whose STFT magnitude (``Pow -> Add -> Sqrt``) int8 ruins: keeping layers float through ORT's
``nodes_to_exclude`` scored lower than keeping none there (0.8913 -> 0.8756 with all six Convs float).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from edgepipe.data.dataset import Dataset
from edgepipe.load import load_model
from edgepipe.metrics.label_free import cosine
from edgepipe.quantize.onnx_qdq import mixed_base, preprocess, quantize_onnx
from edgepipe.quantize.qdq_float_nodes import keep_nodes_float, quantized_nodes
from edgepipe.quantize.recipe import QuantRecipe
from tests.models.onnx_exports import image_batches, paddle_like


@pytest.fixture(scope="module")
def paddle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Dataset, Path]:
    folder = tmp_path_factory.mktemp("float_nodes")
    model = load_model(paddle_like(folder / "source.onnx"), input_shapes={"x": [1, 3, 32, 48]})
    onnx.save(model.handle, str(folder / "model.onnx"))
    data = Dataset(folder / "calibration.npz", (image_batches(8, 32, 48, 0),), None, "a" * 64)
    return folder / "model.onnx", data, folder


def _exact(path: Path | onnx.ModelProto, data: Dataset) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    source = path.SerializeToString() if isinstance(path, onnx.ModelProto) else str(path)
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    runs = [session.run(None, dict(zip(names, sample))) for sample in data.samples()]
    return [np.concatenate([r[i] for r in runs]) for i in range(len(runs[0]))]


def _qparams(model: onnx.ModelProto) -> dict[str, bytes]:
    """Scale and zero-point initializers of the QDQ model, by name."""
    return {i.name: i.raw_data for i in model.graph.initializer if i.name.endswith(("_scale", "_zero_point"))}


def test_every_node_float_gives_the_float_model(paddle) -> None:
    float_path, data, folder = paddle
    base = onnx.load(str(mixed_base(float_path, data, QuantRecipe(), folder)))
    prepared = onnx.load(str(preprocess(float_path, folder / "model_prep.onnx")))
    nodes = quantized_nodes(base)
    assert {"conv1", "conv2", "softmax"} <= set(nodes)
    everything, made = keep_nodes_float(base, prepared, nodes)
    assert set(made) == set(nodes)
    assert not any(n.op_type == "DequantizeLinear" for n in everything.graph.node)
    for got, ref in zip(_exact(everything, data), _exact(float_path, data)):
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_a_kept_node_reads_float_and_the_int8_rest_is_unchanged(paddle) -> None:
    float_path, data, folder = paddle
    base = onnx.load(str(mixed_base(float_path, data, QuantRecipe(), folder)))
    prepared = onnx.load(str(preprocess(float_path, folder / "model_prep.onnx")))
    model, made = keep_nodes_float(base, prepared, ["conv2", "no_such_node"])
    assert made == ["conv2"]
    producer = {out: n for n in model.graph.node for out in n.output}
    conv2 = next(n for n in model.graph.node if n.name == "conv2")
    assert all(producer.get(name) is None or producer[name].op_type != "DequantizeLinear" for name in conv2.input)
    kept = _qparams(model)
    assert kept and all(base_value == kept[name] for name, base_value in _qparams(base).items() if name in kept)
    onnx.checker.check_model(model)


def test_recipe_keep_float_goes_through_the_edit(paddle) -> None:
    float_path, data, folder = paddle
    full = quantize_onnx(float_path, folder / "int8.onnx", data, QuantRecipe(), folder)
    mixed = quantize_onnx(float_path, folder / "mixed.onnx", data, QuantRecipe(keep_float=("softmax", "conv1")),
                          folder)
    reference = _exact(float_path, data)
    full_cos = min(cosine(r, g) for r, g in zip(reference, _exact(full, data)))
    mixed_cos = min(cosine(r, g) for r, g in zip(reference, _exact(mixed, data)))
    assert mixed_cos >= full_cos - 1e-6


@pytest.mark.thirdparty
def test_silero_stft_kept_float_recovers_what_int8_loses(tmp_path: Path) -> None:
    """Keeping the STFT magnitude nodes float lifts silero's worst output from ~0.89 to >= 0.99 on its own
    calibration stream (ORT's nodes_to_exclude lowered it)."""
    from tests.realmodels import zoo

    folder = tmp_path / "silero_vad"
    zoo.prepare(zoo.BY_NAME["silero_vad"], tmp_path, zoo.DataSize(calibration=16, evaluation=4))
    arrays = np.load(folder / "calibration.npz")
    model = load_model(folder / "silero_vad.onnx")
    float_path = tmp_path / "model.onnx"
    onnx.save(model.handle, str(float_path))
    names = [spec.name for spec in model.signature.inputs]
    data = Dataset(folder / "calibration.npz", tuple(arrays[n] for n in names), None, "s" * 64, (False, True))
    stft = [n.name for n in onnx.load(str(preprocess(float_path, tmp_path / "model_prep.onnx"))).graph.node
            if "/stft/" in n.name]
    reference = _exact(float_path, data)
    full = quantize_onnx(float_path, tmp_path / "int8.onnx", data, QuantRecipe(method="percentile"), tmp_path)
    kept = quantize_onnx(float_path, tmp_path / "mixed.onnx", data,
                         QuantRecipe(method="percentile", keep_float=tuple(stft)), tmp_path)
    full_cos = min(cosine(r, g) for r, g in zip(reference, _exact(full, data)))
    kept_cos = min(cosine(r, g) for r, g in zip(reference, _exact(kept, data)))
    assert full_cos < 0.95 and kept_cos > full_cos + 0.04
