"""``edgepipe calibrate host-cpu``: measure this machine, write a local profile override, use it in predictions.

A short microbenchmark through ONNX Runtime (the runtime host predictions are
for): a 3×3 convolution, a matrix product and a depthwise convolution give the
effective fp32 MAC rate and per-class efficiency; a large elementwise Add gives
the effective memory bandwidth, a batch-1 matrix-vector product the bandwidth
weights stream at; a chain of tiny Adds gives the per-op and per-run overheads; a
few kernels the MAC model misses (LRN, pooling, Softmax, Transpose, Concat) are
timed on their own.

The override is a TOML file with a ``[performance]`` table, merged over the
bundled profile's ``[performance]`` whenever edgepipe predicts for that target:
``$EDGEPIPE_OVERRIDES_DIR/<target>.toml`` if that variable is set, else
``$XDG_CONFIG_HOME/edgepipe/<target>.toml`` (``~/.config/edgepipe/<target>.toml``).
"""

from __future__ import annotations

import logging
import os
import statistics
import time
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ProfileError
from edgepipe.targets.performance import PerformanceSpec
from edgepipe.targets.profile import TargetProfile

log = logging.getLogger(__name__)

OVERRIDES_ENV = "EDGEPIPE_OVERRIDES_DIR"


def override_path(target: str) -> Path:
    """Where the local override for ``target`` lives (see the module docstring)."""
    folder = os.environ.get(OVERRIDES_ENV)
    if folder:
        return Path(folder) / f"{target}.toml"
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config_home / "edgepipe" / f"{target}.toml"


@dataclass(frozen=True)
class HostMeasurement:
    """What the microbenchmark found (GMAC/s, GB/s, µs)."""

    conv_gmacs: float
    gemm_gmacs: float
    depthwise_gmacs: float
    bandwidth_gbps: float
    weight_bandwidth_gbps: float
    per_op_overhead_us: float
    per_run_overhead_us: float
    op_gelems: dict[str, float] = field(default_factory=dict)


