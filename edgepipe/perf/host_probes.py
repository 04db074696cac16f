"""The host microbenchmark: small ONNX graphs whose timings give this machine's effective rates.

A 3×3 convolution gives the fp32 MAC rate; a matrix product and a cache-resident
depthwise convolution their efficiency relative to it; a large elementwise Add the
memory bandwidth; a batch-1 matrix-vector product the bandwidth weights stream at;
chains of 1 and 65 tiny Adds the per-op overhead, and one Add through edgepipe's
own runner the per-run overhead; a few kernels the MAC model misses (LRN, pooling,
Softmax, Transpose, Concat) are timed on their own.

The probes run round by round (:meth:`HostProbes.run_round`), so they can be
interleaved with a model's own runs: on a shared machine both then see the same load.
Rates come from the median of each probe over the rounds.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.latency.measure import time_ms

#: Op kernels timed on their own: (op type, attributes, input shape).
KERNELS: list[tuple[str, dict[str, Any], list[int]]] = [
    ("LRN", {"size": 5}, [1, 64, 56, 56]),  # larger than cache: ORT's LRN slows ~7x once it spills
    ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}, [1, 64, 56, 56]),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2]}, [1, 64, 56, 56]),
    ("Softmax", {"axis": -1}, [1, 64, 56, 56]),
    ("Transpose", {"perm": [0, 2, 3, 1]}, [1, 64, 56, 56]),
    ("Concat", {"axis": 1}, [1, 64, 56, 56]),
]


def _graph(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any]) -> bytes:
    from onnx import helper

    model = helper.make_model(helper.make_graph(nodes, "calibrate", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _io(shape: list[int]) -> tuple[list[Any], list[Any]]:
    from onnx import TensorProto, helper

    return ([helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])


def conv(channels: int, size: int, kernel: int, group: int) -> tuple[bytes, list[int], float]:
    """A convolution graph, its input shape, and its MACs."""
    from onnx import helper, numpy_helper

    weight = np.random.default_rng(0).random((channels, channels // group, kernel, kernel), dtype=np.float32)
    shape = [1, channels, size, size]
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=group, pads=[kernel // 2] * 4)
    return (_graph([node], *_io(shape), [numpy_helper.from_array(weight, "w")]), shape,
            float(size * size * channels * (channels // group) * kernel * kernel))


def matmul(m: int, k: int, n: int) -> tuple[bytes, list[int], float]:
    """An (m×k)·(k×n) product with a constant right side, its input shape, and its MACs."""
    from onnx import helper, numpy_helper

    weight = numpy_helper.from_array(np.random.default_rng(0).random((k, n), dtype=np.float32), "w")
    return _graph([helper.make_node("MatMul", ["x", "w"], ["y"])], *_io([m, k]), [weight]), [m, k], float(m * k * n)


def add_chain(length: int, elements: int) -> tuple[bytes, list[int], float]:
    """``length`` chained Adds on ``elements`` floats, its input shape, and the bytes it moves."""
    from onnx import helper

    names = ["x"] + [f"t{i}" for i in range(length - 1)] + ["y"]
    nodes = [helper.make_node("Add", [names[i], "x"], [names[i + 1]]) for i in range(length)]
    return _graph(nodes, *_io([1, elements]), []), [1, elements], float(length * elements * 4 * 3)


def kernel(op: str, attrs: dict[str, Any], shape: list[int]) -> tuple[bytes, list[int], float]:
    """One op, its input shape, and its output elements."""
    from onnx import helper

    inputs = ["x", "x"] if op == "Concat" else ["x"]
    outputs = float(np.prod(shape)) * (2 if op == "Concat" else 1) / (4 if op.endswith("Pool") else 1)
    return _graph([helper.make_node(op, inputs, ["y"], **attrs)], *_io(shape), []), shape, outputs


class HostProbes:
    """The microbenchmark's sessions, created once, timed round by round."""

    def __init__(self, threads: int | None = None):
        import onnxruntime as ort

        from edgepipe.runtimes import open_runner

        options = ort.SessionOptions()
        options.log_severity_level = 3
        if threads:
            options.intra_op_num_threads = threads
        graphs = {"conv": conv(64, 56, 3, 1), "gemm": matmul(128, 1024, 1024),
                  "depthwise": conv(64, 28, 3, 64),  # cache-resident: its compute rate; memory is costed apart
                  "gemv": matmul(1, 4096, 4096), "stream": add_chain(4, 4 * 1024 * 1024),
                  "add1": add_chain(1, 16), "add65": add_chain(65, 16),
                  **{f"op:{op}": kernel(op, attrs, shape) for op, attrs, shape in KERNELS}}
        rng = np.random.default_rng(0)
        self.work = {name: work for name, (_, _, work) in graphs.items()}
        self._calls: dict[str, Callable[[], object]] = {}
        for name, (model, shape, _) in graphs.items():
            session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            feed = {"x": rng.random(shape, dtype=np.float32)}
            self._calls[name] = lambda s=session, f=feed: s.run(None, f)  # type: ignore[misc]
        self._tmp = tempfile.TemporaryDirectory(prefix="edgepipe-calibrate-")
        path = Path(self._tmp.name) / "add1.onnx"
        path.write_bytes(graphs["add1"][0])
        runner = open_runner(path, threads=threads).activate()
        inputs = [np.ones((1, 16), np.float32)]
        self._calls["runner"] = lambda: runner.infer(inputs)
        for call in self._calls.values():
            call()

    def run_round(self) -> dict[str, float]:
        """Each probe once, warm (after one untimed run), in ms; the tiny overhead probes 10 times, per run."""
        times = {}
        for name, call in self._calls.items():
            repeat = 10 if name in ("add1", "add65", "runner") else 1
            if name != "op:LRN":  # too slow to run twice; spilled out of cache anyway
                call()  # warm its weights back into cache: the round before ran every other probe
            times[name] = time_ms(call, repeat)
        return times

    def rates(self, rounds: list[dict[str, float]]) -> dict[str, Any]:
        """Effective rates from the median of each probe: GMAC/s, GB/s, µs, G elements/s."""
        ms = {name: statistics.median(r[name] for r in rounds) for name in self._calls}
        per_op_us = max((ms["add65"] - ms["add1"]) / 64 * 1e3, 0.0)
        return {"conv_gmacs": self.work["conv"] / (ms["conv"] * 1e6),
                "gemm_gmacs": self.work["gemm"] / (ms["gemm"] * 1e6),
                "depthwise_gmacs": self.work["depthwise"] / (ms["depthwise"] * 1e6),
                "bandwidth_gbps": self.work["stream"] / (ms["stream"] * 1e6),
                "weight_bandwidth_gbps": self.work["gemv"] * 4 / (ms["gemv"] * 1e6),
                "per_op_overhead_us": per_op_us, "per_run_overhead_us": max(ms["runner"] * 1e3 - per_op_us, 0.0),
                "op_gelems": {n.split(":", 1)[1]: self.work[n] / (ms[n] * 1e6) for n in ms if n.startswith("op:")}}
