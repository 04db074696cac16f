"""What host-cpu deploys: the fastest faithful form, fp32 included, with timings and checks injected.

No model is timed here: the measurement session and the accuracy records are written by hand, so what is
asserted is the rule (fastest faithful, the float reference always faithful), not this machine's speed.
"""

from __future__ import annotations

from pathlib import Path

from edgepipe.artifacts import Artifact
from edgepipe.latency.cpu_features import parse_cpuinfo
from edgepipe.latency.interleaved import LatencyResult
from edgepipe.metrics.records import ComparisonInfo, LabelFreeInfo
from edgepipe.quantize.host.fastest import deployment_choice
from edgepipe.quantize.host.forms import Faithfulness, HostMeasurement
from edgepipe.report.schema import AccuracyInfo
from edgepipe.stages.evaluate import Accuracy
from edgepipe.stages.host_forms import host_checks

PRECISION = {"model.onnx": "fp32", "model.tflite": "fp32", "model_int8.onnx": "int8", "model_int8.tflite": "int8",
             "model_int8_qdq_u8.onnx": "int8"}
RUNTIME = {"onnx": "onnxruntime", "tflite": "litert"}


def _measured(p50_ms: dict[str, float], faithful: dict[str, bool]) -> HostMeasurement:
    latency = {key: LatencyResult(runtime=RUNTIME[key.rsplit(".", 1)[1]], median_ms=ms, min_ms=ms, runs=20,
                                  init_ms=1.0, session="s") for key, ms in p50_ms.items()}
    return HostMeasurement(latency=latency, faithful={k: Faithfulness(ok, "injected") for k, ok in faithful.items()})


def test_fp32_is_deployed_when_every_int8_form_is_slower() -> None:
    """As on a 2-core AVX2 host without VNNI: the int8 forms run 1.2-2.2x the fp32 latency."""
    measured = _measured({"model.onnx": 1.10, "model.tflite": 0.63, "model_int8.onnx": 5.94,
                          "model_int8.tflite": 6.27, "model_int8_qdq_u8.onnx": 1.52},
                         {"model.onnx": True, "model.tflite": True, "model_int8.onnx": True,
                          "model_int8.tflite": True, "model_int8_qdq_u8.onnx": True})
    candidates, chosen = deployment_choice(measured, PRECISION)
    assert chosen == "model.tflite"
    assert [c.artifact for c in candidates][:2] == ["model.tflite", "model.onnx"]
    assert next(c for c in candidates if c.artifact == "model_int8_qdq_u8.onnx").ratio_to_fastest_fp32 == 2.4127


def test_an_int8_form_is_deployed_when_it_is_faster_and_faithful() -> None:
    measured = _measured({"model.onnx": 1.36, "model.tflite": 1.24, "model_int8.onnx": 0.69,
                          "model_int8.tflite": 0.42, "model_int8_qdq_u8.onnx": 0.77},
                         {"model.onnx": True, "model.tflite": True, "model_int8.onnx": True,
                          "model_int8.tflite": True, "model_int8_qdq_u8.onnx": True})
    assert deployment_choice(measured, PRECISION)[1] == "model_int8.tflite"


def test_a_faster_int8_form_that_fails_its_check_on_this_host_is_not_deployed() -> None:
    measured = _measured({"model.onnx": 1.36, "model_int8.onnx": 0.69, "model_int8_qdq_u8.onnx": 0.50},
                         {"model.onnx": True, "model_int8.onnx": True, "model_int8_qdq_u8.onnx": False})
    candidates, chosen = deployment_choice(measured, PRECISION)
    assert chosen == "model_int8.onnx"
    assert [(c.artifact, c.faithful) for c in candidates][0] == ("model_int8_qdq_u8.onnx", False)


def test_a_form_without_a_check_is_never_deployed() -> None:
    measured = _measured({"model.onnx": 1.36, "model_int8.onnx": 0.69}, {"model.onnx": True})
    candidates, chosen = deployment_choice(measured, PRECISION)
    assert chosen == "model.onnx" and candidates[0].evidence == "no accuracy check of it on this host"


def _artifacts() -> list[Artifact]:
    return [Artifact(Path(k), "onnx" if k.endswith(".onnx") else "tflite", PRECISION[k])  # type: ignore[arg-type]
            for k in PRECISION]


def _comparison(artifact: str, failures: list[str]) -> ComparisonInfo:
    return ComparisonInfo(artifact=artifact, reference="model.onnx", outputs=[], failures=failures,
                          arithmetic="host runtime")


def test_host_checks_read_the_top1_drop_on_the_host_and_label_free_for_extra_forms() -> None:
    comparisons = [_comparison("model.tflite", []), _comparison("model_int8.onnx", ["cosine 0.97 < 0.99"]),
                   _comparison("model_int8.tflite", []), _comparison("model_int8_qdq_u8.onnx", ["SQNR 9 dB < 15 dB"])]
    label_free = LabelFreeInfo(samples=400, data="evaluation", gated=False, thresholds={}, comparisons=comparisons)
    host = AccuracyInfo(metric="top1", samples=400, threshold_points=1.0, float=0.9675,
                        float_by_format={"onnx": 0.9675, "tflite": 0.9675},
                        int8={"onnx": 0.96, "tflite": 0.93}, drop_points={"onnx": 0.75, "tflite": 3.75},
                        label_free=label_free, arithmetic="host runtime")
    exact = host.model_copy(update={"arithmetic": "exact integer"})
    checks = host_checks(Accuracy(exact, host), _artifacts())
    assert checks["model.onnx"].ok and checks["model.tflite"].ok
    assert checks["model_int8.onnx"].ok and "top-1 drop 0.75 points" in checks["model_int8.onnx"].evidence
    assert "host runtime" in checks["model_int8.onnx"].evidence
    assert not checks["model_int8.tflite"].ok  # 3.75 points > 1
    assert not checks["model_int8_qdq_u8.onnx"].ok and checks["model_int8_qdq_u8.onnx"].evidence == "SQNR 9 dB < 15 dB"


def test_cpu_features_name_what_decides_int8_speed() -> None:
    epyc = parse_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 avx fma avx2 f16c\n",
                         "x86_64", 2)
    assert epyc.model == "AMD EPYC 7B13" and epyc.features == ["AVX2", "FMA"]
    assert epyc.int8_dot_product is None and "no int8 dot product" in epyc.summary()
    vnni = parse_cpuinfo("model name : Xeon\nflags : avx2 avx512f avx512_vnni amx_tile amx_int8\n", "x86_64", 8)
    assert vnni.int8_dot_product == "AMX-INT8" and "AVX-512 VNNI" in vnni.features
    arm = parse_cpuinfo("Features\t: fp asimd asimdhp asimddp i8mm\nCPU part : 0xd0c\n", "aarch64", 4)
    assert arm.int8_dot_product == "Arm I8MM" and arm.fp16_arithmetic == "Arm FP16 SIMD"
    assert parse_cpuinfo("", "x86_64", None).features == []
