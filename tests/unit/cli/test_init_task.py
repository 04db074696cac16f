"""``edgepipe init`` proposes the task its outputs' shapes suggest (commented: the build guesses from values)."""

from __future__ import annotations

from pathlib import Path

from edgepipe.cli.init_config import describe_inputs, describe_outputs, render_config
from edgepipe.metrics.task.kinds import guess_from_shape
from tests.unit.metrics.detector_model import ANCHORS, CLASSES, make_detector


def test_a_yolo_style_head_gets_a_detection_task_proposed(tmp_path: Path) -> None:
    model = make_detector(tmp_path / "det.onnx")
    inputs = describe_inputs(model)
    outputs = describe_outputs(model, inputs)
    assert outputs == [("output0", (1, 4 + CLASSES, ANCHORS))]
    text = render_config(model, tmp_path / "edgepipe.toml", inputs, outputs)
    assert '# kind = "detection-yolo"' in text and '# outputs = ["output0"]' in text
    assert '# params = { layout = "channels-first" }' in text


def test_shapes_alone_name_only_what_they_can() -> None:
    assert guess_from_shape((1, 1000)).kind == "classification"
    assert guess_from_shape((1, 84, 8400)).params == {"layout": "channels-first"}
    assert guess_from_shape((1, 1, 320, 320), "sigmoid_0.tmp_0").kind == "segmentation"
    assert guess_from_shape((1, 1, 320, 320), "text_det_map").kind == "text-detection"
    assert guess_from_shape((1, 96, 96, 32)).kind == "unknown"
    assert guess_from_shape((1, None, 10)).kind == "unknown"
