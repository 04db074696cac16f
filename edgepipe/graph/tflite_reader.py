"""Read a TFLite flatbuffer into the common :class:`~edgepipe.graph.opgraph.OpGraph` (every subgraph).

Uses the flatbuffer schema bindings shipped with LiteRT, reading fields lazily
so weights are never copied: a model of a few hundred operators reads in milliseconds.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.errors import ModelLoadError
from edgepipe.graph.opgraph import OpGraph, OpNode, TensorInfo

#: What reading truncated or corrupted bytes raises: offsets past the end, bad vtables, and tables the accessors
#: return as None (AttributeError on them).
_CORRUPT_FLATBUFFER = (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError, AttributeError)

_TYPES = {0: "float32", 1: "float16", 2: "int32", 3: "uint8", 4: "int64", 5: "string", 6: "bool", 7: "int16",
          9: "int8", 10: "float64", 12: "uint64", 15: "uint32", 16: "uint16", 17: "int4"}
_PADDING = {0: "same", 1: "valid"}
#: Options table per builtin op: (schema class name, fields to read as attrs).
_OPTIONS = {
    "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions", "L2_POOL_2D": "Pool2DOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions", "CONCATENATION": "ConcatenationOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions", "SOFTMAX": "SoftmaxOptions", "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
    "ADD": "AddOptions", "MUL": "MulOptions", "SUB": "SubOptions", "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions", "SPLIT": "SplitOptions", "PACK": "PackOptions",
    "UNPACK": "UnpackOptions", "GATHER": "GatherOptions", "STRIDED_SLICE": "StridedSliceOptions",
    "LEAKY_RELU": "LeakyReluOptions", "BATCH_MATMUL": "BatchMatMulOptions",
}
_PARAM_OPS = {"MEAN": "axes", "SUM": "axes", "REDUCE_MAX": "axes", "REDUCE_MIN": "axes", "TRANSPOSE": "perm",
              "PAD": "paddings", "PADV2": "paddings", "MIRROR_PAD": "paddings", "RESHAPE": "new_shape",
              "RESIZE_BILINEAR": "size", "RESIZE_NEAREST_NEIGHBOR": "size"}


def _schema() -> Any:
    try:
        from ai_edge_litert import schema_py_generated as schema
    except ImportError:  # pragma: no cover - LiteRT is a core dependency; TF ships the same bindings
        from tensorflow.lite.python import schema_py_generated as schema
    return schema


def _op_names(schema: Any) -> dict[int, str]:
    return {v: k for k, v in vars(schema.BuiltinOperator).items() if isinstance(v, int) and not k.startswith("_")}


def _tensor(schema: Any, model: Any, subgraph: Any, index: int) -> TensorInfo:
    """Tensor ``index`` of ``subgraph``, its shape read as the interpreter allocates it and Vela compiles it.

    The stored ``shape`` holds 1 where the converter saw a dynamic dimension (``shape_signature`` -1). A dynamic
    batch (axis 0) is that 1: the interpreter allocates it and Vela says so ("has a dynamic signature in axis 0.
    Setting shape axis 0 to 1 and proceeding"); reading it as dynamic made every op of a converted Keras model
    look dynamic (a music transcriber: 312 ops on the CPU where Vela runs 200 of them on the NPU). A dynamic dimension
    at any other axis is only known at run time (its stored 1 is a placeholder): ``None``, and Vela leaves the
    op on the CPU ("Dynamic non-batch dimension at axis 1").
    """
    t = subgraph.Tensors(index)
    signature = t.ShapeSignatureAsNumpy() if t.ShapeSignatureLength() else None
    shape = t.ShapeAsNumpy() if t.ShapeLength() else np.zeros(0, dtype=np.int32)
    dynamic = {axis for axis, d in enumerate(signature if signature is not None and len(signature) == len(shape)
                                             else ()) if d < 0 and axis > 0}
    dims = tuple(None if d < 0 or axis in dynamic else int(d) for axis, d in enumerate(shape))
    buffer = model.Buffers(t.Buffer()) if t.Buffer() < model.BuffersLength() else None
    constant = buffer is not None and (buffer.DataLength() > 0 or buffer.Offset() > 1)
    quant = t.Quantization()
    scales = quant.ScaleAsNumpy() if quant is not None and quant.ScaleLength() else None
    return TensorInfo(name=t.Name().decode("utf-8", "replace"), dtype=_TYPES.get(t.Type(), f"type{t.Type()}"),
                      shape=dims, constant=constant, quantized=scales is not None,
                      per_axis=scales is not None and len(scales) > 1,
                      scale_positive=scales is None or bool(np.all(scales > 0)))


def _const_values(model: Any, subgraph: Any, index: int) -> list[int] | None:
    """Values of a small constant int32/int64 tensor (axes, perm, paddings), else None."""
    t = subgraph.Tensors(index)
    buffer = model.Buffers(t.Buffer())
    if buffer.DataLength() == 0 or buffer.DataLength() > 512:
        return None
    dtype = {2: np.int32, 4: np.int64}.get(t.Type())
    return None if dtype is None else [int(v) for v in buffer.DataAsNumpy().view(dtype)]


def _options(schema: Any, op: str, operator: Any) -> dict[str, Any]:
    name = _OPTIONS.get(op)
    table = operator.BuiltinOptions()
    if name is None or table is None:
        return {}
    options = getattr(schema, name)()
    options.Init(table.Bytes, table.Pos)
    attrs: dict[str, Any] = {}
    for field in dir(options):
        if field[0].isupper() and not field.startswith(("GetRoot", "Init")) and "BufferHas" not in field:
            try:
                value = getattr(options, field)()
            except TypeError:  # vector accessors take an index; none of them is needed here
                continue
            if isinstance(value, int | float | bool):
                attrs[field] = value
    if "Padding" in attrs:
        attrs["padding"] = _PADDING.get(attrs["Padding"], "valid")
    if "StrideH" in attrs:
        attrs["strides"] = (attrs["StrideH"], attrs["StrideW"])
    if "FilterHeight" in attrs:
        attrs["kernel"] = (attrs["FilterHeight"], attrs["FilterWidth"])
    if "DilationHFactor" in attrs:
        attrs["dilations"] = (attrs["DilationHFactor"], attrs["DilationWFactor"])
    if "Axis" in attrs:
        attrs["axis"] = attrs["Axis"]
    return attrs


def _macs(op: str, inputs: tuple[TensorInfo, ...], outputs: tuple[TensorInfo, ...]) -> int:
    out = outputs[0] if outputs else None
    if out is None or not out.static or len(inputs) < 2 or not inputs[1].static or not inputs[1].shape:
        return 0
    weight = inputs[1].shape
    if op == "CONV_2D":  # weights OHWI
        return out.elements * int(weight[1] or 0) * int(weight[2] or 0) * int(weight[3] or 0)
    if op == "DEPTHWISE_CONV_2D":  # weights 1HWC
        return out.elements * int(weight[1] or 0) * int(weight[2] or 0)
    if op == "FULLY_CONNECTED":  # weights OI
        return out.elements * int(weight[-1] or 0)
    if op == "TRANSPOSE_CONV" and len(inputs) > 2 and inputs[2].static:
        return inputs[2].elements * int(weight[0] or 0) * int(weight[1] or 0) * int(weight[2] or 0)
    if op == "BATCH_MATMUL" and inputs[0].static and inputs[0].shape:
        return out.elements * int(inputs[0].shape[-1] or 0)
    return 0


def _subgraph_nodes(schema: Any, model: Any, number: int, offset: int) -> tuple[list[OpNode], Any, Any]:
    """The operators of subgraph ``number`` as nodes ``offset``, ``offset + 1``, ... and the tensor reader.

    Nodes of a subgraph other than the primary one carry ``attrs["subgraph"]`` and their index inside it
    (``attrs["subgraph_op"]``), which is how Vela names an op without outputs (``placeholder-for-N-OFM``).
    """
    subgraph = model.Subgraphs(number)
    names = _op_names(schema)
    codes = [model.OperatorCodes(i) for i in range(model.OperatorCodesLength())]
    tensors: dict[int, TensorInfo] = {}

    def tensor(i: int) -> TensorInfo:
        if i not in tensors:
            tensors[i] = _tensor(schema, model, subgraph, i)
        return tensors[i]

    nodes: list[OpNode] = []
    for local in range(subgraph.OperatorsLength()):
        index = offset + local
        operator = subgraph.Operators(local)
        code = codes[operator.OpcodeIndex()]
        builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
        op = names.get(builtin, f"BUILTIN_{builtin}")
        if op == "CUSTOM":
            op = f"CUSTOM:{(code.CustomCode() or b'').decode()}"
        in_idx = [int(i) for i in operator.InputsAsNumpy()] if operator.InputsLength() else []
        out_idx = [int(i) for i in operator.OutputsAsNumpy()] if operator.OutputsLength() else []
        inputs = tuple(tensor(i) for i in in_idx if i >= 0)
        outputs = tuple(tensor(i) for i in out_idx if i >= 0)
        attrs = _options(schema, op, operator)
        if number:
            attrs.update(subgraph=number, subgraph_op=local)
        if op in _PARAM_OPS and len(in_idx) > 1 and in_idx[1] >= 0:
            attrs[_PARAM_OPS[op]] = _const_values(model, subgraph, in_idx[1])
        if op in ("CONV_2D", "DEPTHWISE_CONV_2D") and len(inputs) > 1 and inputs[1].shape:
            attrs["kernel"] = tuple(inputs[1].shape[1:3])
            attrs["depthwise"] = op == "DEPTHWISE_CONV_2D"
        nodes.append(OpNode(index=index, name=outputs[0].name if outputs else f"{op}_{index}", op=op,
                            inputs=inputs, outputs=outputs, attrs=attrs, macs=_macs(op, inputs, outputs)))
    return nodes, subgraph, tensor


def read_tflite(path: Path) -> OpGraph:
    """The operators of every subgraph of the TFLite model at ``path``, the primary subgraph's first.

    Vela compiles (or leaves on the CPU) the ops of every subgraph, e.g. the init subgraph a CALL_ONCE runs to
    initialise resource variables, so the check places them too. Graph inputs and outputs are the primary
    subgraph's.
    """
    schema = _schema()
    data = Path(path).read_bytes()
    try:
        model = schema.Model.GetRootAs(data, 0)
        count = model.SubgraphsLength()
        nodes, subgraph, tensor = _subgraph_nodes(schema, model, 0, 0)
        for number in range(1, count):
            nodes += _subgraph_nodes(schema, model, number, len(nodes))[0]
        graph_inputs = tuple(tensor(int(i)) for i in subgraph.InputsAsNumpy())
        graph_outputs = tuple(tensor(int(i)) for i in subgraph.OutputsAsNumpy())
    except _CORRUPT_FLATBUFFER as exc:
        raise ModelLoadError(f"not a readable TFLite model ({exc})", path=path, fix="Convert it again") from None
    return OpGraph("tflite", str(path), tuple(nodes), graph_inputs, graph_outputs)
