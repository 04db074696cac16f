"""Per-op work of a graph — MACs and bytes moved — from the support check's common graph reader.

The graph is read once by :func:`edgepipe.support.read_graph` (ONNX or TFLite
into one op list); this module turns each node into the quantities the cost
model needs: its op class, precision, MACs and the bytes it reads and writes.
Dynamic dimensions count as 1 (batch-1 inference).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from edgepipe.graph.opgraph import DTYPE_BYTES, OpGraph, OpNode, TensorInfo
from edgepipe.graph.read import read_graph
from edgepipe.targets.performance import OpKind, Precision

_DATA_OPS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Constant", "ConstantOfShape",
             "Shape", "Size", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
_CONV = {"Conv", "QLinearConv", "ConvInteger", "ConvTranspose", "CONV_2D", "TRANSPOSE_CONV", "CONV_3D",
         "DEPTHWISE_CONV_2D"}
_GEMM = {"Gemm", "MatMul", "QLinearMatMul", "MatMulInteger", "FULLY_CONNECTED", "BATCH_MATMUL"}
_POOL = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceMean", "ReduceMax", "LRN",
         "AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "REDUCE_MAX", "SUM"}
_QUANT = {"QuantizeLinear", "DequantizeLinear", "QUANTIZE", "DEQUANTIZE"}
#: Activations a compiler folds into the convolution or matrix product before them (ONNX graphs;
#: TFLite already carries them as fused activations).
_FUSABLE = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "BatchNormalization",
            "PRelu"}


@dataclass(frozen=True)
class OpWork:
    """The work one op does in one inference (batch size 1).

    ``macs``: multiply-accumulates (pooling counts one per element it reads,
    elementwise ops one per element they write); ``*_bytes``: activation bytes
    read and written and constant (weight) bytes read. ``fused``: folded into the
    op before it by any real compiler (an activation after a convolution, Q/DQ
    around one), so it costs nothing of its own.
    """

    index: int
    name: str
    op_type: str
    kind: OpKind
    precision: Precision
    macs: int
    input_bytes: int
    weight_bytes: int
    output_bytes: int
    fused: bool = False
    output_elements: int = 0

    @property
    def bytes_moved(self) -> int:
        """Everything read and written (bytes)."""
        return self.input_bytes + self.weight_bytes + self.output_bytes


@dataclass(frozen=True)
class GraphWork:
    """All ops of one model file, in execution order, plus the graph's input and output sizes (bytes)."""

    path: Path
    ops: tuple[OpWork, ...]
    input_bytes: int
    output_bytes: int
    source: OpGraph

    @property
    def macs(self) -> int:
        """MACs of the convolutions and matrix products (what vendors quote)."""
        return sum(op.macs for op in self.ops if op.kind in ("conv", "depthwise", "gemm"))


def elements(tensor: TensorInfo) -> int:
    """Element count with dynamic dimensions taken as 1."""
    count = 1
    for dim in tensor.shape or ():
        count *= int(dim) if dim else 1
    return count


def nbytes(tensor: TensorInfo) -> int:
    """Size in bytes with dynamic dimensions taken as 1."""
    return elements(tensor) * DTYPE_BYTES.get(tensor.dtype, 4)


def _kind(node: OpNode) -> OpKind:
    if node.op in _DATA_OPS:
        return "data"
    if node.op in _QUANT:
        return "quant"
    if node.op in _CONV:
        return "depthwise" if node.attrs.get("depthwise") or node.op == "DEPTHWISE_CONV_2D" else "conv"
    if node.op in _GEMM:
        return "gemm"
    return "pool" if node.op in _POOL else "elementwise"


def _macs(node: OpNode, kind: OpKind) -> int:
    if node.macs or kind in ("conv", "depthwise", "gemm"):
        if node.op == "ConvTranspose" and len(node.inputs) > 1 and node.inputs[1].shape:
            return elements(node.inputs[0]) * elements(node.inputs[1]) // int(node.inputs[1].shape[0] or 1)
        return node.macs
    out = elements(node.outputs[0]) if node.outputs else 0
    if node.op in ("MaxPool", "AveragePool", "AVERAGE_POOL_2D", "MAX_POOL_2D") and node.attrs.get("kernel"):
        kh, kw = node.attrs["kernel"]
        return out * int(kh or 1) * int(kw or 1)
    if node.op == "LRN":
        return out * int(node.attrs.get("size", 1))
    if kind == "pool":
        return elements(node.inputs[0]) if node.inputs else out
    return 0 if kind == "data" else out


def _precision(node: OpNode, producers: dict[str, OpNode]) -> Precision:
    if node.op.startswith("QLinear") or node.op.endswith("Integer"):
        return "int8"
    first = producers.get(node.inputs[0].name) if node.inputs else None
    if node.op not in _QUANT and first is not None and first.op in ("DequantizeLinear", "DEQUANTIZE"):
        return "int8"
    dtypes = [t.dtype for t in node.inputs[:1] + node.outputs[:1]]
    if any(d in ("int8", "uint8", "int16") for d in dtypes):
        return "int8"
    return "fp16" if "float16" in dtypes else "fp32"


def _fused(node: OpNode, producers: dict[str, OpNode], consumers: dict[str, list[int]],
           nodes: tuple[OpNode, ...]) -> bool:
    source = producers.get(node.inputs[0].name) if node.inputs else None
    if node.op in _QUANT:
        touching = [source] if source is not None else []
        touching += [nodes[i] for t in node.outputs for i in consumers.get(t.name, [])]
        return any(t.op in _CONV | _GEMM | _QUANT for t in touching)
    if node.op not in _FUSABLE or source is None:
        return False
    while source is not None and source.op in _QUANT and source.inputs:
        source = producers.get(source.inputs[0].name)
    return source is not None and source.op in _CONV | _GEMM and len(consumers.get(node.inputs[0].name, [])) == 1


def graph_work(graph: OpGraph) -> GraphWork:
    """The per-op work of a graph the support reader produced."""
    producers = {t.name: node for node in graph.nodes for t in node.outputs}
    consumers = graph.consumers()
    ops = []
    for node in graph.nodes:
        if node.outputs and all(t.constant for t in node.outputs):
            continue  # computed from constants at load time: a weight, not work
        kind = _kind(node)
        ops.append(OpWork(
            index=node.index, name=node.name, op_type=node.op, kind=kind, precision=_precision(node, producers),
            macs=_macs(node, kind),
            input_bytes=0 if kind == "data" else sum(nbytes(t) for t in node.inputs if not t.constant),
            weight_bytes=sum(nbytes(t) for t in node.inputs if t.constant),
            output_bytes=0 if kind == "data" else sum(nbytes(t) for t in node.outputs),
            fused=_fused(node, producers, consumers, graph.nodes),
            output_elements=sum(elements(t) for t in node.outputs)))
    return GraphWork(path=Path(graph.path), ops=tuple(ops), input_bytes=sum(nbytes(t) for t in graph.graph_inputs),
                     output_bytes=sum(nbytes(t) for t in graph.graph_outputs), source=graph)


def read_work(path: Path) -> GraphWork:
    """The per-op work of an ``.onnx`` or ``.tflite`` file."""
    return graph_work(read_graph(path))
