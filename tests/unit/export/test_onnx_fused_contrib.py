"""Models saved by ONNX Runtime's optimizer (com.microsoft FusedConv, FusedGemm, FusedMatMul) and models with an output
that is a constant of their input shapes (NVIDIA MarbleNet's VAD, held out, had both: its int16 audio [1, 1, 16000],
six FusedConvs, two [1, 51, 1] scores and a signal length; onnx2tf failed at its last Split, ONNX Runtime's quantizer
on '/Softmax_output_0', and edgepipe would then have refused the TFLite for lacking the length)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from edgepipe.cli.app import main
from edgepipe.export.onnx_fused_contrib import CONTRIB_DOMAIN, expand_fused_contrib_ops
from edgepipe.load.onnx_constant_outputs import shape_only_outputs

SAMPLES, HOP, WINDOW = 1600, 32, 64
FRAMES = (SAMPLES - WINDOW) // HOP + 1


def _constant(array: Any, name: str) -> Any:
    from onnx import numpy_helper

    return numpy_helper.from_array(np.asarray(array), name)


def _vad_graph() -> Any:
    """A MarbleNet-shaped VAD: int16 audio, strided Conv1D + ReLU, pointwise Conv1D + ReLU, a transposed MatMul head,
    Softmax and a Split into two scores, and ``signal_len`` computed from the audio's shape."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    constants = [_constant(np.float32(1 / 32768), "scale"),
                 _constant(rng.normal(0, 0.3, (16, 1, WINDOW)).astype(np.float32), "w1"),
                 _constant(rng.normal(0, 0.1, 16).astype(np.float32), "b1"),
                 _constant(rng.normal(0, 0.3, (8, 16, 1)).astype(np.float32), "w2"),
                 _constant(rng.normal(0, 0.1, 8).astype(np.float32), "b2"),
                 _constant(rng.normal(0, 0.5, (8, 2)).astype(np.float32), "head"),
                 _constant(np.array([1, 1], np.int64), "split"), _constant(np.array(2, np.int64), "axis2"),
                 _constant(np.array(HOP, np.int64), "hop"), _constant(np.array([0], np.int64), "zero")]
    make = helper.make_node
    nodes = [make("Cast", ["audio"], ["f"], to=TensorProto.FLOAT), make("Mul", ["f", "scale"], ["x"]),
             make("Conv", ["x", "w1", "b1"], ["c1"], strides=[HOP], kernel_shape=[WINDOW]),
             make("Relu", ["c1"], ["r1"]), make("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[1]),
             make("Relu", ["c2"], ["r2"]), make("Transpose", ["r2"], ["t"], perm=[0, 2, 1]),
             make("MatMul", ["t", "head"], ["logits"]), make("Softmax", ["logits"], ["p"], axis=-1),
             make("Split", ["p", "split"], ["score_silence", "score_active"], axis=-1),
             make("Shape", ["audio"], ["s"]), make("Gather", ["s", "axis2"], ["n"], axis=0),
             make("Div", ["n", "hop"], ["frames"]), make("Unsqueeze", ["frames", "zero"], ["frames1"]),
             make("Cast", ["frames1"], ["signal_len"], to=TensorProto.INT32)]
    scores = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, FRAMES, 1])
              for n in ("score_silence", "score_active")]
    return helper.make_graph(nodes, "vad", [helper.make_tensor_value_info("audio", TensorProto.INT16, [1, 1, SAMPLES])],
                             [*scores, helper.make_tensor_value_info("signal_len", TensorProto.INT32, [1])], constants)


