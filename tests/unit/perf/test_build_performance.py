"""Every build report carries energy per inference; Ethos-U reports carry Vela's estimate and the ratio."""

from __future__ import annotations

import json

import pytest

from edgepipe.perf.predict import predict
from edgepipe.perf.vela_estimate import run_vela
from edgepipe.targets import load_profile


def test_host_build_report_has_energy_and_deployment_artifact(reference_build):
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr
    performance = json.loads((folder / "report.json").read_text())["performance"]
    assert performance["estimator"] == "cost-model" and performance["artifact"] == "model.onnx"
    assert {f["artifact"] for f in performance["int8_forms"]} >= {"model_int8.onnx", "model_int8.tflite",
                                                                  "model_int8_qdq_u8.onnx"}
    candidates = performance["deployment_candidates"]
    assert {c["artifact"] for c in candidates} >= {"model.onnx", "model.tflite", "model_int8.onnx"}
    assert [c["p50_ms"] for c in candidates] == sorted(c["p50_ms"] for c in candidates)
    deployed = performance["deployment_artifact"]
    assert deployed == next(c["artifact"] for c in candidates if c["faithful"])  # the fastest faithful form
    assert next(c for c in candidates if c["artifact"] == "model.onnx")["faithful"]  # the reference
    assert performance["host_cpu"]["architecture"] and isinstance(performance["host_cpu"]["features"], list)
    mode = performance["modes"][0]
    assert mode["energy_mj"] > 0 and mode["inferences_per_j"] == pytest.approx(1000 / mode["energy_mj"])
    energy = [note for note in performance["notes"] if note.startswith(f"energy (model estimate): {deployed}")]
    assert len(energy) == 1 and "measured p50" in energy[0] and "the power is not measured" in energy[0]
    assert "Performance on host-cpu" in (folder / "report.md").read_text()


def test_ethos_u55_estimate_is_vela_with_ratio(reference_build):
    _, folder = reference_build
    tflite = folder / "model_int8.tflite"
    profile = load_profile("ethos-u55")
    vela = run_vela(tflite, profile.performance)
    assert vela.clock_mhz == 500 and vela.cycles > 0 and vela.cpu_ops == 0
    report = predict(tflite, profile)
    assert report.estimator == "vela" and report.error == "unvalidated"
    assert report.vela.cycles == vela.cycles
    assert report.vela.ratio == report.vela.edgepipe_ms / report.vela.vela_ms
    nominal, low = report.modes
    assert nominal.latency_ms == vela.cycles / (500 * 1e3)  # cycles at 500 MHz, in ms
    assert low.latency_ms == 2 * nominal.latency_ms  # half the clock


def test_every_npu_target_estimates_the_reference_model(reference_build):
    _, folder = reference_build
    for name in ("mobile-npu", "edge-tpu", "edge-box-npu", "gpu-reference", "ethos-u85"):
        profile = load_profile(name)
        artifact = folder / ("model_int8.tflite" if "tflite" == profile.artifact.format else
                             ("model_int8.onnx" if profile.artifact.precision == "int8" else "model.onnx"))
        report = predict(artifact, profile)
        assert len(report.modes) >= 2 and all(m.energy_mj > 0 for m in report.modes), name
        assert report.delegate.total_ms > 0


def _report(folder):
    return json.loads((folder / "report.json").read_text())


def test_artifacts_and_int8_forms_tables_come_from_one_session(reference_build):
    """Every int8 form's p50 and its fp32 base are the artifacts table's own numbers, at one thread count."""
    proc, folder = reference_build
    assert proc.returncode == 0, proc.stderr
    report = _report(folder)
    latency = report["latency"]
    assert set(latency) == {a["path"] for a in report["artifacts"]}  # the QOperator form is listed too
    assert {d["threads"] for d in latency.values()} == {1}
    forms = report["performance"]["int8_forms"]
    assert {f["artifact"] for f in forms} == {"model_int8.onnx", "model_int8.tflite", "model_int8_qdq_u8.onnx"}
    for form in forms:
        base = latency[form["fp32_artifact"]]
        assert form["p50_ms"] == latency[form["artifact"]]["median_ms"]
        assert form["ratio_to_fp32"] == pytest.approx(form["p50_ms"] / base["median_ms"], rel=1e-12)
        assert form["threads"] == 1 and form["fp32_artifact"] in ("model.onnx", "model.tflite")
        assert 0.9 < form["output_cosine"] <= 1.0 + 1e-9
    assert report["quantization"]["sensitivity"] == []  # PTQ met the threshold: no per-layer pass


def _session(folder, cosine):
    """A measurement session of the reference build's ONNX artifacts: fp32 2.0 ms, QDQ 1.5 ms, uint8 QDQ 1.0 ms."""
    from edgepipe.latency.interleaved import LatencyResult
    from edgepipe.quantize.host.forms import HostMeasurement

    times = {"model.onnx": 2.0, "model_int8.onnx": 1.5, "model_int8_qdq_u8.onnx": 1.0}
    latency = {k: LatencyResult(runtime="onnxruntime", median_ms=v, min_ms=v, runs=8, init_ms=0.0, p90_ms=v,
                                threads=1, session="s") for k, v in times.items()}
    return {name: folder / name for name in times}, HostMeasurement(latency=latency, cosine=cosine, threads=1)


