"""Real models get a faithful float artifact in the other format along the routes of the export stage
(edgepipe.stages.export_tflite, edgepipe.export.tflite_to_onnx), and the artifact names its route.

- PaddleOCR's text-direction classifier (zoo ``ppocr_v2_cls``): every node named ``Op@N``; onnx2tf failed at its
  Softmax until edgepipe renamed the nodes of its copy.
- ddddocr's older OCR network (zoo ``ddddocr_ocr_int8``), shipped dynamically quantized (ConvInteger,
  MatMulInteger, DynamicQuantizeLSTM): dequantized to float, converted, and quantized again.
- openWakeWord's "hey jarvis" (held out ``oww_hey_jarvis``): an If on its own score runs a verifier network;
  onnx2tf failed with a KeyError in the branch until edgepipe wrote the If as both branches and a Where.
- MediaPipe's full-range face detector (held out ``face_detection_full``): sparse weights behind DENSIFY.
- MediaPipe's selfie segmenter (zoo ``selfie_segmentation``): the custom op Convolution2DTransposeBias.
- BirdNET 2.4 (held out ``birdnet_v24``): its spectrogram reads the real part of an RFFT2D.
- A spoken-command classifier (held out ``star_trek_command``): its front end takes the magnitude of an RFFT2D.
- A remote-pulse estimator on video (held out ``physnet_rppg``): 3-D MaxPools and an AveragePool, which onnx2tf
  wrote as Flex ops until edgepipe wrote them as 2-D pools.
- A tabular surrogate network (held out ``knn_accuracy_surrogate``): its features standardized by an ONNX-ML
  Scaler, which onnx2tf does not implement.
- A grapheme-to-phoneme BERT exported from TensorFlow (held out ``g2p_id_bert``): onnx2tf failed at its LayerNorm's
  ``beta - mean * gamma`` ("axes don't match array") until the route storing 1-D constants at rank 3.
- A YOLOv8n detector (held out ``nudenet_320n``): onnx2tf failed at the head's Concat, and with that Concat on the
  last axis its boxes came out wrong (cosine 0.41) until the route writing ``anchors - distances`` as an Add.
- microWakeWord's "okay nabu" (zoo ``micro_wakeword``): an int8 TFLite with its streaming state in resource
  variables; no ONNX has its inputs, and the failure says why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.realmodels import heldout, zoo

pytestmark = [pytest.mark.thirdparty, pytest.mark.slow]


def _export(root: Path, model: Any, target: str) -> tuple[list[Any], Any, Any]:
    """Prepare ``model`` (small data) and run the export stage for ``target``: artifacts, stage log, inputs."""
    from edgepipe.config import load_config
    from edgepipe.stage_log import StageLog
    from edgepipe.stages.export import export_stage
    from edgepipe.stages.inputs import validate_inputs

    prepare = heldout.prepare if model.name in heldout.BY_NAME else zoo.prepare
    config = load_config(prepare(model, root / "models", zoo.SMALL),
                         overrides={"targets": [target], "output": str(root / "build")})
    stages = StageLog()
    inputs = validate_inputs(config, stages)
    folder = root / "artifacts"
    folder.mkdir()
    artifacts, _ = export_stage(inputs, folder, root, stages)
    return artifacts, stages, inputs


def _made(artifacts: list[Any], fmt: str) -> Any:
    return next(a for a in artifacts if a.format == fmt and a.precision == "fp32")


def _cosine(source: Path, converted: Path, inputs: Any) -> float:
    from edgepipe.export.float_match import float_agreement

    agreement = float_agreement(source, converted, inputs.calibration)
    assert agreement.problem is None, agreement
    return agreement.cosine


def test_a_paddle_classifier_gets_its_tflite_through_onnx2tf(tmp_path: Path) -> None:
    artifacts, stages, inputs = _export(tmp_path, zoo.BY_NAME["ppocr_v2_cls"], "ethos-u55")
    tflite = _made(artifacts, "tflite")
    assert tflite.route == "onnx2tf" and not stages.failures
    assert _cosine(_made(artifacts, "onnx").path, tflite.path, inputs) > 0.9999


def test_a_score_gated_verifier_converts_through_a_where(tmp_path: Path) -> None:
    artifacts, stages, inputs = _export(tmp_path, heldout.BY_NAME["oww_hey_jarvis"], "ethos-u55")
    tflite = _made(artifacts, "tflite")
    assert tflite.route == "onnx2tf" and not stages.failures
    assert _cosine(_made(artifacts, "onnx").path, tflite.path, inputs) > 0.9999


@pytest.mark.parametrize("name", ["physnet_rppg", "knn_accuracy_surrogate"])
def test_3d_pools_and_scalers_convert_into_builtins(tmp_path: Path, name: str) -> None:
    from edgepipe.graph.read import read_graph

    artifacts, stages, inputs = _export(tmp_path, heldout.BY_NAME[name], "ethos-u55")
    tflite = _made(artifacts, "tflite")
    assert tflite.route == "onnx2tf" and not stages.failures
    assert not [n.op for n in read_graph(tflite.path).nodes if "Flex" in n.op or n.op.startswith("CUSTOM")]
    assert _cosine(_made(artifacts, "onnx").path, tflite.path, inputs) > 0.9999


def test_a_tf_layernorm_converts_with_its_constants_at_full_rank(tmp_path: Path) -> None:
    artifacts, stages, inputs = _export(tmp_path, heldout.BY_NAME["g2p_id_bert"], "ethos-u55")
    tflite = _made(artifacts, "tflite")
    assert tflite.route == "onnx2tf with its elementwise constants at their partner's rank"
    assert [f.tool for f in stages.failures] == []
    assert _cosine(_made(artifacts, "onnx").path, tflite.path, inputs) > 0.9999


def test_a_yolov8_head_converts_with_its_anchor_subtraction_as_an_add(tmp_path: Path) -> None:
    artifacts, _, inputs = _export(tmp_path, heldout.BY_NAME["nudenet_320n"], "ethos-u55")
    tflite = _made(artifacts, "tflite")
    assert tflite.route == ("onnx2tf with its Concat on the last axis (transposes around it) and its "
                            "constant-minus-feature-map Subs as Adds of a negation")
    from edgepipe.graph.read import read_graph

    assert "NEG" not in {n.op for n in read_graph(tflite.path).nodes}  # a Mul by -1: Vela places NEG on the CPU
    assert _cosine(_made(artifacts, "onnx").path, tflite.path, inputs) > 0.9999


def test_a_dynamically_quantized_model_is_dequantized_converted_and_said_so(tmp_path: Path) -> None:
    import onnx

    from edgepipe.load.onnx_quantized import quantized_kind

    artifacts, stages, inputs = _export(tmp_path, zoo.BY_NAME["ddddocr_ocr_int8"], "ethos-u55")
    source = _made(artifacts, "onnx")
    assert source.route == "dequantized by edgepipe"
    assert quantized_kind(onnx.load(str(source.path))).form == "float"
    assert not any(a.precision == "int8" for a in artifacts)  # the shipped file is not an artifact
    said = next(r.detail for r in stages.records if r.name == "export" and "dequantized to float" in r.detail)
    assert "ConvInteger 21" in said and "DynamicQuantizeLSTM 1" in said and "calibration data" in said
    tflite = _made(artifacts, "tflite")
    assert tflite.route.startswith("onnx2tf") and _cosine(source.path, tflite.path, inputs) > 0.999


@pytest.mark.parametrize(("suite", "name", "route"), [
    (heldout.BY_NAME, "face_detection_full", "tf2onnx's TFLite front end (46 sparse weight(s) densified)"),
    (zoo.BY_NAME, "selfie_segmentation",
     "tf2onnx's TFLite front end (1 Convolution2DTransposeBias op(s) as TRANSPOSE_CONV + ADD)"),
    (heldout.BY_NAME, "birdnet_v24",
     "tf2onnx's TFLite front end (the real part of 2 RFFT2D op(s) as a MatMul with the cosine basis)"),
    (heldout.BY_NAME, "star_trek_command",
     "tf2onnx's TFLite front end (the magnitude of 1 RFFT2D op(s) as MatMuls with the cosine and sine bases)")])
def test_a_tflite_gets_its_onnx_through_the_rewrites(tmp_path: Path, suite: dict[str, Any], name: str,
                                                             route: str) -> None:
    artifacts, stages, inputs = _export(tmp_path, suite[name], "mobile-npu")
    onnx_file = _made(artifacts, "onnx")
    assert onnx_file.route == route and not stages.failures
    assert _cosine(inputs.model.path, onnx_file.path, inputs) > 0.999


def test_an_int8_streaming_tflite_without_an_onnx_form_says_why(tmp_path: Path) -> None:
    artifacts, stages, _ = _export(tmp_path, zoo.BY_NAME["micro_wakeword"], "mobile-npu")
    assert [(a.format, a.precision) for a in artifacts] == [("tflite", "int8")]
    (failure,) = stages.failures
    assert failure.tool == "tf2onnx" and failure.artifact == "model.onnx" and failure.next_step
    assert "resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE)" in failure.message
