"""gpu-reference on a real GPU: ONNX Runtime CUDA (and TensorRT where present), one short prepared script.

    pip install onnxruntime-gpu   # in a separate environment: it replaces the CPU-only onnxruntime
    python benchmarks/gpu_reference.py MODEL.onnx [MODEL.onnx ...] [--json OUT]

For each model and each available provider (TensorRT fp16, CUDA, CPU for reference) it records
session creation, first inference and p50/p90/p99 of single-stream latency (ms, 300 runs after 30
warm-up runs, I/O bound to the device so the numbers exclude host copies), with the GPU's name,
driver, power limit and the date from ``nvidia-smi``. The gpu-reference profile's estimates stay
"unvalidated" until its [performance.error] is filled from a run of this script next to
``edgepipe bench --target gpu-reference`` predictions. It has not been run on a GPU yet.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

PROVIDERS = [
    ("tensorrt-fp16", "TensorrtExecutionProvider", {"trt_fp16_enable": True}),
    ("cuda", "CUDAExecutionProvider", {}),
    ("cpu", "CPUExecutionProvider", {}),
]


def gpu_info() -> dict[str, str]:
    """GPU name, driver, power limit (W) from nvidia-smi, or an explanation."""
    query = "name,driver_version,power.limit,clocks.max.sm"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"], check=True,
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return {"error": f"nvidia-smi unavailable: {exc}"}
    return dict(zip(query.split(","), (v.strip() for v in out.split(","))))


def time_model(path: Path, provider: str, options: dict, runs: int = 300, warmup: int = 30) -> dict:
    import onnxruntime as ort

    start = time.perf_counter()
    session = ort.InferenceSession(str(path), providers=[(provider, options), "CPUExecutionProvider"])
    init_ms = (time.perf_counter() - start) * 1e3
    device = "cuda" if provider != "CPUExecutionProvider" else "cpu"
    binding = session.io_binding()
    rng = np.random.default_rng(0)
    for arg in session.get_inputs():
        shape = [d if isinstance(d, int) and d > 0 else 1 for d in arg.shape]
        value = ort.OrtValue.ortvalue_from_numpy(rng.random(shape).astype(np.float32), device, 0)
        binding.bind_ortvalue_input(arg.name, value)
    for out in session.get_outputs():
        binding.bind_output(out.name, device)
    start = time.perf_counter()
    session.run_with_iobinding(binding)
    first_ms = (time.perf_counter() - start) * 1e3
    for _ in range(warmup):
        session.run_with_iobinding(binding)
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        session.run_with_iobinding(binding)
        times.append((time.perf_counter_ns() - start) / 1e6)
    p50, p90, p99 = np.percentile(times, [50, 90, 99])
    return {"providers_used": session.get_providers(), "init_ms": init_ms, "first_inference_ms": first_ms,
            "p50_ms": float(p50), "p90_ms": float(p90), "p99_ms": float(p99), "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", type=Path, nargs="+")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import onnxruntime as ort

    available = set(ort.get_available_providers())
    if "CUDAExecutionProvider" not in available:
        sys.exit("no CUDAExecutionProvider: install onnxruntime-gpu on a machine with an NVIDIA GPU")
    result = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "gpu": gpu_info(),
              "onnxruntime": ort.__version__, "results": []}
    for model in args.models:
        for label, provider, options in PROVIDERS:
            if provider not in available:
                continue
            row = {"model": model.name, "provider": label}
            try:
                row |= time_model(model, provider, options)
            except Exception as exc:  # noqa: BLE001 - one provider failing must not lose the others' numbers
                row["error"] = str(exc).splitlines()[0]
            result["results"].append(row)
            print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
