"""ONNX Runtime's mobile-usability checker and the TFLite GPU analyzer, reported beside the vendor comparisons."""

from __future__ import annotations

from pathlib import Path

from edgepipe.vendors import ort_mobile, tflite_gpu

USABILITY_OUTPUT = """\
INFO:  7 partitions with a total of 7/31 nodes can be handled by the NNAPI EP.
INFO:  Model should perform well with NNAPI as is: NO
INFO:  1 partitions with a total of 31/31 nodes can be handled by the CoreML MLProgram EP.
INFO:  Model should perform well with CoreML MLProgram as is: YES
"""


def test_parse_mobile_usability() -> None:
    figures = ort_mobile.parse(USABILITY_OUTPUT)
    assert figures == {"NNAPI nodes": "7/31 in 7 partitions", "CoreML MLProgram nodes": "31/31 in 1 partitions",
                       "NNAPI recommended": "NO", "CoreML MLProgram recommended": "YES"}


def test_mobile_usability_runs_on_onnx(tiny: dict[str, Path]) -> None:
    result = ort_mobile.second_opinion(tiny["onnx"])
    assert result.status == "ran", result.detail
    assert any(key.endswith("nodes") for key in result.extra)


def test_gpu_analyzer_flags_nothing_on_probe(probe_tflite: dict[str, Path]) -> None:
    result = tflite_gpu.second_opinion(probe_tflite["float"])
    assert result.status == "ran" and result.extra["gpu_compatible"] == "yes"
