"""Rewrites of a TFLite file that LiteRT runs the same before and after, so tf2onnx's TFLite front end can read it.

- **Sparse weights** (MediaPipe's full-range face detector, BlazePose's detector): a constant stored in a sparse
  format reaches its Conv through a ``DENSIFY`` op. tf2onnx reads the sparse buffer as if it were dense ("cannot
  reshape array of size 96 into shape (16,1,1,24)"). Each ``DENSIFY`` output is taken from LiteRT itself (the
  interpreter keeps every tensor) and stored as a plain constant; the ``DENSIFY`` op is removed.
- **MediaPipe's** ``Convolution2DTransposeBias`` custom op (the selfie segmenter's upsampling) becomes the builtin
  ``TRANSPOSE_CONV`` and an ``ADD`` of its bias; tf2onnx has no translation for the custom op. Its options are
  MediaPipe's ``TfLiteTransposeConvParams`` (padding, stride width, stride height as int32).
- **A 1-D real FFT read only through its real part** (``RFFT2D`` over ``[..., 1, n]``, then ``SQUEEZE`` or
  ``RESHAPE`` and a ``CAST`` to float32, which keeps the real part: BirdNET's spectrogram) becomes a
  ``FULLY_CONNECTED`` with the cosine basis; tf2onnx translates ``RFFT2D`` only when a ``ComplexAbs`` reads it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from edgepipe.graph.tflite_edit import drop_unused_tensors

#: MediaPipe's custom transposed convolution with a bias input.
TRANSPOSE_CONV_BIAS = "Convolution2DTransposeBias"


@dataclass(frozen=True)
class Rewritten:
    """What :func:`readable_for_tf2onnx` changed: DENSIFY ops folded, custom transposed convolutions replaced."""

    densified: int = 0
    transpose_convs: int = 0
    real_ffts: int = 0

    def describe(self) -> str:
        parts = ([f"{self.densified} sparse weight(s) densified"] if self.densified else []) + (
            [f"{self.transpose_convs} {TRANSPOSE_CONV_BIAS} op(s) as TRANSPOSE_CONV + ADD"]
            if self.transpose_convs else []) + (
            [f"the real part of {self.real_ffts} RFFT2D op(s) as a MatMul with the cosine basis"]
            if self.real_ffts else [])
        return ", ".join(parts)


def _schema() -> Any:
    from ai_edge_litert import schema_py_generated as schema  # heavy optional dependency (LiteRT's bindings)

    return schema


def _opcode(schema: Any, model: Any, op: Any) -> tuple[int, str]:
    code = model.operatorCodes[op.opcodeIndex]
    builtin = max(code.builtinCode, code.deprecatedBuiltinCode)
    custom = code.customCode.decode() if isinstance(code.customCode, bytes) else (code.customCode or "")
    return builtin, custom


def _add_buffer(schema: Any, model: Any, data: np.ndarray) -> int:
    buffer = schema.BufferT()
    buffer.data = np.frombuffer(np.ascontiguousarray(data).tobytes(), np.uint8)
    model.buffers.append(buffer)
    return len(model.buffers) - 1


def _code_index(schema: Any, model: Any, builtin: int) -> int:
    for index, code in enumerate(model.operatorCodes):
        if max(code.builtinCode, code.deprecatedBuiltinCode) == builtin:
            return index
    code = schema.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode, code.version = builtin, min(builtin, 127), 1
    model.operatorCodes.append(code)
    return len(model.operatorCodes) - 1


def _dense_values(path: Path, tensors: list[int]) -> dict[int, np.ndarray]:
    """The values LiteRT computes for ``tensors`` of the main subgraph (DENSIFY outputs: constants once prepared)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType  # heavy optional dependency

    # without the default delegate: XNNPACK takes the dense weights over and leaves the tensors unread
    interpreter = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    for detail in interpreter.get_input_details():
        interpreter.set_tensor(detail["index"], np.zeros(detail["shape"], detail["dtype"]))
    interpreter.invoke()
    return {index: np.array(interpreter.get_tensor(index)) for index in tensors}


