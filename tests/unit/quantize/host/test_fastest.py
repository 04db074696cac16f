"""The int8 forms on this host: QOperator is made for real, XNNPACK's take is read from LiteRT itself."""

from __future__ import annotations

import numpy as np
import onnx

from edgepipe.data.dataset import Dataset
from edgepipe.latency.measure import BenchSettings, concurrent, single_stream
from edgepipe.latency.op_profile import ort_time_by_op_type, xnnpack_rejected_ops
from edgepipe.quantize.host.fastest import compare_int8_forms
from edgepipe.quantize.host.forms import make_qoperator


def test_qoperator_form_uses_qlinear_ops(tiny, tmp_path):
    rng = np.random.default_rng(0)
    data = Dataset(path=tmp_path / "calib.npz", inputs=(rng.random((8, 2, 6, 6), dtype=np.float32),), labels=None,
                   sha256="")
    out = make_qoperator(tiny["onnx"], tmp_path / "q.onnx", data, tmp_path)
    ops = {node.op_type for node in onnx.load(str(out)).graph.node}
    assert "QLinearConv" in ops and "Conv" not in ops and "DequantizeLinear" in ops


def test_xnnpack_takes_every_op_of_the_reference_int8_model(reference_build):
    _, folder = reference_build
    assert xnnpack_rejected_ops(folder / "model_int8.tflite") == []


def test_ort_profile_shares_add_up(reference_build, tmp_path):
    _, folder = reference_build
    model = tmp_path / "m.onnx"
    model.write_bytes((folder / "model_int8.onnx").read_bytes())
    shares = ort_time_by_op_type(model, runs=5)
    assert "QLinearConv" in shares and abs(sum(shares.values()) - 1.0) < 1e-9
    assert not list(tmp_path.glob("*profile*.json"))  # the profiler's file is cleaned up


def test_forms_compared_in_one_run(reference_build):
    _, folder = reference_build
    artifacts = {name: folder / name for name in ("model.onnx", "model_int8.onnx", "model.tflite",
                                                  "model_int8.tflite")}
    forms, fastest = compare_int8_forms(artifacts, BenchSettings(warmup=2, max_samples=20, budget_s=1))
    assert {f.artifact for f in forms} == {"model_int8.onnx", "model_int8.tflite"}
    assert fastest == min(forms, key=lambda f: f.p50_ms).artifact
    assert all(f.ratio_to_fp32 and f.ratio_to_fp32 > 0 for f in forms)


def test_sample_count_stays_within_bounds(tiny):
    timing = single_stream([tiny["onnx"]], BenchSettings(warmup=1, max_samples=12, budget_s=0.0, min_samples=8))[0]
    assert 8 <= timing.stats.samples <= 12  # the budget is spent at once, min_samples still holds


def test_concurrent_counts_every_request(tiny):
    result = concurrent(tiny["onnx"], 3, 0.3)
    assert result.concurrency == 3 and result.requests == result.stats.samples >= 3
    assert result.throughput_ips == result.requests / result.wall_s
