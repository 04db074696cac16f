"""Qualcomm HTP emulator (``onnxruntime-qnn``): ONNX Runtime's per-node EP assignment for a QDQ ONNX model.

The emulator runs in a child process (:mod:`edgepipe.toolchains.qnn_child`). The profile names the HTP
architecture and SoC (``vendor_tool = "qnn --htp-arch 73 --soc-model 43"``); without them the emulator's
defaults fail to finalize many real graphs (``QNN_COMMON_ERROR_MEM_ALLOC``). A session that cannot be created
is a ``compile_failed`` result with ONNX Runtime's message.

Matching: ONNX Runtime's layout transformation renames some nodes (``NAME_token_N``, ``NAME/duplicated``); the
suffix is undone and the node matched by name. A node ONNX Runtime duplicated and split between the HTP and the
CPU counts as CPU (the CPU executes a copy of it). A node of edgepipe's graph that ONNX Runtime did not report,
or a node it reports that edgepipe's graph lacks, is *unmatched*: a disagreement, never guessed.
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

from edgepipe.support.graph import OpGraph
from edgepipe.support.report import Placement
from edgepipe.toolchains.base import CompileResult, Toolchain, last_line

EP = "QNNExecutionProvider"
_RENAMED = re.compile(r"(_token_\d+|/duplicated.*)$")
_PROVIDER_KEYS = {"htp-arch": "htp_arch", "soc-model": "soc_model", "vtcm-mb": "vtcm_mb",
                  "htp-performance-mode": "htp_performance_mode"}


def vendor_placement(graph: OpGraph, placed: list[list[str]]) -> tuple[dict[str, Placement], dict[str, Placement],
                                                                      int]:
    """(placement by edgepipe node name, placement of the names edgepipe's graph lacks, nodes split in two)."""
    eps: dict[str, set[str]] = {}
    for name, ep in placed:
        eps.setdefault(_RENAMED.sub("", name), set()).add(ep)
    names = {node.name for node in graph.nodes}
    placement: dict[str, Placement] = {}
    unmatched: dict[str, Placement] = {}
    for name, where in eps.items():
        (placement if name in names else unmatched)[name] = "accelerator" if where == {EP} else "cpu"
    split = sum(1 for where in eps.values() if len(where) > 1)
    return placement, unmatched, split


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
        request = {"model": str(Path(model).resolve()), "run": run,
                   "provider_options": {_PROVIDER_KEYS[k]: v for k, v in options.items()}}
        proc = subprocess.run([sys.executable, "-m", "edgepipe.toolchains.qnn_child"], input=json.dumps(request),
                              capture_output=True, text=True, timeout=self.timeout_s, check=False)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise OSError(f"the QNN emulator exited with code {proc.returncode}: "
                          f"{last_line(proc.stderr or proc.stdout)}")
        try:
            return json.loads(lines[-1])
        except json.JSONDecodeError as exc:
            raise OSError(f"the QNN emulator answered no JSON: {lines[-1][:200]}") from exc

    def compile_impl(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        tool = self.label(options)
        probed = self.probe(model, options, self.run_outputs)
        if probed["status"] != "compiled":
            return CompileResult(tool=tool, status="compile_failed",
                                 detail=f"the QNN HTP compiler could not compile this graph: {probed['detail']}")
        placement, unmatched, split = vendor_placement(graph, probed["placed"])
        extra: dict[str, float | str] = {"split_nodes": float(split), **probed.get("outputs", {})}
        return CompileResult(tool=tool, status="compiled", placement=placement, unmatched=unmatched, extra=extra)
