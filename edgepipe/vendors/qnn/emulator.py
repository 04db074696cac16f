"""Qualcomm HTP emulator (``onnxruntime-qnn``): ONNX Runtime's per-node EP assignment for a QDQ ONNX model.

The emulator runs in a child process (:mod:`edgepipe.vendors.qnn.child`). The profile names the HTP
architecture and SoC (``vendor_tool = "qnn --htp-arch 73 --soc-model 43"``); without them the emulator's
defaults fail to finalize many real graphs (``QNN_COMMON_ERROR_MEM_ALLOC``). A session that cannot be created
is a ``compile_failed`` result with ONNX Runtime's message.

Matching: the emulator compiles a copy of the model whose nodes carry edgepipe's names. ONNX Runtime's layout
transformation renames some nodes (``NAME_token_N``, ``NAME/duplicated``); the suffix is undone and the node
matched by name. A node ONNX Runtime duplicated and split between the HTP and the CPU counts as CPU (the CPU
executes a copy of it). A node it recreated under a generic name is paired with an unmatched node of the same
op type (see :func:`vendor_placement`). A node of edgepipe's graph that is still unmatched has no vendor
placement: a disagreement, never guessed from its neighbours.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from edgepipe.graph.opgraph import OpGraph
from edgepipe.support.report import Placement
from edgepipe.vendors.base import CompileResult, Toolchain, last_line
from edgepipe.vendors.onnx_names import named_copy

EP = "QNNExecutionProvider"
_RENAMED = re.compile(r"(_token_\d+|/duplicated.*)$")
_PROVIDER_KEYS = {"htp-arch": "htp_arch", "soc-model": "soc_model", "vtcm-mb": "vtcm_mb",
                  "htp-performance-mode": "htp_performance_mode"}


def _base(name: str) -> str:
    return _RENAMED.sub("", name)


def vendor_placement(graph: OpGraph, placed: list[list[str]]) -> tuple[dict[str, Placement], dict[str, float]]:
    """Placement by edgepipe node name, and the matching figures.

    ``placed`` rows are [node name, op type, EP]. A node ONNX Runtime recreated under a generic name (its op
    type, as its layout transformation names the Q/DQ and Transpose nodes it writes) is paired, in order,
    with an edgepipe node of the same op type that matched nothing by name (``rematched_by_op``); the
    generic nodes left over were inserted by ONNX Runtime (``inserted_nodes``) and are no model nodes.
    """
    eps: dict[str, set[str]] = {}
    generic: dict[str, list[str]] = {}
    names = {node.name for node in graph.nodes}
    for name, op, ep in placed:
        base = name if name in names else _base(name)  # a model node may itself be named NAME_token_N
        if base in names:
            eps.setdefault(base, set()).add(ep)
        else:
            generic.setdefault(op, []).append(ep)
    placement: dict[str, Placement] = {n: "accelerator" if where == {EP} else "cpu" for n, where in eps.items()}
    rematched = 0
    for node in graph.nodes:
        spare = generic.get(node.op)
        if node.name not in placement and spare:
            placement[node.name] = "accelerator" if spare.pop(0) == EP else "cpu"
            rematched += 1
    removed = _removed_by_layout(graph, placement)
    figures = {"split_nodes": float(sum(1 for where in eps.values() if len(where) > 1)),
               "rematched_by_op": float(rematched), "inserted_nodes": float(sum(map(len, generic.values()))),
               "removed_by_layout": float(removed)}
    return placement, figures


#: Ops ONNX Runtime's NHWC layout transformation cancels against the transposes it inserts (with their Q/DQ).
_LAYOUT_OPS = {"Transpose", "QuantizeLinear", "DequantizeLinear"}


def _removed_by_layout(graph: OpGraph, placement: dict[str, Placement]) -> int:
    """Place the model's Transpose (and Q/DQ) nodes that ONNX Runtime's layout transformation cancelled.

    Such a node is absent from the session's graph: it was merged into the transposes and Q/DQ around the
    partition of the node that writes its input, so it is placed where that producer runs (producers first:
    graph order is topological). A node without a placed producer stays unmatched (a disagreement).
    """
    producers = graph.producers()
    placed = 0
    for node in graph.nodes:
        if node.name in placement or node.op not in _LAYOUT_OPS:
            continue
        writers = [graph.nodes[producers[t.name]].name for t in node.activations_in if t.name in producers]
        where = {placement[w] for w in writers if w in placement}
        if len(where) == 1 and len(writers) == len([w for w in writers if w in placement]):
            placement[node.name] = where.pop()
            placed += 1
    return placed


class QnnHtp(Toolchain):
    """The QNN HTP backend emulated on x86 by onnxruntime-qnn, in a child process of this Python."""

    name = "qnn"
    install_command = "pip install 'edgepipe[qnn]'"
    options = {"htp-arch": "Hexagon HTP architecture (68, 69, 73, 75)",
               "soc-model": "Qualcomm SoC model id the QNN SDK uses (43: SM8550, 57: SM8650)",
               "vtcm-mb": "VTCM size (MiB)", "htp-performance-mode": "burst, balanced, ..."}

    def __init__(self, run_outputs: bool = True) -> None:
        #: Also run the model on the emulator and on the CPU EP and compare outputs (seconds per model).
        self.run_outputs = run_outputs

    def version(self) -> str | None:
        if find_spec("onnxruntime_qnn") is None:
            return None
        return metadata.version("onnxruntime-qnn")

    def environment(self) -> str:
        return f"{sys.prefix} (child process)"

    def probe(self, model: Path, options: dict[str, str], run: bool) -> dict[str, Any]:
        """The child's JSON answer; ``OSError`` when the child crashed or answered nothing."""
        request = {"model": str(Path(model).resolve()), "run": run,  # the named copy (see compile_impl)
                   "provider_options": {_PROVIDER_KEYS[k]: v for k, v in options.items()}}
        proc = subprocess.run([sys.executable, "-m", "edgepipe.vendors.qnn.child"], input=json.dumps(request),
                              capture_output=True, text=True, timeout=self.limit_s(), check=False)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise OSError(f"the QNN emulator exited with code {proc.returncode}: "
                          f"{last_line(proc.stderr or proc.stdout)}")
        # QNN's native library prints a line of its own ("# LIBNATIVE: ...") when it unloads: after the answer
        # unless Python's stdout is unbuffered, so the answer is the last line that is a JSON object
        answer = next((line for line in reversed(lines) if line.startswith("{")), lines[-1])
        try:
            return json.loads(answer)
        except json.JSONDecodeError as exc:
            raise OSError(f"the QNN emulator answered no JSON: {lines[-1][:200]}") from exc

    def compile_impl(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        tool = self.label(options)
        probed = self.probe(named_copy(model, graph, workdir / "named.onnx"), options, self.run_outputs)
        if probed["status"] != "compiled":
            return CompileResult(tool=tool, status="compile_failed",
                                 detail=f"the QNN HTP compiler could not compile this graph: {probed['detail']}")
        placement, figures = vendor_placement(graph, probed["placed"])
        extra: dict[str, float | str] = {**figures, **probed.get("outputs", {})}
        return CompileResult(tool=tool, status="compiled", placement=placement, extra=extra)
