"""Recognising ONNX models that are already quantized, so edgepipe never re-quantizes or rewrites them.

Three forms exist in the wild:

- **dynamic** (``onnxruntime.quantization.quantize_dynamic``): int8 weights, activations
  quantized at run time — ``DynamicQuantizeLinear``, ``MatMulInteger``, ``ConvInteger``,
  and com.microsoft ops such as ``DynamicQuantizeLSTM``, ``DynamicQuantizeMatMul``;
- **static QDQ**: ``QuantizeLinear``/``DequantizeLinear`` pairs around float ops, with
  int8 weight initializers behind ``DequantizeLinear``;
- **QOperator**: integer ops (``QLinearConv``, ``QLinearMatMul``, com.microsoft ``QLinear*``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

QuantizedForm = Literal["float", "dynamic", "qdq", "qoperator"]

_DYNAMIC_OPS = {"DynamicQuantizeLinear", "MatMulInteger", "ConvInteger", "DynamicQuantizeLSTM",
                "DynamicQuantizeMatMul", "MatMulIntegerToFloat"}
_QOPERATOR_OPS = {"QLinearConv", "QLinearMatMul", "QLinearAdd", "QLinearMul", "QLinearSigmoid",
                  "QLinearLeakyRelu", "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat",
                  "QGemm", "QLinearSoftmax"}


@dataclass(frozen=True)
class QuantizedKind:
    """What quantization ``model`` already carries, and the ops that show it (op type: count)."""

    form: QuantizedForm
    evidence: dict[str, int]

    @property
    def is_quantized(self) -> bool:
        return self.form != "float"

    def describe(self) -> str:
        """E.g. ``dynamic int8 (ConvInteger 21, DynamicQuantizeLSTM 1)``."""
        ops = ", ".join(f"{op} {count}" for op, count in sorted(self.evidence.items()))
        name = {"dynamic": "dynamic int8", "qdq": "static int8 (QDQ)", "qoperator": "static int8 (QOperator)",
                "float": "float"}[self.form]
        return f"{name} ({ops})" if ops else name


def _all_nodes(graph: Any) -> list[Any]:
    """Nodes of ``graph`` and of every subgraph (If/Loop/Scan bodies)."""
    nodes = []
    for node in graph.node:
        nodes.append(node)
        for attribute in node.attribute:
            if attribute.HasField("g"):
                nodes += _all_nodes(attribute.g)
            for sub in attribute.graphs:
                nodes += _all_nodes(sub)
    return nodes


def quantized_kind(model: Any) -> QuantizedKind:
    """The quantization form of the ``onnx.ModelProto`` (dynamic wins over QOperator over QDQ)."""
    counts: dict[str, int] = {}
    for node in _all_nodes(model.graph):
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    for form, ops in (("dynamic", _DYNAMIC_OPS), ("qoperator", _QOPERATOR_OPS),
                      ("qdq", {"QuantizeLinear", "DequantizeLinear"})):
        evidence = {op: counts[op] for op in ops if op in counts}
        if evidence:
            return QuantizedKind(form, evidence)  # type: ignore[arg-type]
    return QuantizedKind("float", {})