def _is_constant(model: Any, tensor: Any) -> bool:
    data = model.buffers[tensor.buffer].data
    return data is not None and len(data) > 0


def fold_densify(model: Any, path: Path) -> int:
    """Replace every ``DENSIFY`` of the main subgraph (sparse weights: its input is a constant) by its dense
    constant, with the values LiteRT itself computes from the file at ``path``; returns how many."""
    schema = _schema()
    graph = model.subgraphs[0]
    densify = [op for op in graph.operators if _opcode(schema, model, op)[0] == schema.BuiltinOperator.DENSIFY
               and _is_constant(model, graph.tensors[op.inputs[0]])]
    if not densify:
        return 0
    values = _dense_values(path, [op.outputs[0] for op in densify])
    for op in densify:
        tensor = graph.tensors[op.outputs[0]]
        tensor.buffer = _add_buffer(schema, model, values[op.outputs[0]])
    graph.operators = [op for op in graph.operators if all(op is not d for d in densify)]
    drop_unused_tensors(model, 0)  # the sparse originals: tf2onnx reads every tensor's buffer as dense
    return len(densify)


def _transpose_conv(schema: Any, model: Any, graph: Any, op: Any) -> list[Any]:
    """``TRANSPOSE_CONV(output_shape, weights, input)`` then ``ADD(bias)`` for one Convolution2DTransposeBias."""
    padding, stride_w, stride_h = struct.unpack("<iii", bytes(op.customOptions)[:12])
    output = graph.tensors[op.outputs[0]]
    shape = schema.TensorT()
    shape.shape, shape.type, shape.name = [4], schema.TensorType.INT32, f"{output.name!s}_output_shape".encode()
    shape.buffer = _add_buffer(schema, model, np.asarray(output.shape, np.int32))
    graph.tensors.append(shape)
    before_bias = schema.TensorT()
    before_bias.shape, before_bias.type = list(output.shape), output.type
    before_bias.name = f"{output.name!s}_before_bias".encode()
    before_bias.buffer = 0  # buffer 0 is the empty one every non-constant tensor points at
    graph.tensors.append(before_bias)
    options = schema.TransposeConvOptionsT()
    options.padding = schema.Padding.SAME if padding == 1 else schema.Padding.VALID  # TfLitePadding: 1 same, 2 valid
    options.strideW, options.strideH = stride_w, stride_h
    conv = schema.OperatorT()
    conv.opcodeIndex = _code_index(schema, model, schema.BuiltinOperator.TRANSPOSE_CONV)
    conv.inputs, conv.outputs = [len(graph.tensors) - 2, op.inputs[1], op.inputs[0]], [len(graph.tensors) - 1]
    conv.builtinOptionsType, conv.builtinOptions = schema.BuiltinOptions.TransposeConvOptions, options
    add = schema.OperatorT()
    add.opcodeIndex = _code_index(schema, model, schema.BuiltinOperator.ADD)
    add.inputs, add.outputs = [len(graph.tensors) - 1, op.inputs[2]], [op.outputs[0]]
    add.builtinOptionsType, add.builtinOptions = schema.BuiltinOptions.AddOptions, schema.AddOptionsT()
    return [conv, add]


def _builtin_transpose_convs(schema: Any, model: Any) -> int:
    count = 0
    for graph in model.subgraphs:
        operators = []
        for op in graph.operators:
            if _opcode(schema, model, op)[1] == TRANSPOSE_CONV_BIAS and len(op.inputs) == 3:
                operators += _transpose_conv(schema, model, graph, op)
                count += 1
            else:
                operators.append(op)
        graph.operators = operators
    return count


def _readers(graph: Any) -> dict[int, list[Any]]:
    found: dict[int, list[Any]] = {}
    for op in graph.operators:
        for index in op.inputs:
            found.setdefault(index, []).append(op)
    return found


