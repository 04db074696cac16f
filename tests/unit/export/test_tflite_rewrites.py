"""A TFLite tf2onnx cannot read becomes one it can, computing the same (edgepipe.export.tflite_rewrites), and its
ONNX is checked against LiteRT (edgepipe.export.tflite_to_onnx): sparse weights are densified, MediaPipe's
Convolution2DTransposeBias becomes TRANSPOSE_CONV + ADD, the real part or the magnitude of an RFFT2D becomes
MatMuls, an int8 TFLite is converted dequantized with float inputs and outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.models.formats import magnitude_fft_tflite, real_fft_tflite, sparse_tflite, transpose_conv_bias_tflite


def _litert(path: Path, x: np.ndarray) -> np.ndarray:
    from edgepipe.runtimes import open_runner

    with open_runner(path) as runner:
        return runner.infer([x])[0]


def _onnx(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def _ops(path: Path) -> list[str]:
    from edgepipe.graph.read import read_graph

    return [node.op for node in read_graph(path).nodes]


@pytest.mark.parametrize(("make", "shape", "before", "after", "route"), [
    (sparse_tflite, (1, 8, 8, 4), ["DENSIFY", "CONV_2D"], ["CONV_2D"], "1 sparse weight(s) densified"),
    (transpose_conv_bias_tflite, (1, 5, 5, 4), ["CUSTOM:Convolution2DTransposeBias"], ["TRANSPOSE_CONV", "ADD"],
     "1 Convolution2DTransposeBias op(s) as TRANSPOSE_CONV + ADD"),
    (real_fft_tflite, (1, 6, 64), ["MUL", "RESHAPE", "RFFT2D", "RESHAPE", "CAST", "MUL"],
     ["MUL", "RESHAPE", "FULLY_CONNECTED", "RESHAPE", "MUL"],
     "the real part of 1 RFFT2D op(s) as a MatMul with the cosine basis"),
    (magnitude_fft_tflite, (1, 6, 64), ["MUL", "RESHAPE", "RFFT2D", "RESHAPE", "COMPLEX_ABS", "ADD", "LOG"],
     ["MUL", "RESHAPE", "FULLY_CONNECTED", "FULLY_CONNECTED", "MUL", "MUL", "ADD", "SQRT", "RESHAPE", "ADD", "LOG"],
     "the magnitude of 1 RFFT2D op(s) as MatMuls with the cosine and sine bases")])
def test_the_rewritten_tflite_computes_the_same_and_its_onnx_matches_litert(
        tmp_path: Path, make: object, shape: tuple[int, ...], before: list[str], after: list[str],
        route: str) -> None:
    from edgepipe.export.tflite_rewrites import readable_for_tf2onnx
    from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx

    source = make(tmp_path / "source.tflite")  # type: ignore[operator]
    assert [op for op in _ops(source) if op not in ("RELU",)] == before
    rewritten = readable_for_tf2onnx(source, tmp_path / "readable.tflite")
    assert [op for op in _ops(tmp_path / "readable.tflite") if op not in ("RELU",)] == after
    x = np.random.default_rng(1).random(shape, dtype=np.float32)
    want = _litert(source, x)
    np.testing.assert_allclose(_litert(tmp_path / "readable.tflite", x), want, rtol=1e-5, atol=1e-6)
    made = convert_tflite_to_onnx(source, tmp_path / "model.onnx", [[x]])
    assert rewritten.describe() == route and made.route == f"tf2onnx's TFLite front end ({route})"
    np.testing.assert_allclose(_onnx(made.path, x), want, rtol=1e-4, atol=1e-5)
    assert not (tmp_path / ".model.tf2onnx-input.tflite").exists()


def test_an_int8_tflite_becomes_a_float_onnx_of_its_real_values(tmp_path: Path) -> None:
    import onnx

    from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx
    from tests.models.probes.tflite import dynamic_batch_tflite

    source = dynamic_batch_tflite(tmp_path / "int8.tflite", int8=True)
    x = np.random.default_rng(0).random((1, 8, 8, 4), dtype=np.float32)
    made = convert_tflite_to_onnx(source, tmp_path / "model.onnx", [[x]], dequantize=True)
    assert made.route == "tf2onnx's TFLite front end (dequantized)"
    model = onnx.load(str(made.path))
    assert [i.type.tensor_type.elem_type for i in [*model.graph.input, *model.graph.output]] == [
        onnx.TensorProto.FLOAT] * 2
    assert not {"QuantizeLinear", "DequantizeLinear", "Cast"} & {n.op_type for n in model.graph.node}
    got, want = _onnx(made.path, x), _litert(source, x)  # LiteRT's runner gives the int8 output's real values
    assert np.max(np.abs(got - want)) < 0.05 * float(np.max(np.abs(want)))  # within the int8 model's rounding


def test_a_near_zero_output_is_the_same_function_when_its_values_agree() -> None:
    """A mask far below its threshold (1e-9 against 0) has no direction: its cosine says nothing."""
    from edgepipe.export.float_match import same_values

    reference = np.full((1, 16), 1e-9, np.float32)
    assert same_values(reference, np.zeros_like(reference)) == (True, 0.0)
    assert not same_values(np.ones((1, 16), np.float32), -np.ones((1, 16), np.float32))[0]
