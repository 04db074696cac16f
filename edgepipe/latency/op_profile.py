"""Why an int8 model is slow on this host: the ops XNNPACK leaves to LiteRT's reference kernels, and where
ONNX Runtime spends its time (its own per-node profiler, after graph optimisation)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np


def xnnpack_rejected_ops(path: Path) -> list[str]:
    """Op names (``TYPE_index``) of a TFLite model that LiteRT's default XNNPACK delegate did not take.

    With the delegate applied, LiteRT lists the model's ops plus one DELEGATE node
    per partition; a partition's ops are found by walking back from its outputs to
    its inputs. Whatever no partition holds runs on LiteRT's built-in kernels.
    """
    from ai_edge_litert.interpreter import Interpreter

    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    ops: list[dict[str, Any]] = interp._get_ops_details()  # noqa: SLF001 - LiteRT's only per-node view
    regular = [op for op in ops if op["op_name"] != "DELEGATE"]
    producer = {int(t): op for op in regular for t in op["outputs"]}
    taken: set[int] = set()
    for delegate in (op for op in ops if op["op_name"] == "DELEGATE"):
        boundary = {int(t) for t in delegate["inputs"]}
        stack = [producer[int(t)] for t in delegate["outputs"] if int(t) in producer]
        while stack:
            op = stack.pop()
            if op["index"] in taken:
                continue
            taken.add(op["index"])
            stack += [producer[int(t)] for t in op["inputs"] if int(t) >= 0 and int(t) not in boundary
                      and int(t) in producer]
    return [f"{op['op_name']}_{op['index']}" for op in regular if op["index"] not in taken]


def ort_time_by_op_type(path: Path, inputs: list[np.ndarray] | None = None, runs: int = 20,
                        threads: int | None = None) -> dict[str, float]:
    """Share (0..1) of ONNX Runtime's node time per op type, from its profiler, after graph optimisation.

    ``inputs`` default to uniform [0, 1) floats of the model's input shapes (dynamic dimensions = 1).
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_profiling = True
    options.log_severity_level = 3
    options.profile_file_prefix = str(Path(path).with_suffix("")) + "_profile"
    if threads:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    if inputs is None:
        rng = np.random.default_rng(0)
        inputs = [rng.random([d if isinstance(d, int) and d > 0 else 1 for d in i.shape]).astype(np.float32)
                  for i in session.get_inputs()]
    feed = {i.name: a for i, a in zip(session.get_inputs(), inputs)}
    for _ in range(runs):
        session.run(None, feed)
    profile = Path(session.end_profiling())
    try:
        events = json.loads(profile.read_text(encoding="utf-8"))
    finally:
        profile.unlink(missing_ok=True)
    per_node: dict[tuple[str, str], list[float]] = {}
    for event in events:
        if event.get("cat") == "Node" and event.get("name", "").endswith("_kernel_time"):
            key = (event["name"], event.get("args", {}).get("op_name", "?"))
            per_node.setdefault(key, []).append(float(event.get("dur", 0)))
    totals: dict[str, float] = {}
    for (_, op), durations in per_node.items():  # the median run of each node: robust to a preempted run
        totals[op] = totals.get(op, 0.0) + statistics.median(durations)
    whole = sum(totals.values()) or 1.0
    return {op: dur / whole for op, dur in sorted(totals.items(), key=lambda kv: kv[1], reverse=True)}