def _constant(model: Any, graph: Any, index: int, dtype: type) -> np.ndarray | None:
    data = model.buffers[graph.tensors[index].buffer].data
    return None if data is None or not len(data) else np.frombuffer(bytes(data), dtype)


def _real_fft(schema: Any, model: Any, graph: Any, op: Any, readers: dict[int, list[Any]]) -> Any | None:
    """The FULLY_CONNECTED computing the real part of a 1-D ``RFFT2D`` read only through SQUEEZE (or RESHAPE) ->
    CAST(float32),
    and the CAST it makes redundant; None when ``op`` is not such an FFT."""
    squeeze = readers.get(op.outputs[0], [])
    cast = readers.get(squeeze[0].outputs[0], []) if len(squeeze) == 1 else []
    lengths = _constant(model, graph, op.inputs[1], np.int32)
    signal = graph.tensors[op.inputs[0]]
    moves = (schema.BuiltinOperator.SQUEEZE, schema.BuiltinOperator.RESHAPE)
    if (len(cast) != 1 or _opcode(schema, model, squeeze[0])[0] not in moves
            or _opcode(schema, model, cast[0])[0] != schema.BuiltinOperator.CAST
            or graph.tensors[cast[0].outputs[0]].type != schema.TensorType.FLOAT32
            or lengths is None or lengths.tolist()[:1] != [1] or list(signal.shape[-2:]) != [1, int(lengths[1])]):
        return None
    n = int(lengths[1])
    angle = 2.0 * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n
    weights = schema.TensorT()
    weights.shape, weights.type = [n // 2 + 1, n], schema.TensorType.FLOAT32
    weights.name = f"{graph.tensors[op.outputs[0]].name!s}_cosine_basis".encode()
    weights.buffer = _add_buffer(schema, model, np.cos(angle).astype(np.float32))
    graph.tensors.append(weights)
    dense = schema.OperatorT()
    dense.opcodeIndex = _code_index(schema, model, schema.BuiltinOperator.FULLY_CONNECTED)
    dense.inputs, dense.outputs = [op.inputs[0], len(graph.tensors) - 1, -1], [op.outputs[0]]
    options = schema.FullyConnectedOptionsT()
    options.keepNumDims = True
    dense.builtinOptionsType, dense.builtinOptions = schema.BuiltinOptions.FullyConnectedOptions, options
    for index in (op.outputs[0], squeeze[0].outputs[0]):
        graph.tensors[index].type = schema.TensorType.FLOAT32
    squeeze[0].outputs = list(cast[0].outputs)  # the CAST of a real value to float32 is gone
    return dense, cast[0]


def _real_ffts_as_matmuls(schema: Any, model: Any) -> int:
    graph = model.subgraphs[0]
    readers = _readers(graph)
    operators, dropped, count = [], [], 0
    for op in graph.operators:
        made = _real_fft(schema, model, graph, op, readers) \
            if _opcode(schema, model, op)[0] == schema.BuiltinOperator.RFFT2D else None
        operators.append(op if made is None else made[0])
        if made is not None:
            dropped.append(made[1])
            count += 1
    graph.operators = [op for op in operators if all(op is not d for d in dropped)]
    if count:
        drop_unused_tensors(model, 0)
    return count


def readable_for_tf2onnx(source: Path, out: Path) -> Rewritten:
    """Write to ``out`` the TFLite at ``source`` with its DENSIFY ops folded and MediaPipe's transposed
    convolutions as builtins; returns what changed (``out`` is a plain copy when nothing did)."""
    import flatbuffers  # dependency of LiteRT's bindings

    schema = _schema()
    model = schema.ModelT.InitFromPackedBuf(source.read_bytes(), 0)
    done = Rewritten(fold_densify(model, source), _builtin_transpose_convs(schema, model),
                     _real_ffts_as_matmuls(schema, model))
    if not done.describe():
        out.write_bytes(source.read_bytes())
        return done
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    out.write_bytes(bytes(builder.Output()))
    return done
