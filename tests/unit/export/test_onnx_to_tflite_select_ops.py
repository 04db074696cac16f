"""onnx2tf writes an ONNX op TFLite has no builtin for as a Select TF (Flex) op that LiteRT and every NPU delegate
refuse (PP-OCRv6's recogniser and edgepipe's digits_vit: FlexErf). The export stage names those ops, and when edgepipe
can approximate every one of them in builtin ops (Erf: the tanh form GELU's approximation is made of) it converts once
more that way; its float check decides whether the result is kept. onnx2tf's own replacement (``-rtpo erf``) was
not used: its int8 DIV by ``|x| + 1e-11`` made LiteRT refuse PP-OCRv6 tiny's int8 TFLite."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgepipe.cli import main
from edgepipe.export.onnx_erf import erf_as_tanh
from edgepipe.export.onnx_to_tflite import approximable


def _erf_onnx(path: Path) -> Path:
    """x [1, 8] -> MatMul -> Erf -> y [1, 4]: an Erf onnx2tf does not take for part of a GELU."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).normal(0, 0.7, (8, 4)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="dense"),
             helper.make_node("Erf", ["h"], ["y"], name="erf")]
    graph = helper.make_graph(nodes, "erf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [numpy_helper.from_array(weight, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def test_approximations_only_when_every_select_op_has_one() -> None:
    assert approximable(["FlexErf"]) == ["Erf"]
    assert approximable(["FlexErf", "FlexRFFT"]) is None  # one without: no retry
    assert approximable([]) is None


def test_the_tanh_form_of_erf_is_within_its_bound_and_keeps_the_name(tmp_path: Path) -> None:
    import onnx
    import onnxruntime as ort
    from scipy.special import erf

    model = onnx.load(str(_erf_onnx(tmp_path / "erf.onnx")))
    assert erf_as_tanh(model) == 1
    assert "Erf" not in {n.op_type for n in model.graph.node}
    assert [n.op_type for n in model.graph.node if n.name == "erf"] == ["Tanh"]
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString())
    x = np.random.default_rng(3).normal(0, 3, (400, 1, 8)).astype(np.float32)
    weight = np.random.default_rng(0).normal(0, 0.7, (8, 4)).astype(np.float32)
    got = np.concatenate([session.run(None, {"x": sample})[0] for sample in x])
    exact = erf(np.concatenate([sample @ weight for sample in x]))
    assert np.abs(got - exact).max() < 3.6e-4  # the bound of gelu(approximate="tanh")'s erf, at float32


@pytest.mark.slow
def test_an_erf_becomes_builtin_ops_and_the_tflite_matches_onnx(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ai_edge_litert.interpreter import Interpreter

    from edgepipe.export.tflite_ops import custom_op_names

    source = _erf_onnx(tmp_path / "erf.onnx")
    x = np.random.default_rng(1).normal(0, 1, (8, 1, 8)).astype(np.float32)
    np.savez(tmp_path / "calib.npz", x=x[:, 0])
    out = tmp_path / "out"
    assert main(["export", "-m", str(source), "--calib", str(tmp_path / "calib.npz"), "-o", str(out)]) == 0
    assert sorted(Path(p).name for p in capsys.readouterr().out.split()) == ["model.onnx", "model.tflite"]
    tflite = out / "model.tflite"
    assert custom_op_names(tflite) == []
    interpreter = Interpreter(model_path=str(tflite))
    interpreter.allocate_tensors()
    got = []
    for sample in x:
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], sample)
        interpreter.invoke()
        got.append(interpreter.get_tensor(interpreter.get_output_details()[0]["index"]))
    import onnxruntime as ort

    want = [ort.InferenceSession(str(source)).run(None, {"x": sample})[0] for sample in x]
    np.testing.assert_allclose(np.concatenate(got), np.concatenate(want), atol=3.6e-4)  # the approximation's bound


@pytest.mark.slow
def test_the_build_report_says_which_select_ops_were_rewritten(tmp_path: Path) -> None:
    source = _erf_onnx(tmp_path / "erf.onnx")
    x = np.random.default_rng(2).normal(0, 1, (8, 8)).astype(np.float32)
    np.savez(tmp_path / "calib.npz", x=x)
    code = main(["build", "-q", "--no-cache", "-m", str(source), "--calib", str(tmp_path / "calib.npz"),
                 "-o", str(tmp_path / "build"), "-t", "host-cpu"])
    assert code in (0, 2)  # no evaluation labels: the gate may say "not proven"; the export is what is checked
    report = json.loads((tmp_path / "build" / "erf" / "host-cpu" / "report.json").read_text())
    exports = [s for s in report["stages"] if s["name"] == "export"]
    assert exports[-1]["status"] == "ran"
    assert "Erf approximated in builtin ops by edgepipe" in exports[-1]["detail"]
    assert "Select TF op(s) FlexErf" in exports[-1]["detail"]
    # the int8 TFLite runs too (onnx2tf's -rtpo erf divided by |x| + 1e-11, zero in int8: LiteRT refused it)
    assert {s["name"]: s["status"] for s in report["stages"]}["quantize-tflite"] == "ran"
    assert {"model.tflite", "model_int8.tflite"} <= {a["path"] for a in report["artifacts"]}
