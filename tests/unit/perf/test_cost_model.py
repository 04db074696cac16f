"""The emulated delegate's arithmetic on a three-op graph worked out by hand, and MACs read from a real graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from edgepipe.graph.opgraph import OpGraph
from edgepipe.perf.cost_model import default_placement, estimate, op_time_ms
from edgepipe.perf.graph import GraphWork, OpWork, read_work

# conv (int8) on the NPU → elementwise (fp32: the int8-only NPU cannot) on the CPU → gemm (int8) on the NPU
CONV = OpWork(0, "conv", "Conv", "conv", "int8", macs=2_000_000, input_bytes=1000, weight_bytes=1000,
              output_bytes=1000)
ADD = OpWork(1, "add", "Add", "elementwise", "fp32", macs=1000, input_bytes=4000, weight_bytes=0,
             output_bytes=4000)
FC = OpWork(2, "fc", "Gemm", "gemm", "int8", macs=500_000, input_bytes=4000, weight_bytes=100_000,
            output_bytes=10)
GRAPH = GraphWork(Path("toy.onnx"), (CONV, ADD, FC), input_bytes=1000, output_bytes=10,
                  source=OpGraph("onnx", "toy.onnx", (), (), ()))


def test_op_time_is_max_of_compute_and_memory_plus_overhead(toy_spec):
    # 2e6 MACs / 1e9 MAC/s = 2 ms ≫ 3000 B / 1 GB/s = 3 µs; + 10 µs overhead
    assert op_time_ms(CONV, toy_spec.accelerator) == (pytest.approx(2.010), "compute")
    # on the CPU: 1000 / 0.5e9 = 2 µs < 8000 B / 2 GB/s = 4 µs; the 20 µs overhead dominates
    assert op_time_ms(ADD, toy_spec.fallback_cpu) == (pytest.approx(0.024), "overhead")


def test_fp32_op_falls_back_to_the_cpu(toy_spec):
    assert default_placement(GRAPH, toy_spec) == [True, False, True]


def test_total_sums_ops_and_every_crossing(toy_spec):
    result = estimate(GRAPH, toy_spec)
    assert [o.unit for o in result.ops] == ["accelerator", "cpu", "accelerator"]
    assert [round(o.ms, 6) for o in result.ops] == [2.010, 0.024, 0.510]
    # in → NPU (1000 B), NPU → CPU (4000 B), CPU → NPU (4000 B), NPU → out (10 B): bytes / 0.5 GB/s + 100 µs
    assert [(t.direction, t.bytes) for t in result.transfers] == [
        ("to_accelerator", 1000), ("to_cpu", 4000), ("to_accelerator", 4000), ("to_cpu", 10)]
    assert result.transfer_ms == pytest.approx(0.102 + 0.108 + 0.108 + 0.10002)
    assert result.total_ms == pytest.approx(2.96202)
    assert result.cpu_ops == 1


def test_half_clock_doubles_compute_and_overhead_only(toy_spec):
    # conv 4 ms + 20 µs, fc 1 ms + 20 µs, CPU op and transfers unchanged
    assert estimate(GRAPH, toy_spec, clock_mhz=50).total_ms == pytest.approx(4.020 + 0.024 + 1.020 + 0.41802)


def test_fused_and_free_ops_cost_nothing(toy_spec):
    relu = OpWork(3, "relu", "Relu", "elementwise", "int8", 10, 10, 0, 10, fused=True)
    reshape = OpWork(4, "reshape", "Reshape", "data", "int8", 0, 0, 0, 0)
    assert op_time_ms(relu, toy_spec.accelerator) == (0.0, "fused")
    assert op_time_ms(reshape, toy_spec.accelerator) == (0.0, "free")


def test_macs_and_bytes_of_a_real_onnx_graph(tiny):
    """tiny.onnx: Conv 2→8 (3×3, pad 1) on 6×6 → Relu → GlobalAveragePool → Flatten → MatMul 8→4."""
    ops = {op.op_type: op for op in read_work(tiny["onnx"]).ops}
    assert ops["Conv"].macs == 8 * 6 * 6 * 2 * 3 * 3
    assert ops["Conv"].weight_bytes == (8 * 2 * 3 * 3 + 8) * 4
    assert ops["Conv"].input_bytes == 2 * 6 * 6 * 4 and ops["Conv"].output_bytes == 8 * 6 * 6 * 4
    assert ops["Relu"].fused and not ops["Conv"].fused
    assert ops["GlobalAveragePool"].kind == "pool" and ops["GlobalAveragePool"].macs == 8 * 6 * 6
    assert ops["Flatten"].kind == "data"
    assert ops["MatMul"].macs == 8 * 4 and ops["MatMul"].kind == "gemm"
