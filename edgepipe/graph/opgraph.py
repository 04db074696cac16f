"""The common graph the checker reads: one list of operators with typed tensors, from ONNX or TFLite.

Readers (``onnx_reader``, ``tflite_reader``) normalise both formats into
:class:`OpGraph`, so a constraint predicate is written once per rule, not per
format. Spatial attributes are normalised to (height, width) pairs whatever the
source layout (NCHW for ONNX, NHWC for TFLite).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

GraphFormat = Literal["onnx", "tflite"]

#: Bytes per element of each dtype name the readers produce.
DTYPE_BYTES = {"int8": 1, "uint8": 1, "bool": 1, "int16": 2, "uint16": 2, "float16": 2, "bfloat16": 2,
               "int32": 4, "uint32": 4, "float32": 4, "int64": 8, "uint64": 8, "float64": 8, "string": 8}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor as an operator sees it.

    ``shape`` uses ``None`` for a dynamic dimension; ``None`` as the whole shape means unknown rank.
    ``quantized`` is true when the tensor carries quantization parameters (TFLite) or is an int
    tensor produced/consumed by Q/DQ (ONNX); ``per_axis`` when its scales are per channel.
    """

    name: str
    dtype: str
    shape: tuple[int | None, ...] | None
    constant: bool = False
    quantized: bool = False
    per_axis: bool = False
    scale_positive: bool = True

    @property
    def static(self) -> bool:
        """True when the rank and every dimension are known."""
        return self.shape is not None and all(isinstance(d, int) and d >= 0 for d in self.shape)

    @property
    def elements(self) -> int:
        """Element count (0 when the shape is not static)."""
        if not self.static:
            return 0
        count = 1
        for dim in self.shape or ():
            count *= int(dim or 0)
        return count

    @property
    def size_bytes(self) -> int:
        """Size in bytes (0 when the shape is not static)."""
        return self.elements * DTYPE_BYTES.get(self.dtype, 4)


@dataclass(frozen=True)
class OpNode:
    """One operator. ``name`` is what vendor tools call it (ONNX node name; TFLite first output tensor).

    Normalised ``attrs`` keys, where they apply: ``kernel``, ``strides``, ``dilations`` (h, w pairs),
    ``padding`` ("same" | "valid" | "explicit"), ``pads`` (top, left, bottom, right), ``axis``/``axes``,
    ``group``, ``depthwise`` (bool), ``perm``. Other attributes keep their source names.
    """

    index: int
    name: str
    op: str
    inputs: tuple[TensorInfo, ...]
    outputs: tuple[TensorInfo, ...]
    attrs: dict[str, Any] = field(default_factory=dict)
    macs: int = 0
    layout: Literal["nchw", "nhwc"] = "nhwc"

    @property
    def activations_in(self) -> tuple[TensorInfo, ...]:
        """Inputs that are feature maps (not constants: weights, biases, parameters)."""
        return tuple(t for t in self.inputs if not t.constant)

    def spatial(self, tensor: TensorInfo) -> tuple[int | None, int | None]:
        """(height, width) of a rank-4 feature map in this node's layout; (None, None) otherwise."""
        if tensor.shape is None or len(tensor.shape) != 4:
            return None, None
        if self.layout == "nchw":
            return tensor.shape[2], tensor.shape[3]
        return tensor.shape[1], tensor.shape[2]


@dataclass(frozen=True)
class OpGraph:
    """The operators of one model in topological order, and which tensors are graph inputs/outputs."""

    format: GraphFormat
    path: str
    nodes: tuple[OpNode, ...]
    graph_inputs: tuple[TensorInfo, ...]
    graph_outputs: tuple[TensorInfo, ...]
    #: The ONNX default-domain opset the model imports (None for TFLite).
    opset: int | None = None

    @cached_property
    def _producers(self) -> dict[str, int]:
        return {t.name: n.index for n in self.nodes for t in n.outputs}

    @cached_property
    def _consumers(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for node in self.nodes:
            for tensor in node.inputs:
                out.setdefault(tensor.name, []).append(node.index)
        return out

    def producers(self) -> dict[str, int]:
        """Tensor name → index of the node that writes it (computed once; do not modify)."""
        return self._producers

    def consumers(self) -> dict[str, list[int]]:
        """Tensor name → indices of the nodes that read it (computed once; do not modify)."""
        return self._consumers

    @cached_property
    def _output_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.graph_outputs)

    @cached_property
    def _input_names(self) -> frozenset[str]:
        return frozenset(t.name for t in self.graph_inputs)

    def output_names(self) -> frozenset[str]:
        return self._output_names

    def input_names(self) -> frozenset[str]:
        return self._input_names
