"""A float TFLite input gets a float ONNX through tf2onnx's TFLite front end, so ONNX targets and the ladder see it.

On MediaPipe's face detector (zoo model ``blazeface``): the ONNX computes what LiteRT computes, the ladder runs
on it, and mobile-npu (which deploys QDQ ONNX) gets an int8 artifact instead of "not proven". A conversion whose
check fails leaves no ONNX behind. (The routes through TFLite rewrites: tests/thirdparty/test_export_routes.py.)
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from edgepipe.cli import main
from edgepipe.errors import ToolFailed
from edgepipe.export.tflite_to_onnx import convert_tflite_to_onnx
from tests.realmodels import zoo

pytestmark = pytest.mark.slow


def _build(root: Path, name: str, *targets: str) -> Path:
    config = zoo.prepare(zoo.BY_NAME[name], root / "models", zoo.SMALL)
    args = ["build", "-q", "--no-cache", "--config", str(config), "--output", str(root / "out")]
    for target in targets:
        args += ["--target", target]
    assert main(args) in (0, 2)
    return root / "out" / name


def test_blazeface_builds_onnx_artifacts_and_the_onnx_targets(tmp_path: Path) -> None:
    built = _build(tmp_path, "blazeface", "host-cpu", "mobile-npu")
    host = json.loads((built / "host-cpu" / "report.json").read_text())
    export = next(s for s in host["stages"] if s["name"] == "export")
    assert export["status"] == "ran" and "tf2onnx's TFLite front end" in export["detail"]
    paths = {a["path"]: a["precision"] for a in host["artifacts"]}
    assert paths["model.onnx"] == "fp32" and paths["model.tflite"] == "fp32" and "model_int8.onnx" in paths
    tflite = next(c for c in host["accuracy"]["label_free"]["comparisons"] if c["artifact"] == "model.tflite")
    assert tflite["reference"] == "model.onnx" and min(o["cosine"] for o in tflite["outputs"]) > 0.99999
    assert [s["step"] for s in host["quantization"]["steps"]][0] == "ptq"  # the ladder ran, on the ONNX
    npu = json.loads((built / "mobile-npu" / "report.json").read_text())
    int8 = next(e for e in npu["evidence"] if e["requirement"] == "int8 artifact")
    assert int8["outcome"] == "met" and "model_int8.onnx" in int8["detail"], int8


def test_conversion_leaves_nothing_when_the_check_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from edgepipe.export import tflite_to_onnx
    from tests.models.probes.tflite import dynamic_batch_tflite

    source = dynamic_batch_tflite(tmp_path / "float.tflite", int8=False)
    monkeypatch.setattr(tflite_to_onnx, "_unsupported_ops", lambda model: ["TFL_Untranslated"])
    out = tmp_path / "model.onnx"
    with pytest.raises(ToolFailed, match="no ONNX translation for the TFLite op.s. TFL_Untranslated"):
        convert_tflite_to_onnx(source, out, [[np.zeros((1, 8, 8, 4), np.float32)]])
    assert not out.exists() and not list(tmp_path.glob(".*tf2onnx-input*"))


def test_a_dynamic_batch_becomes_the_stored_batch(tmp_path: Path) -> None:
    """A converted Keras model's TFLite keeps batch -1 in its shape signature; tf2onnx made that a dynamic ONNX
    input, which rknn-toolkit2 refuses (the held-out EfficientWord-Net and BirdNET TFLites). The ONNX takes the shape
    the TFLite stores, and computes what LiteRT computes."""
    import onnx
    import onnxruntime as ort
    from ai_edge_litert.interpreter import Interpreter

    from tests.models.probes.tflite import dynamic_batch_tflite

    source = dynamic_batch_tflite(tmp_path / "dynamic.tflite", int8=False)
    x = np.random.default_rng(0).random((1, 8, 8, 4), dtype=np.float32)
    out = convert_tflite_to_onnx(source, tmp_path / "model.onnx", [[x]]).path
    (graph_input,) = onnx.load(str(out)).graph.input
    assert [d.dim_value for d in graph_input.type.tensor_type.shape.dim] == [1, 8, 8, 4]
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    interpreter = Interpreter(model_path=str(source))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    expected = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    np.testing.assert_allclose(session.run(None, {graph_input.name: x})[0], expected, atol=1e-5)