def test_deployment_form_is_the_fastest_faithful_one_of_the_session(reference_build):
    """The table reads only the session it is given; a fast form below cosine 0.99 is never deployed."""
    from edgepipe.quantize.host.fastest import forms_table

    _, folder = reference_build
    paths, measured = _session(folder, {"model_int8.onnx": 0.999, "model_int8_qdq_u8.onnx": 0.95})
    forms, deployed = forms_table(paths, measured)
    assert {f.artifact: f.ratio_to_fp32 for f in forms} == {"model_int8.onnx": 0.75, "model_int8_qdq_u8.onnx": 0.5}
    assert deployed == "model_int8.onnx"
    assert all(f.slow_ops and f.slow_ops[0].endswith("% of node time") for f in forms)


def test_a_mixed_precision_artifact_is_an_int8_form_of_the_host(reference_build):
    """The ladder's mixed-precision result (what most real models end with) is timed, compared and deployable."""
    from edgepipe.quantize.host.fastest import forms_table

    _, folder = reference_build
    paths, measured = _session(folder, {"model_int8.onnx": 0.999, "model_int8_qdq_u8.onnx": 0.999})
    precision = {"model.onnx": "fp32", "model_int8.onnx": "mixed", "model_int8_qdq_u8.onnx": "mixed"}
    forms, deployed = forms_table(paths, measured, None, precision)
    assert {f.artifact: f.ratio_to_fp32 for f in forms} == {"model_int8.onnx": 0.75, "model_int8_qdq_u8.onnx": 0.5}
    assert deployed == "model_int8_qdq_u8.onnx"


@pytest.mark.slow
def test_onnx_build_for_two_targets_runs_onnx2tf_once(reference_build, reference_data, tmp_path):
    """Float and full-integer TFLite come from one onnx2tf run, shared by every target of the build."""
    from edgepipe.cli import main
    from edgepipe.export import onnx_to_tflite

    _, folder = reference_build
    onnx_to_tflite.RUNS.clear()
    code = main(["build", "-q", "--no-cache", "-m", str(folder / "model.onnx"),
                 "--calib", str(reference_data / "calibration.npz"), "--eval", str(reference_data / "evaluation.npz"),
                 "--threshold", "5", "-t", "host-cpu", "-t", "ethos-u55", "-o", str(tmp_path)])
    assert code == 0
    assert len(onnx_to_tflite.RUNS) == 1
    for target in ("host-cpu", "ethos-u55"):
        report = json.loads((tmp_path / "model" / target / "report.json").read_text())
        assert {"model.tflite", "model_int8.tflite"} <= {a["path"] for a in report["artifacts"]}, target


def test_no_faithful_form_is_said_in_words(tmp_path):
    """Seen on a held-out audio model: every int8 form missed cosine 0.99 and report.md said `None`."""
    from edgepipe.perf.render import render_performance_markdown
    from edgepipe.perf.report import Int8Form
    from edgepipe.quantize.host.fastest import DeploymentCandidate
    from tests.models.onnx_exports import shared_bias

    report = predict(shared_bias(tmp_path / "model.onnx", [1, 3, 8, 8]), load_profile("host-cpu"))
    form = Int8Form(artifact="model_int8_qoperator.onnx", runtime="onnxruntime", p50_ms=2.0, p90_ms=3.0,
                    ratio_to_fp32=1.2, output_cosine=0.95)
    candidate = DeploymentCandidate(artifact=form.artifact, precision="int8", runtime="onnxruntime", p50_ms=2.0,
                                    ratio_to_fastest_fp32=None, faithful=False, evidence="cosine 0.95 < 0.99")
    update = {"int8_forms": [form], "deployment_candidates": [candidate]}
    text = "\n".join(render_performance_markdown(report.model_copy(update=update)))
    assert "`None`" not in text and "Deployment artifact (fastest faithful form on this host): none" in text
    assert "| model_int8_qoperator.onnx | int8 | onnxruntime | 2 | – | no | cosine 0.95 < 0.99 |" in text


def test_vela_on_a_float_tflite_falls_back_to_the_cost_model(tmp_path):
    """Seen on a held-out float MediaPipe model: Vela gave 0 cycles, every per-mode figure became infinite and the
    report.json no longer parsed into its own schema."""
    import tensorflow as tf  # heavy optional dependency

    from edgepipe.perf.report import PerformanceReport

    inputs = tf.keras.Input(shape=(16, 16, 3), batch_size=1)
    model = tf.keras.Model(inputs, tf.keras.layers.Conv2D(4, 3)(inputs))
    path = tmp_path / "model.tflite"
    path.write_bytes(tf.lite.TFLiteConverter.from_keras_model(model).convert())
    report = predict(path, load_profile("ethos-u55"))
    assert report.estimator == "cost-model" and report.vela is None
    assert any("Vela put no op on the NPU" in note for note in report.notes), report.notes
    assert all(m.latency_ms > 0 and m.inferences_per_j < float("inf") for m in report.modes)
    assert PerformanceReport.model_validate_json(report.model_dump_json()) == report
