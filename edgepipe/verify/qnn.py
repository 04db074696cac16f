"""Qualcomm HTP emulator (``onnxruntime-qnn``): ONNX Runtime's own per-node EP assignment, and an output check.

QNN is a plugin execution provider: it is registered from its library and
selected per device; ``providers=["QNNExecutionProvider"]`` alone would silently
run everything on the CPU. ``session.record_ep_graph_assignment_info`` makes
ONNX Runtime record which EP got each node, so no log parsing is needed.
Graph optimisations are disabled so node names stay those of the model; the
layout transformation the EP needs still renames some nodes (``_token_N``,
``/duplicated``) and recreates some Q/DQ nodes, whose placement is then taken
from the op they quantize for (reported as ``inferred_nodes``).

The emulator runs in a child process (``python -m edgepipe.verify.qnn MODEL``):
loading the QNN plugin into a process that also holds TensorFlow crashes it,
and a crash of the vendor library must not take edgepipe down with it.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.support.graph import OpGraph
from edgepipe.support.report import Placement, SupportReport, Verification
from edgepipe.verify.compare import compare

log = logging.getLogger(__name__)

EP = "QNNExecutionProvider"
_RENAMED = re.compile(r"(_token_\d+|/duplicated.*)$")
_registered = False


def _register() -> Any:
    global _registered
    import onnxruntime as ort
    import onnxruntime_qnn

    if not _registered:
        ort.register_execution_provider_library(EP, onnxruntime_qnn.get_library_path())
        _registered = True
    return ort, onnxruntime_qnn


def htp_session(model: Path, record: bool = True) -> Any:
    """An InferenceSession on the emulated HTP backend (CPU EP fallback allowed, assignment recorded)."""
    ort, qnn = _register()
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if record:
        options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    devices = [d for d in ort.get_ep_devices() if d.ep_name == EP]
    if not devices:
        raise RuntimeError("the QNN execution provider registered no device")
    options.add_provider_for_devices(devices, {"backend_path": qnn.get_qnn_htp_path()})
    return ort.InferenceSession(str(model), sess_options=options)


def assignment(session: Any) -> dict[str, str]:
    """Node name (ORT renames undone) → execution provider that got it."""
    placed: dict[str, str] = {}
    for subgraph in session.get_provider_graph_assignment_info():
        for node in subgraph.get_nodes():
            placed.setdefault(_RENAMED.sub("", node.name), subgraph.ep_name)
    return placed


def vendor_placement(graph: OpGraph, placed: dict[str, str]) -> tuple[dict[str, Placement], int]:
    """Placement of every node of ``graph``; unmatched Q/DQ nodes follow the op they quantize for."""
    direct: dict[str, Placement] = {n: "accelerator" if ep == EP else "cpu" for n, ep in placed.items()}
    producers, consumers = graph.producers(), graph.consumers()
    out: dict[str, Placement] = {}
    inferred = 0
    for node in graph.nodes:
        if node.name in direct:
            out[node.name] = direct[node.name]
            continue
        neighbours = [graph.nodes[i].name for t in node.outputs for i in consumers.get(t.name, [])]
        neighbours += [graph.nodes[producers[t.name]].name for t in node.inputs if t.name in producers]
        if node.op == "QuantizeLinear":
            neighbours.reverse()
        known = [direct[n] for n in neighbours if n in direct]
        if known:
            out[node.name] = known[0]
            inferred += 1
    return out, inferred


def compare_outputs(model: Path, session: Any) -> dict[str, float | str]:
    """Largest absolute difference between HTP-emulator and CPU outputs on one seeded random input."""
    import onnxruntime as ort

    cpu = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for inp in cpu.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in inp.shape]
        feeds[inp.name] = rng.random(shape, dtype=np.float32) if "float" in inp.type else np.zeros(shape, np.int64)
    ours, theirs = cpu.run(None, feeds), session.run(None, feeds)
    diff = max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
               for a, b in zip(ours, theirs))
    scale = max(float(np.max(np.abs(a))) for a in ours) or 1.0
    same_top1 = float(np.argmax(ours[0]) == np.argmax(theirs[0]))
    return {"htp_vs_cpu_max_abs_diff": diff, "htp_vs_cpu_rel_diff": diff / scale, "htp_vs_cpu_same_top1": same_top1}


def probe(model: Path, run: bool) -> dict[str, Any]:
    """In this process: the EP assignment by node name, and (with ``run``) the output comparison."""
    session = htp_session(model)
    result: dict[str, Any] = {"placed": assignment(session)}
    if run:
        try:
            result["outputs"] = compare_outputs(model, session)
        except Exception as exc:  # noqa: BLE001 - a failing run is a finding to report, not a crash
            result["outputs"] = {"run_error": str(exc).splitlines()[0]}
    return result


def _probe_in_child(model: Path, run: bool) -> dict[str, Any]:
    command = [sys.executable, "-m", "edgepipe.verify.qnn", str(model), *(["--run"] if run else [])]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        lines = (proc.stderr or proc.stdout).strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit code {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def verify(report: SupportReport, model: Path, graph: OpGraph | None = None, run: bool = True) -> Verification:
    """The HTP emulator's node placement against edgepipe's, and its outputs against the CPU's."""
    tool = "qnn-htp-emulator"
    try:
        import onnxruntime_qnn  # noqa: F401 - only to tell "not installed" from "failed"
    except ImportError:
        return Verification(tool=tool, status="not installed", detail="pip install 'edgepipe[qnn]'")
    try:
        probed = _probe_in_child(model, run)
    except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return Verification(tool=tool, status="failed", detail=str(exc))
    if graph is None:
        from edgepipe.support.onnx_reader import read_onnx

        graph = read_onnx(model)
    vendor, inferred = vendor_placement(graph, probed["placed"])
    result = compare(tool, report, vendor)
    result.extra["inferred_nodes"] = float(inferred)
    result.extra.update(probed.get("outputs", {}))
    return result


if __name__ == "__main__":
    _model = Path(sys.argv[1])
    sys.stdout.write(json.dumps(probe(_model, run="--run" in sys.argv[2:])) + "\n")  # the child's answer
