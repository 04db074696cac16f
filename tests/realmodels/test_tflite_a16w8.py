"""A float TFLite whose int8 twin misses the label-free gate goes a16w8 where every target runs int16 activations.

MediaPipe's face detector (zoo model ``blazeface``) has a raw-logit output spanning about
-1500..3 on photographs: int8 activations give it a scale of ~6 and a cosine far below
0.99. Without a source graph the ladder cannot keep single layers higher, so for a
host-cpu build (int16 activations allowed) ai-edge-quantizer's int16-activation recipe is
tried on the calibration split (32 samples: on fewer, int8 fits its own calibration samples too well to
miss there) and kept; an int8-only target keeps the int8 file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from edgepipe.cli import main
from edgepipe.stages import quantize_tflite
from tests.realmodels import zoo
from tests.realmodels.zoo_checks import names_tool_and_fix

pytestmark = pytest.mark.slow


#: The int16-activation files ai-edge-quantizer made during the build (activation bits of each call).
WIDE_TWINS: list[int] = []


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("a16w8")
    config = zoo.prepare(zoo.BY_NAME["blazeface"], root / "models", zoo.DataSize(calibration=32, evaluation=8))
    real = quantize_tflite.quantize_runnable

    def counted(source: Path, out: Path, inputs: object, scratch: Path, activation_bits: int = 8) -> tuple[Path, str]:
        WIDE_TWINS.append(activation_bits)
        return real(source, out, inputs, scratch, activation_bits)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:  # counts the real quantizer's calls; every call still runs it
        patch.setattr(quantize_tflite, "quantize_runnable", counted)
        code = main(["build", "-q", "--no-cache", "--config", str(config), "--target", "host-cpu",
                     "--target", "edge-tpu", "--target", "ethos-u85", "--output", str(root / "out")])
    assert code in (0, 2)
    return root / "out" / "blazeface"


def _report(built: Path, target: str) -> dict:
    return json.loads((built / target / "report.json").read_text())


def test_int16_activations_rescue_the_tflite_where_the_target_runs_them(built: Path) -> None:
    report = _report(built, "host-cpu")
    rung = next(s for s in report["stages"] if s["name"] == "quantize-tflite-a16w8")
    assert rung["status"] == "ran" and "a16w8 kept" in rung["detail"], rung["detail"]
    assert "int8 missed on 32 calibration samples" in rung["detail"]
    (tflite,) = [a for a in report["artifacts"] if a["path"] == "model_int8.tflite"]
    assert tflite["precision"] == "mixed"
    comparisons = report["accuracy"]["label_free"]["comparisons"]
    comparison = next(c for c in comparisons if c["artifact"] == "model_int8.tflite")
    assert not comparison["failures"]
    assert report["verdict"] == "pass", report["verdict_reason"]


def test_an_int8_only_target_keeps_the_int8_file_and_its_verdict_says_why(built: Path) -> None:
    report = _report(built, "edge-tpu")
    (tflite,) = [a for a in report["artifacts"] if a["path"] == "model_int8.tflite"]
    assert tflite["precision"] == "int8"
    assert report["verdict"] == "fail" and "cosine" in report["verdict_reason"]
    assert names_tool_and_fix(report["verdict_reason"]), report["verdict_reason"]  # says what to do next


def test_a_second_group_that_runs_int16_gets_the_first_ones_twin_and_scores(built: Path) -> None:
    """host-cpu, Edge TPU and Ethos-U85 are quantized in three groups; the int8 file and its int16-activation twin
    are made and scored once per build, and each group's rung reads the same figures."""
    assert sorted(WIDE_TWINS) == [8, 16], WIDE_TWINS
    rungs = [next(s["detail"] for s in _report(built, t)["stages"] if s["name"] == "quantize-tflite-a16w8")
             for t in ("host-cpu", "ethos-u85")]
    figures = [detail.split("; ai-edge-quantizer")[1].split(", a16w8 kept")[0].split(", int8 kept")[0]
               for detail in rungs]
    assert figures[0] == figures[1], rungs
