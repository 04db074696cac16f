"""The QNN HTP emulator's side of :mod:`edgepipe.vendors.qnn.emulator`, run as ``python -m edgepipe.vendors.qnn.child``.

Loading the QNN plugin into a process that also holds TensorFlow crashes it, and a crash of the vendor
library must not take edgepipe down with it, so this module runs alone in a child process. It reads one JSON
request (``model``, ``provider_options``, ``run``) from stdin and writes one JSON answer to stdout: the
execution provider ONNX Runtime assigned to every node (``session.record_ep_graph_assignment_info``, no log
parsing), or the message of the compile that failed, and optionally HTP-vs-CPU outputs on a seeded input.
Graph optimisations are disabled so node names stay those of the model.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import onnxruntime_qnn
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

EP = "QNNExecutionProvider"
#: What ONNX Runtime raises when the EP cannot take a graph (e.g. "Failed to finalize QNN graph").
ORT_ERRORS = (ort_errors.Fail, ort_errors.RuntimeException, ort_errors.EPFail, ort_errors.InvalidGraph,
              ort_errors.NotImplemented, ort_errors.InvalidArgument, ort_errors.EngineError)


def htp_session(model: Path, provider_options: dict[str, str]) -> ort.InferenceSession:
    """An InferenceSession on the emulated HTP backend (CPU EP fallback allowed, assignment recorded).

    QNN is a plugin execution provider: it is registered from its library and selected per device;
    ``providers=["QNNExecutionProvider"]`` alone would silently run everything on the CPU.
    """
    ort.register_execution_provider_library(EP, onnxruntime_qnn.get_library_path())
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP]
    if not devices:
        raise OSError("the QNN execution provider registered no device")
    options.add_provider_for_devices(devices, {"backend_path": onnxruntime_qnn.get_qnn_htp_path(),
                                               **provider_options})
    return ort.InferenceSession(str(model), sess_options=options)


def assignment(session: ort.InferenceSession) -> list[list[str]]:
    """[node name as ORT names it, op type, execution provider] for every node ORT placed."""
    return [[node.name, node.op_type, subgraph.ep_name] for subgraph in session.get_provider_graph_assignment_info()
            for node in subgraph.get_nodes()]


#: numpy dtypes of ONNX Runtime's input type names; int64 for anything else (token ids).
FEED_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
               "tensor(int8)": np.int8, "tensor(uint8)": np.uint8, "tensor(int16)": np.int16,
               "tensor(uint16)": np.uint16, "tensor(int32)": np.int32, "tensor(uint32)": np.uint32,
               "tensor(bool)": np.bool_}


def feed_dtype(ort_type: str) -> Any:
    """The numpy dtype of an input ONNX Runtime declares as ``ort_type`` (e.g. 'tensor(int16)': int16 audio
    fed as int64 failed the run)."""
    return FEED_DTYPES.get(ort_type, np.int64)


def compare_outputs(model: Path, session: ort.InferenceSession) -> dict[str, float]:
    """Largest absolute and relative difference between HTP-emulator and CPU outputs on one seeded input."""
    cpu = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for inp in cpu.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in inp.shape]
        feeds[inp.name] = (rng.random(shape, dtype=np.float32).astype(feed_dtype(inp.type)) if "float" in inp.type
                           else np.zeros(shape, feed_dtype(inp.type)))
    ours, theirs = cpu.run(None, feeds), session.run(None, feeds)
    diff = max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
               for a, b in zip(ours, theirs, strict=True))
    scale = max(float(np.max(np.abs(a))) for a in ours) or 1.0
    same_top1 = float(np.argmax(ours[0]) == np.argmax(theirs[0]))
    return {"htp_vs_cpu_max_abs_diff": diff, "htp_vs_cpu_rel_diff": diff / scale, "htp_vs_cpu_same_top1": same_top1}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """Compile (create the session), record the assignment, optionally run; ORT's rejections are results."""
    model = Path(request["model"])
    try:
        session = htp_session(model, request.get("provider_options", {}))
    except ORT_ERRORS as exc:  # the EP rejected or could not finalize the graph
        return {"status": "compile_failed", "detail": str(exc).strip()}
    result: dict[str, Any] = {"status": "compiled", "placed": assignment(session)}
    if request.get("run"):
        try:
            result["outputs"] = compare_outputs(model, session)
        except ORT_ERRORS as exc:  # a failing run is a finding
            result["outputs"] = {"run_error": str(exc).strip().splitlines()[0]}
    return result


if __name__ == "__main__":
    sys.stdout.write(json.dumps(answer(json.loads(sys.stdin.read()))) + "\n")  # the child's one answer