def _ort_optimized(graph: Any, path: Path) -> Path:
    """``graph`` as ONNX Runtime's extended optimizations write it (the real optimizer: FusedConv, FusedMatMul)."""
    import onnx
    import onnxruntime as ort
    from onnx import helper

    plain = path.with_name(f"{path.stem}_plain.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(plain))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(path)
    ort.InferenceSession(str(plain), options, providers=["CPUExecutionProvider"])
    return path


def _audio(count: int = 8) -> np.ndarray:
    return np.random.default_rng(1).integers(-3000, 3000, (count, 1, 1, SAMPLES)).astype(np.int16)


def _run(model: Any, x: np.ndarray) -> list[np.ndarray]:
    """ONNX Runtime's outputs of ``model`` for its one input ``x``."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


def test_ort_fused_ops_expand_into_standard_ops_that_compute_the_same(tmp_path: Path) -> None:
    import onnx

    model = onnx.load(str(_ort_optimized(_vad_graph(), tmp_path / "vad.onnx")))
    fused = sorted(n.op_type for n in model.graph.node if n.domain == CONTRIB_DOMAIN)
    assert fused == ["FusedConv", "FusedConv", "FusedMatMul"]  # what ONNX Runtime 1.23 writes for this graph
    want = _run(model, _audio()[0])
    assert expand_fused_contrib_ops(model) == 3
    assert not [n for n in model.graph.node if n.domain == CONTRIB_DOMAIN]
    onnx.checker.check_model(model)
    for got, expected in zip(_run(model, _audio()[0]), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("activation", "params", "expected"), [
    ("Relu", [], ["Gemm", "Relu"]), ("LeakyRelu", [0.2], ["Gemm", "LeakyRelu"]),
    ("HardSigmoid", [0.25, 0.5], ["Gemm", "HardSigmoid"]), ("Selu", [], None)])
def test_a_fused_gemm_expands_with_its_activation_or_stays(activation: str, params: list[float],
                                                            expected: list[str] | None) -> None:
    import onnx
    from onnx import TensorProto, helper

    rng = np.random.default_rng(3)
    weights = [_constant(rng.normal(0, 1, (4, 3)).astype(np.float32), "w"),
               _constant(rng.normal(0, 1, 3).astype(np.float32), "b")]
    names = ("activation_alpha", "activation_beta")
    node = helper.make_node("FusedGemm", ["x", "w", "b"], ["y"], name="fused", domain=CONTRIB_DOMAIN,
                            activation=activation, **dict(zip(names, params)))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], weights)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid(CONTRIB_DOMAIN, 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    x = rng.normal(0, 1, (2, 4)).astype(np.float32)
    want = _run(model, x) if expected else None
    assert expand_fused_contrib_ops(model) == (1 if expected else 0)
    assert [n.op_type for n in model.graph.node] == (expected or ["FusedGemm"])
    if want is not None:
        onnx.checker.check_model(model)
        np.testing.assert_allclose(_run(model, x)[0], want[0], rtol=1e-5, atol=1e-6)


def test_outputs_computed_from_input_shapes_alone_are_constants() -> None:
    from onnx import helper

    model = helper.make_model(_vad_graph(), opset_imports=[helper.make_opsetid("", 17)])
    assert shape_only_outputs(model) == ("signal_len",)
    model.graph.node[10].input[0] = "f"  # Shape of the cast audio: still its shape only
    assert shape_only_outputs(model) == ("signal_len",)
    model.graph.node[11].input[0] = "x"  # a Gather of the audio's values: data
    assert shape_only_outputs(model) == ()


@pytest.mark.slow
def test_an_ort_optimized_model_with_a_constant_output_builds_for_tflite_and_onnx_targets(tmp_path: Path) -> None:
    """Before: onnx2tf failed ("FusedMatMul OP is not yet implemented"); with the FusedConvs alone it failed later,
    at MarbleNet's Split, after skipping its shape estimation; and ONNX Runtime's quantizer gave no int8 ONNX."""
    source = _ort_optimized(_vad_graph(), tmp_path / "vad.onnx")
    np.savez(tmp_path / "calib.npz", audio=_audio())
    code = main(["build", "-q", "--no-cache", "-m", str(source), "--calib", str(tmp_path / "calib.npz"),
                 "-o", str(tmp_path / "build"), "-t", "host-cpu"])
    assert code in (0, 2)  # no labels: the gate may say "not proven"; the artifacts and their checks are checked
    report = json.loads((tmp_path / "build" / "vad" / "host-cpu" / "report.json").read_text())
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["export"]["status"] == "ran"
    assert "the TFLite has 2 of the model's 3 outputs" in stages["export"]["detail"]
    assert "signal_len" in stages["export"]["detail"]
    assert "3 ONNX Runtime fused op(s)" in stages["quantize"]["detail"]
    assert {"model.tflite", "model_int8.tflite", "model_int8.onnx"} <= {a["path"] for a in report["artifacts"]}
    comparisons = {c["artifact"]: c for c in report["accuracy"]["label_free"]["comparisons"]}
    assert {"model.tflite", "model_int8.tflite", "model_int8.onnx"} <= set(comparisons)
    for artifact, comparison in comparisons.items():  # the TFLite files are judged on the two scores, in order
        assert not comparison["failures"] and not comparison["unmatched_outputs"], comparison
        outputs = [o["output"] for o in comparison["outputs"]]
        assert outputs == ["score_silence", "score_active"] + ([] if artifact.endswith(".tflite") else ["signal_len"])
