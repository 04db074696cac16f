"""Rockchip rknn-toolkit2 (RK3588, RK3576, ...): compiled in its own pinned environment, over a subprocess with JSON.

rknn-toolkit2 2.5.0 pins numpy<=1.26.4, onnx<=1.18, protobuf<=4.25.4 and torch<=2.4 (``rknn.api`` imports torch
even for ONNX input), which cannot live beside TensorFlow in edgepipe's environment. ``edgepipe toolchain
install rknn`` creates that environment (:mod:`edgepipe.vendors.venv`); :mod:`edgepipe.vendors.rknn.runner`
runs inside it. edgepipe writes a copy of the float ONNX model whose nodes carry edgepipe's node names, so the
compiler's layer table names them (:mod:`edgepipe.vendors.rknn.model`), and seeded random inputs (the
quantization dataset and the input of the simulator's per-layer accuracy analysis). Placement by edgepipe
node: the target of every layer the node was rewritten into; a node the compiler fused into a neighbour
(BatchNormalization into Conv, an activation into ``ConvRelu``) runs where the node it was fused into runs (counted
in ``fused_nodes``); a node folded into a constant, merged away with the data movement around it (two reshapes in a
row), or read only by folded nodes, runs nowhere at inference time and so is not a CPU op. A layer that traces back
to no node of the model (other than the compiler's input/output operators) is unmatched: a disagreement.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import onnx

from edgepipe.graph.opgraph import OpGraph
from edgepipe.rules.sequence import has_peepholes
from edgepipe.support.report import Placement
from edgepipe.vendors.base import CompileResult, Toolchain, last_line
from edgepipe.vendors.rknn import layers as rknn_layers
from edgepipe.vendors.rknn.model import ToolkitModel, toolkit_model
from edgepipe.vendors.venv import ManagedEnv

RUNNER = Path(__file__).with_name("runner.py")
#: The line the runner prints before it builds again with a rule disabled (``runner.ATTEMPT_MARKER``; the
#: runner runs in the toolkit's environment and cannot be imported here).
ATTEMPT_MARKER = "=== edgepipe: rknn build again, disable_rules +"
#: A row of the accuracy analysis: "[OpType] tensor name   entire cos | euc   single cos | euc".
_ACCURACY_ROW = re.compile(r"^(\[\S+\] .+?)\s+(-?[\d.]+(?:e-?\d+)?)\s+\|\s+\S+\s+(-?[\d.]+(?:e-?\d+)?)\s+\|\s+\S+$")

#: The pinned environment. rknn-toolkit2 itself goes in without its declared dependencies so that the
#: headless OpenCV build (no libGL needed) stands in for ``opencv-python``; everything else is pinned here.
ENV = ManagedEnv(
    name="rknn",
    no_deps=("rknn-toolkit2==2.5.0",),
    requirements=("torch==2.4.0", "numpy==1.26.4", "onnx==1.18.0", "protobuf==4.25.4", "onnxruntime==1.20.1",
                  "scipy==1.14.1", "opencv-python-headless==4.10.0.84", "fast-histogram==0.14",
                  "psutil==7.0.0", "ruamel.yaml==0.18.10", "tqdm==4.67.1", "setuptools==69.5.1"),
)


def seeded_inputs(graph: OpGraph, folder: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """One .npy per graph input not in ``skip``: seeded uniform [0, 1) for a float input, zeros of the input's own
    type for an integer or boolean one (token ids, indices: any other value may be out of range, and a float
    array fed to an integer input makes the toolkit's quantizer fail with NaN); ``ValueError`` for a dynamic
    shape."""
    rng = np.random.default_rng(0)
    paths = []
    for index, tensor in enumerate(graph.graph_inputs):
        if tensor.name in skip:
            continue
        if not tensor.static or tensor.shape is None:
            raise ValueError(f"input '{tensor.name}' has dynamic shape {tensor.shape}; RKNN needs static shapes")
        path = folder / f"input_{index}.npy"
        shape = [int(d) for d in tensor.shape if d is not None]
        data = (rng.random(shape, dtype=np.float32) if tensor.dtype.startswith("float")
                else np.zeros(shape, dtype=np.dtype(tensor.dtype)))
        np.save(path, data)
        paths.append(str(path))
    return paths


def _upstream(graph: OpGraph, index: int, placed: dict[str, Placement]) -> Placement | None:
    """The placement of the nearest placed node upstream of node ``index`` along feature maps."""
    producers = graph.producers()
    current = graph.nodes[index]
    for _ in range(len(graph.nodes)):
        feature = next((t.name for t in current.activations_in if t.name in producers), None)
        if feature is None:
            return None
        current = graph.nodes[producers[feature]]
        if current.name in placed:
            return placed[current.name]
    return None


#: Layer types the toolkit fuses elementwise ops into (an Add, a Relu), never a Pad or a Reshape.
_COMPUTE_LAYERS = ("Conv", "MatMul", "Gemm", "FullyConnected")


def _fused_into(graph: OpGraph, index: int, layer_ops: dict[str, str],
                placed: dict[str, Placement]) -> Placement | None:
    """The placement of the layer a node missing from the table was fused into, when a producer's layer is one
    that takes such ops in: first one whose type names the node's op (an Add and its Relu after a Conv become
    that Conv's "ConvAddRelu" layer), else a compute layer (a residual Add of a 1x1 Conv's own input is folded
    into that Conv's weights: "ConvRelu"), whichever input of the node it feeds; None when no producer's layer
    is either."""
    producers = graph.producers()
    found = [graph.nodes[producers[t.name]] for t in graph.nodes[index].activations_in if t.name in producers]
    candidates = [p for p in found if p.name in placed and p.name in layer_ops]
    op = graph.nodes[index].op
    for fits in (lambda layer, p: op in layer and layer != p.op,
                 lambda layer, p: any(kind in layer for kind in _COMPUTE_LAYERS)):
        chosen = next((p for p in candidates if fits(layer_ops[p.name], p)), None)
        if chosen is not None:
            return placed[chosen.name]
    return None


_RESHAPE_OPS = ("Reshape", "Squeeze", "Unsqueeze", "Flatten")


def _reshapes_merged_into_inserted(graph: OpGraph, log: rknn_layers.CompilerLog, names: set[str],
                                   direct: dict[str, set[str]]) -> None:
    """Add to ``direct`` the target of each inserted reshape layer for the model reshape that writes the tensor
    the layer was made from, where a rewrite dropped that reshape into it (``fuse_two_reshape``)."""
    writers = {tensor.name: node for node in graph.nodes for tensor in node.outputs}
    dropped = {n for name in log.eliminated for n in rknn_layers.origins(name, log, names)}
    for layer in log.layers:
        writer = writers.get(rknn_layers.stem(layer.name)) if layer.name in log.inserted else None
        if writer is not None and writer.op in _RESHAPE_OPS and writer.name in dropped:
            direct.setdefault(writer.name, set()).add(layer.target)


_SUBGRAPH_OPS = ("If", "Loop", "Scan")


def _read_only_by_folded(graph: OpGraph, folded: set[str], placed: dict[str, Placement]) -> set[str]:
    """Nodes in no layer whose every reader the compiler folded (or dropped so): dead once those are constants
    (the Not -> Cast before a Mul by a zero constant), so they run nowhere rather than where their input runs."""
    if any(node.op in _SUBGRAPH_OPS for node in graph.nodes):  # their branches read tensors no input names
        return set()
    consumers, outputs = graph.consumers(), graph.output_names()
    gone = set(folded)
    for node in reversed(graph.nodes):  # ONNX nodes are in topological order
        readers = [graph.nodes[r].name for t in node.outputs for r in consumers.get(t.name, [])]
        if node.name not in placed and readers and set(readers) <= gone and \
                not any(t.name in outputs for t in node.outputs):
            gone.add(node.name)
    return gone - set(folded)


def placement_from_log(graph: OpGraph, log: rknn_layers.CompilerLog) -> tuple[dict[str, Placement],
                                                                                dict[str, Placement], int]:
    """(placement by edgepipe node, unmatched layers with their target, nodes placed through a fusion)."""
    names = {node.name for node in graph.nodes}
    direct: dict[str, set[str]] = {}
    layer_ops: dict[str, str] = {}
    unmatched: dict[str, Placement] = {}
    for layer in log.layers:
        if layer.op in rknn_layers.IO_LAYERS or layer.op in rknn_layers.CONVERSION_LAYERS:
            continue
        found = rknn_layers.origins(layer.name, log, names)
        if not found and layer.name not in log.inserted:
            unmatched[layer.name] = "cpu" if layer.target == "CPU" else "accelerator"
        for name in found:
            direct.setdefault(name, set()).add(layer.target)
            layer_ops.setdefault(name, layer.op)
    _reshapes_merged_into_inserted(graph, log, names, direct)
    placed: dict[str, Placement] = {n: "cpu" if "CPU" in t else "accelerator" for n, t in direct.items()}
    placed.update({n: "accelerator" for n in log.folded if n in names and n not in placed})
    for name in log.eliminated - log.inserted:  # merged away: runs nowhere at inference time, not a CPU op
        placed.update({n: "accelerator" for n in rknn_layers.origins(name, log, names) if n not in placed})
    placed.update({n: "accelerator" for n in _read_only_by_folded(graph, log.folded, placed)})
    fused = 0
    for node in graph.nodes:
        if node.name not in placed:
            inherited = _fused_into(graph, node.index, layer_ops, placed) or _upstream(graph, node.index, placed)
            if inherited is not None:
                placed[node.name] = inherited
                fused += 1
    return placed, unmatched, fused


class CompilerAborted(Exception):
    """rknn-toolkit2's native compiler ended the runner with a signal (an abort, not a Python error) after
    printing why: it cannot compile this graph."""

    def __init__(self, signal: int, error: str) -> None:
        super().__init__(f"signal {signal}: {error}")
        self.signal, self.error = signal, error


class Rknn(Toolchain):
    """rknn-toolkit2 in its own environment under the user cache folder."""

    name = "rknn"
    install_command = "edgepipe toolchain install rknn"
    options = {"target-platform": "Rockchip SoC (rk3588, rk3576, rk3568, rk3566, rk3562, rv1106, ...)"}
    env = ENV

    def __init__(self, accuracy: bool = True) -> None:
        #: Also run the simulator's per-layer accuracy analysis (cosine per layer vs float).
        self.accuracy = accuracy

    def version(self) -> str | None:
        return "2.5.0" if self.env.installed() else None

    def install(self) -> float:
        """Create the pinned environment under the user cache folder (several minutes, ~5 GiB)."""
        return self.env.install()

    def environment(self) -> str:
        return str(self.env.path)

    def run_runner(self, request: dict[str, object], workdir: Path) -> tuple[dict[str, object], str]:
        """(the runner's JSON answer, the compiler's native log); ``OSError`` when the environment broke."""
        answer_path = workdir / "answer.json"
        request = {**request, "answer": str(answer_path)}
        proc = subprocess.run([str(self.env.python), "-I", str(RUNNER)], input=json.dumps(request), capture_output=True,
                              text=True, timeout=self.limit_s(), check=False, cwd=workdir,
                              env={**os.environ, "RKNN_LOG_LEVEL": "4"})
        if not answer_path.is_file():
            lines = (proc.stdout + proc.stderr).splitlines()
            errors = [line.split("]", 1)[-1].strip() for line in lines if line.startswith("E RKNN:")]
            # a C++ exception the native compiler does not catch ends it with SIGABRT after "what(): ..." (a 3-D
            # MaxPool: "vector::_M_range_check"): the compiler's failure on this graph, not a broken environment
            thrown = [line.strip() for line in lines if line.strip().startswith("what():")]
            if proc.returncode < 0 and (errors or thrown):
                raise CompilerAborted(-proc.returncode, (errors or thrown)[-1])
            raise OSError(f"the RKNN runner exited with code {proc.returncode} and no answer: "
                          f"{last_line(proc.stderr or proc.stdout)}")
        last = "\n".join(stream.rpartition(ATTEMPT_MARKER)[2] for stream in (proc.stdout, proc.stderr))
        (workdir / "rknn_native.log").write_text(last, encoding="utf-8")  # the layer table, kept for a reader
        return json.loads(answer_path.read_text(encoding="utf-8")), last

    def compile_impl(self, model: Path, graph: OpGraph, options: dict[str, str], workdir: Path) -> CompileResult:
        tool = self.label(options)
        prepared = toolkit_model(model, graph, workdir / "named.onnx")
        try:
            inputs = seeded_inputs(graph, workdir, skip=prepared.unread_inputs)
        except ValueError as exc:
            return CompileResult(tool=tool, status="compile_failed", detail=f"rknn: {exc}")
        request = {"model": str(prepared.path), "inputs": inputs,
                   "target_platform": options.get("target-platform", "rk3588"), "workdir": str(workdir),
                   "accuracy": self.accuracy}
        try:
            answer, native = self.run_runner(request, workdir)
        except CompilerAborted as exc:
            return CompileResult(tool=tool, status="compile_failed",
                                 detail=f"rknn-toolkit2's compiler aborted on this graph (signal {exc.signal}): "
                                        f"{exc.error}{peephole_hint(graph)}")
        if "error" in answer:
            return CompileResult(tool=tool, status="failed", detail=f"rknn: {last_line(str(answer['error']))}")
        native, python_log = prepared.original_text(native), prepared.original_text(str(answer.get("log", "")))
        steps = dict(answer.get("steps", {}))  # type: ignore[call-overload]
        raised = {k: prepared.original_text(str(v)) for k, v in dict(answer.get("raised", {})).items()}  # type: ignore[call-overload]
        compile_steps = {k: v for k, v in steps.items() if k != "accuracy_analysis"}
        if any(code != 0 for code in compile_steps.values()) or "build" not in steps:
            errors = [line for line in native.splitlines() if line.startswith("E ")]
            message = "; ".join(f"{k}: {v}" for k, v in raised.items() if k in compile_steps) or (
                errors[-1] if errors else last_line(native))
            tried = f" (also with {disabled_rules_note(answer)})" if answer.get("disabled_rules") else ""
            return CompileResult(tool=tool, status="compile_failed",
                                 detail=f"rknn could not compile this graph ({compile_steps}): "
                                        f"{control_flow_note(prepared)}{message}{tried}"
                                        f"{non_finite_hint(model) if 'NaN' in message else ''}"
                                        f"{integer_input_hint(graph) if 'input data type' in message else ''}")
        log = rknn_layers.parse(native, python_log)
        placement, unmatched, fused = placement_from_log(graph, log)
        extra: dict[str, float | str] = {"fused_nodes": float(fused), "layers": float(len(log.layers))}
        inserted_cpu = [layer.name for layer in log.layers if layer.target == "CPU" and (
            layer.name in log.inserted or layer.op in rknn_layers.CONVERSION_LAYERS)]
        if inserted_cpu:  # no model node runs there, but the hand-over to the CPU is real: reported, not counted
            extra["inserted_cpu_layers"] = "; ".join(inserted_cpu)[:500]
        if log.fallbacks:
            extra["fallback_warnings"] = "; ".join(dict.fromkeys(log.fallbacks))[:1000]
        if answer.get("disabled_rules"):
            extra["compiled_with"] = disabled_rules_note(answer)
        if answer.get("accuracy"):
            extra.update(accuracy_figures(prepared.original_text(str(answer["accuracy"]))))
        if "accuracy_analysis" in raised:
            extra["rknn_accuracy_error"] = str(raised["accuracy_analysis"])[:300]
        return CompileResult(tool=tool, status="compiled", placement=placement, unmatched=unmatched, extra=extra)


def control_flow_note(prepared: ToolkitModel) -> str:
    """What to say first when the toolkit could not compile a model that still holds control flow: an ``If``
    whose condition is only known at run time (computed from the model's data, e.g. a score above a threshold)
    or a ``Loop``; '' when there is none. rknn-toolkit2 2.5.0 compiles static graphs only: for a plain such
    ``If``, and for every ``Loop`` (even of a constant trip count), it says so ("will cause the graph to be a
    dynamic graph! Remove it manually and try again!"); when an ``If`` branch needs its opset converted (a
    ReduceMean in it) it converts the branch as a graph of its own, without the
    outer tensors the branch reads, and fails obscurely ("... is not output of any previous nodes.")."""
    notes = []
    if prepared.runtime_ifs:
        names = ", ".join(f"'{name}'" for name in prepared.runtime_ifs)
        notes.append(f"If {names} has a condition only known at run time, which rknn-toolkit2 cannot compile (it "
                     "compiles static graphs only); export the model without it (e.g. both branches as outputs, "
                     "the choice made by the application)")
    if prepared.loops:
        names = ", ".join(f"'{name}'" for name in prepared.loops)
        notes.append(f"Loop {names} is control flow, which rknn-toolkit2 cannot compile (it compiles static "
                     "graphs only, and does not unroll loops); export the part before the loop as its own model "
                     "for the NPU and run the loop (e.g. a decoder's steps) in the application, or export with "
                     "the loop unrolled to a fixed number of steps")
    return "; ".join(notes) + ". The toolkit raised: " if notes else ""


def disabled_rules_note(answer: dict[str, object]) -> str:
    """What the compile needed beyond the toolkit's defaults: the rules disabled on its advice, and why."""
    rules = ", ".join(repr(rule) for rule in answer.get("disabled_rules", []))  # type: ignore[attr-defined]
    raised = "; ".join(f"{k}: {v}" for k, v in dict(answer.get("default_raised", {})).items())  # type: ignore[call-overload]
    return (f"config(disable_rules=[{rules}]): with the toolkit's defaults {raised} in that rule, and the toolkit "
            "advises disabling it")[:500]


def non_finite_hint(model: Path) -> str:
    """A next step when the model holds NaN float constants: rknn's quantizer computes their range as NaN and
    fails (infinite ones :func:`finite_constants` already replaced); '' when there are none."""
    from onnx import numpy_helper

    bad = [init.name for init in onnx.load(str(model)).graph.initializer
           if init.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE)
           and np.isnan(numpy_helper.to_array(init)).any()]
    if not bad:
        return ""
    return (f". The model holds NaN float constants ({', '.join(bad[:3])}): replace them by finite values "
            "before compiling for RKNN")


def accuracy_figures(text: str) -> dict[str, float | str]:
    """Summary of the simulator's per-layer accuracy analysis: worst and output cosine, worst layer."""
    rows = []
    for line in text.splitlines():
        row = _ACCURACY_ROW.match(line.strip())
        if row:
            rows.append((row.group(1), float(row.group(2)), float(row.group(3))))
    if not rows:
        return {}
    worst = sorted(rows, key=lambda r: r[2])[:10]
    return {"rknn_output_cosine": rows[-1][1], "rknn_worst_layer_cosine": worst[0][2],
            "rknn_layers_analysed": float(len(rows)),
            "rknn_worst_layers": "; ".join(f"{name} single cos {cos:.5f}" for name, _, cos in worst)}


def peephole_hint(graph: OpGraph) -> str:
    """A next step when the graph holds LSTMs with peephole weights (their 8th input, ``P``): rknn-toolkit2 2.5.0
    aborts on them ("SubGraphManager: not support yet"; with an empty optional input before ``P``: ``KeyError:
    ''``), probed on single LSTMs that compile without ``P`` (converted LSTMs may have peepholes); '' when none has."""
    peephole = [node.name for node in graph.nodes if has_peepholes(node)]
    if not peephole:
        return ""
    return (f". The model's LSTMs {', '.join(peephole[:4])} have peephole weights, which rknn-toolkit2 2.5.0 cannot "
            "compile: retrain or export them without peepholes (ONNX LSTM input P), or run them on the CPU")


def integer_input_hint(graph: OpGraph) -> str:
    """A next step when the toolkit rejects an input's data type (a VAD taking int16 audio fails "Not
    support input data type 'int16'!"; int64 token ids compile)."""
    odd = [f"'{t.name}' ({t.dtype})" for t in graph.graph_inputs if t.dtype in ("int16", "uint16")]
    if not odd:
        return ""
    return (f". Inputs {', '.join(odd)}: give the model a float32 input and cast inside it (or cast in the "
            "application before the model)")