def _graph(nodes: list[Any], inputs: list[Any], outputs: list[Any], inits: list[Any]) -> bytes:
    from onnx import helper

    model = helper.make_model(helper.make_graph(nodes, "calibrate", inputs, outputs, inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _typical_ms(model: bytes, feed: dict[str, np.ndarray], runs: int, threads: int | None) -> float:
    """Median of ``runs`` timed runs (ms): on a shared host it carries the same share of other processes' load
    as the median latency of the models it predicts (the fastest run would carry none, and short probes find
    a quiet moment far more often than long models do)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    for _ in range(3):
        session.run(None, feed)
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        session.run(None, feed)
        times.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(times)


def _runner_typical_ms(model: bytes, feed: dict[str, np.ndarray], runs: int, threads: int | None) -> float:
    """Like :func:`_typical_ms`, through edgepipe's own runner: the per-run cost ``edgepipe bench`` sees (ms)."""
    import tempfile

    from edgepipe.runtimes import open_runner

    with tempfile.TemporaryDirectory(prefix="edgepipe-calibrate-") as tmp:
        path = Path(tmp) / "overhead.onnx"
        path.write_bytes(model)
        with open_runner(path, threads=threads) as runner:
            inputs = list(feed.values())
            for _ in range(3):
                runner.infer(inputs)
            times = []
            for _ in range(runs):
                start = time.perf_counter_ns()
                runner.infer(inputs)
                times.append((time.perf_counter_ns() - start) / 1e6)
    return statistics.median(times)


def _conv(channels: int, size: int, kernel: int, group: int) -> tuple[bytes, dict[str, np.ndarray], int]:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weight = rng.random((channels, channels // group, kernel, kernel), dtype=np.float32)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, size, size])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    pad = kernel // 2
    node = helper.make_node("Conv", ["x", "w"], ["y"], group=group, pads=[pad] * 4)
    model = _graph([node], [x], [y], [numpy_helper.from_array(weight, "w")])
    macs = size * size * channels * (channels // group) * kernel * kernel
    return model, {"x": rng.random((1, channels, size, size), dtype=np.float32)}, macs


def _matmul(m: int, k: int, n: int) -> tuple[bytes, dict[str, np.ndarray], int]:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    weight = numpy_helper.from_array(rng.random((k, n), dtype=np.float32), "b")
    model = _graph([helper.make_node("MatMul", ["a", "b"], ["y"])], [a], [y], [weight])
    return model, {"a": rng.random((m, k), dtype=np.float32)}, m * k * n


def _add_chain(length: int, elements: int) -> tuple[bytes, dict[str, np.ndarray], int]:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, elements])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    names = ["x"] + [f"t{i}" for i in range(length - 1)] + ["y"]
    nodes = [helper.make_node("Add", [names[i], "x"], [names[i + 1]]) for i in range(length)]
    feed = {"x": np.ones((1, elements), np.float32)}
    return _graph(nodes, [x], [y], []), feed, length * elements * 4 * 3


#: Op kernels timed on their own: (op type, attributes), run on a (1, 64, 56, 56) feature map.
KERNELS: list[tuple[str, dict[str, Any]]] = [
    ("LRN", {"size": 5}), ("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
    ("AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2]}), ("Softmax", {"axis": -1}),
    ("Transpose", {"perm": [0, 2, 3, 1]}), ("Concat", {"axis": 1}),
]


def _kernel_gelems(op: str, attrs: dict[str, Any], threads: int | None, runs: int) -> float:
    """Output elements per second of one op kernel (G elements/s)."""
    from onnx import TensorProto, helper

    shape = [1, 64, 56, 56]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inputs = ["x", "x"] if op == "Concat" else ["x"]
    model = _graph([helper.make_node(op, inputs, ["y"], **attrs)], [x], [y], [])
    outputs = 64 * 56 * 56 * (2 if op == "Concat" else 1) // (4 if op.endswith("Pool") else 1)
    feed = {"x": np.random.default_rng(0).random(shape, dtype=np.float32)}
    return outputs / (_typical_ms(model, feed, max(runs // 3, 5), threads) * 1e6)


def measure_host(threads: int | None = None, runs: int = 30) -> HostMeasurement:
    """Run the microbenchmark (a few seconds) and return the effective rates of this host."""
    conv, feed, macs = _conv(64, 56, 3, 1)
    conv_gmacs = macs / (_typical_ms(conv, feed, runs, threads) * 1e6)
    gemm, feed, macs = _matmul(128, 1024, 1024)
    gemm_gmacs = macs / (_typical_ms(gemm, feed, runs, threads) * 1e6)
    dw, feed, macs = _conv(64, 28, 3, 64)  # cache-resident: the compute rate, memory is costed apart
    depthwise_gmacs = macs / (_typical_ms(dw, feed, runs, threads) * 1e6)
    gemv, feed, macs = _matmul(1, 4096, 4096)
    weight_bandwidth = macs * 4 / (_typical_ms(gemv, feed, runs, threads) * 1e6)
    big, feed, nbytes = _add_chain(4, 4 * 1024 * 1024)
    bandwidth = nbytes / (_typical_ms(big, feed, runs, threads) * 1e6)
    short, feed, _ = _add_chain(1, 16)
    long, _, _ = _add_chain(65, 16)
    one = _runner_typical_ms(short, feed, runs * 10, threads)
    many = _typical_ms(long, feed, runs * 10, threads)
    per_op = max((many - one) / 64 * 1e3, 0.0)
    result = HostMeasurement(conv_gmacs=conv_gmacs, gemm_gmacs=gemm_gmacs, depthwise_gmacs=depthwise_gmacs,
                             bandwidth_gbps=bandwidth, weight_bandwidth_gbps=weight_bandwidth,
                             per_op_overhead_us=per_op,
                             per_run_overhead_us=max(one * 1e3 - per_op, 0.0),
                             op_gelems={op: _kernel_gelems(op, attrs, threads, runs) for op, attrs in KERNELS})
    log.info("host calibration: %s", result)
    return result


def _toml_value(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(round(value, 4)) if isinstance(value, float) else str(value)


def write_override(target: str, measured: HostMeasurement, path: Path | None = None) -> Path:
    """Write the measured rates as ``[performance.accelerator]`` of ``target``'s override file; returns its path."""
    path = path or override_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    efficiency = {"gemm": min(measured.gemm_gmacs / measured.conv_gmacs, 1.5),
                  "depthwise": min(measured.depthwise_gmacs / measured.conv_gmacs, 1.5)}
    lines = [f"# Written by `edgepipe calibrate {target}` on {stamp}; delete this file to use the bundled profile.",
             "[performance.accelerator]",
             f"fp32_gmacs = {_toml_value(measured.conv_gmacs)}",
             f"memory_bandwidth_gbps = {_toml_value(measured.bandwidth_gbps)}",
             f"weight_bandwidth_gbps = {_toml_value(measured.weight_bandwidth_gbps)}",
             f"per_op_overhead_us = {_toml_value(measured.per_op_overhead_us)}",
             f"per_run_overhead_us = {_toml_value(measured.per_run_overhead_us)}",
             "[performance.accelerator.efficiency]",
             *(f"{kind} = {_toml_value(value)}" for kind, value in efficiency.items()),
             "[performance.accelerator.op_gelems]",
             *(f"{op} = {_toml_value(value)}" for op, value in measured.op_gelems.items()), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, dict) and isinstance(
            merged.get(key), dict) else value
    return merged


def _profile_facts(profile: TargetProfile) -> dict[str, Any]:
    """Accelerator facts the profile already states in [compute] / [memory] (read, not duplicated)."""
    compute = getattr(profile, "compute", None)
    memory = getattr(profile, "memory", None)
    facts = {"clock_mhz": getattr(compute, "clock_mhz", None),
             "peak_int8_tops": getattr(compute, "int8_tops", None),
             "peak_fp16_tflops": getattr(compute, "fp16_tflops", None),
             "memory_bandwidth_gbps": getattr(memory, "bandwidth_gb_s", None)}
    return {key: value for key, value in facts.items() if value}


def effective_performance(profile: TargetProfile) -> PerformanceSpec | None:
    """``profile.performance`` completed from [compute]/[memory], with the local override merged over it.

    Raises :class:`ProfileError` when the result lacks a clock or a bandwidth, or the override is malformed.
    """
    if profile.performance is None:
        return None
    raw = profile.performance.model_dump(exclude_none=True)
    raw["accelerator"] = {**_profile_facts(profile), **raw["accelerator"]}
    path = override_path(profile.name)
    if path.is_file():
        try:
            raw = _merge(raw, tomllib.loads(path.read_text(encoding="utf-8")).get("performance", {}))
        except tomllib.TOMLDecodeError as exc:
            raise ProfileError(f"malformed performance override ({exc})", path=path,
                               fix=f"Re-run `edgepipe calibrate {profile.name}` or delete the file") from None
    try:
        spec = PerformanceSpec.model_validate(raw)
        _ = spec.accelerator.clock, spec.accelerator.bandwidth
    except ValueError as exc:
        where = path if path.is_file() else f"targets/{profile.name}.toml"
        raise ProfileError(f"incomplete [performance] ({exc})", path=where,
                           fix="Give the accelerator's clock_mhz and memory bandwidth") from None
    return spec


def is_calibrated(profile: TargetProfile) -> bool:
    """Whether a local override exists for ``profile``."""
    return override_path(profile.name).is_file()
