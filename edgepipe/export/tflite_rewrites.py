"""Rewrites of a TFLite file that LiteRT runs the same before and after, so tf2onnx's TFLite front end can read it.

- **Sparse weights** (MediaPipe's full-range face detector, BlazePose's detector): a constant stored in a sparse
  format reaches its Conv through a ``DENSIFY`` op. tf2onnx reads the sparse buffer as if it were dense ("cannot
  reshape array of size 96 into shape (16,1,1,24)"). Each ``DENSIFY`` output is taken from LiteRT itself (the
  interpreter keeps every tensor) and stored as a plain constant; the ``DENSIFY`` op is removed.
- **MediaPipe's** ``Convolution2DTransposeBias`` custom op (the selfie segmenter's upsampling) becomes the builtin
  ``TRANSPOSE_CONV`` and an ``ADD`` of its bias; tf2onnx has no translation for the custom op. Its options are
  MediaPipe's ``TfLiteTransposeConvParams`` (padding, stride width, stride height as int32).
- **A 1-D real FFT read only through its real part or its magnitude** (``RFFT2D`` over ``[..., 1, n]``, then
  ``SQUEEZE`` or ``RESHAPE``, then a ``CAST`` to float32, which keeps the real part, as in a spectrogram front end
  that reads the real part; or a ``COMPLEX_ABS``, as in a magnitude spectrogram) becomes ``FULLY_CONNECTED`` ops
  with the cosine (and sine) basis, the magnitude ``SQRT(re * re + im * im)``; tf2onnx has no translation for
  TFLite's ``RFFT2D`` or ``COMPLEX_ABS``, and a DFT as a matrix product is what NPUs run.
"""

from __future__ import annotations

import struct
from collections import Counter
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
    magnitude_ffts: int = 0

    def describe(self) -> str:
        parts = ([f"{self.densified} sparse weight(s) densified"] if self.densified else []) + (
            [f"{self.transpose_convs} {TRANSPOSE_CONV_BIAS} op(s) as TRANSPOSE_CONV + ADD"]
            if self.transpose_convs else []) + (
            [f"the real part of {self.real_ffts} RFFT2D op(s) as a MatMul with the cosine basis"]
            if self.real_ffts else []) + (
            [f"the magnitude of {self.magnitude_ffts} RFFT2D op(s) as MatMuls with the cosine and sine bases"]
            if self.magnitude_ffts else [])
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


def _tensor(schema: Any, graph: Any, shape: list[int], name: str, buffer: int = 0, dtype: int | None = None) -> int:
    """Append a tensor (float32 unless ``dtype``; a constant when ``buffer`` is not 0, the empty buffer every
    non-constant tensor points at) and return its index."""
    tensor = schema.TensorT()
    tensor.shape, tensor.name, tensor.buffer = shape, name.encode(), buffer
    tensor.type = schema.TensorType.FLOAT32 if dtype is None else dtype
    graph.tensors.append(tensor)
    return len(graph.tensors) - 1


def _op(schema: Any, model: Any, builtin: int, inputs: list[int], outputs: list[int],
        options: tuple[int, Any] | None = None) -> Any:
    op = schema.OperatorT()
    op.opcodeIndex = _code_index(schema, model, builtin)
    op.inputs, op.outputs = inputs, outputs
    if options is not None:
        op.builtinOptionsType, op.builtinOptions = options
    return op


def _transpose_conv(schema: Any, model: Any, graph: Any, op: Any) -> list[Any]:
    """``TRANSPOSE_CONV(output_shape, weights, input)`` then ``ADD(bias)`` for one Convolution2DTransposeBias."""
    padding, stride_w, stride_h = struct.unpack("<iii", bytes(op.customOptions)[:12])
    output = graph.tensors[op.outputs[0]]
    shape = _tensor(schema, graph, [4], f"{output.name!s}_output_shape",
                    _add_buffer(schema, model, np.asarray(output.shape, np.int32)), schema.TensorType.INT32)
    before_bias = _tensor(schema, graph, list(output.shape), f"{output.name!s}_before_bias", dtype=output.type)
    options = schema.TransposeConvOptionsT()
    options.padding = schema.Padding.SAME if padding == 1 else schema.Padding.VALID  # TfLitePadding: 1 same, 2 valid
    options.strideW, options.strideH = stride_w, stride_h
    return [_op(schema, model, schema.BuiltinOperator.TRANSPOSE_CONV, [shape, op.inputs[1], op.inputs[0]],
                [before_bias], (schema.BuiltinOptions.TransposeConvOptions, options)),
            _op(schema, model, schema.BuiltinOperator.ADD, [before_bias, op.inputs[2]], [op.outputs[0]],
                (schema.BuiltinOptions.AddOptions, schema.AddOptionsT()))]


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


def _dft_product(schema: Any, model: Any, graph: Any, signal: int, n: int, part: str, out: int | None) -> Any:
    """A FULLY_CONNECTED (keeping the leading dimensions) of ``signal`` with the ``part`` (cos or sin) basis of an
    ``n``-point real DFT, written to ``out`` (a new tensor when None)."""
    shape = list(graph.tensors[signal].shape[:-1]) + [n // 2 + 1]
    angle = 2.0 * np.pi * np.outer(np.arange(n // 2 + 1), np.arange(n)) / n
    basis = (np.cos if part == "cos" else np.sin)(angle).astype(np.float32)
    stem = graph.tensors[signal].name.decode()
    weights = _tensor(schema, graph, [n // 2 + 1, n], f"{stem}_{part}_basis", _add_buffer(schema, model, basis))
    target = _tensor(schema, graph, shape, f"{stem}_{part}_part") if out is None else out
    options = schema.FullyConnectedOptionsT()
    options.keepNumDims = True
    return _op(schema, model, schema.BuiltinOperator.FULLY_CONNECTED, [signal, weights, -1], [target],
               (schema.BuiltinOptions.FullyConnectedOptions, options))


def _magnitude(schema: Any, model: Any, graph: Any, signal: int, n: int, out: int) -> list[Any]:
    """``SQRT(re * re + im * im)`` of the ``n``-point real DFT of ``signal`` into ``out``: the ops, in order."""
    ops = [_dft_product(schema, model, graph, signal, n, "cos", None),
           _dft_product(schema, model, graph, signal, n, "sin", None)]
    shape = list(graph.tensors[out].shape)
    stem = graph.tensors[signal].name.decode()
    squares = [_tensor(schema, graph, shape, f"{stem}_{part}_squared") for part in ("cos", "sin")]
    power = _tensor(schema, graph, shape, f"{stem}_power")
    for made, square in zip(ops[:2], squares):
        ops.append(_op(schema, model, schema.BuiltinOperator.MUL, [made.outputs[0]] * 2, [square],
                       (schema.BuiltinOptions.MulOptions, schema.MulOptionsT())))
    ops.append(_op(schema, model, schema.BuiltinOperator.ADD, squares, [power],
                   (schema.BuiltinOptions.AddOptions, schema.AddOptionsT())))
    ops.append(_op(schema, model, schema.BuiltinOperator.SQRT, [power], [out]))
    return ops


def _fft_reader(schema: Any, model: Any, op: Any, readers: dict[int, list[Any]]) -> tuple[Any | None, Any] | None:
    """(the SQUEEZE or RESHAPE between, or None; the CAST or COMPLEX_ABS) that alone read the ``RFFT2D`` ``op``."""
    first = readers.get(op.outputs[0], [])
    if len(first) != 1:
        return None
    move = None
    if _opcode(schema, model, first[0])[0] in (schema.BuiltinOperator.SQUEEZE, schema.BuiltinOperator.RESHAPE):
        move, first = first[0], readers.get(first[0].outputs[0], [])
    if len(first) != 1 or _opcode(schema, model, first[0])[0] not in (schema.BuiltinOperator.CAST,
                                                                       schema.BuiltinOperator.COMPLEX_ABS):
        return None
    return move, first[0]


def _fft_as_matmuls(schema: Any, model: Any, graph: Any, op: Any,
                    readers: dict[int, list[Any]]) -> tuple[str, list[Any], list[Any]] | None:
    """For a 1-D ``RFFT2D`` read only through its real part (CAST to float32, a SQUEEZE or RESHAPE before it) or
    its magnitude (COMPLEX_ABS): ("real" or "magnitude", the ops that replace it, the ops they make redundant);
    None for any other FFT."""
    found = _fft_reader(schema, model, op, readers)
    lengths = _constant(model, graph, op.inputs[1], np.int32)
    signal = graph.tensors[op.inputs[0]]
    if (found is None or lengths is None or lengths.tolist()[:1] != [1]
            or list(signal.shape[-2:]) != [1, int(lengths[1])]):
        return None
    move, reader = found
    n = int(lengths[1])
    real = _opcode(schema, model, reader)[0] == schema.BuiltinOperator.CAST
    if real and graph.tensors[reader.outputs[0]].type != schema.TensorType.FLOAT32:
        return None
    if move is None and real:
        return None  # a CAST straight after the FFT: kept as it was (never seen in a converted model)
    if move is None:
        return "magnitude", _magnitude(schema, model, graph, op.inputs[0], n, reader.outputs[0]), [reader]
    for index in (op.outputs[0], move.outputs[0]):
        graph.tensors[index].type = schema.TensorType.FLOAT32
    move.outputs = list(reader.outputs)  # the CAST (a real value to float32) or COMPLEX_ABS is gone
    made = ([_dft_product(schema, model, graph, op.inputs[0], n, "cos", op.outputs[0])] if real
            else _magnitude(schema, model, graph, op.inputs[0], n, op.outputs[0]))
    return ("real" if real else "magnitude"), made, [reader]


def _ffts_as_matmuls(schema: Any, model: Any) -> tuple[int, int]:
    """Rewrite every 1-D RFFT2D of the main subgraph read through its real part or its magnitude; (real parts,
    magnitudes) rewritten."""
    graph = model.subgraphs[0]
    readers = _readers(graph)
    operators, dropped, counts = [], [], Counter[str]()
    for op in graph.operators:
        made = _fft_as_matmuls(schema, model, graph, op, readers) \
            if _opcode(schema, model, op)[0] == schema.BuiltinOperator.RFFT2D else None
        operators += [op] if made is None else made[1]
        if made is not None:
            dropped += made[2]
            counts[made[0]] += 1
    graph.operators = [op for op in operators if all(op is not d for d in dropped)]
    if counts:
        drop_unused_tensors(model, 0)
    return counts["real"], counts["magnitude"]


def readable_for_tf2onnx(source: Path, out: Path) -> Rewritten:
    """Write to ``out`` the TFLite at ``source`` with its DENSIFY ops folded, MediaPipe's transposed
    convolutions as builtins and its 1-D real FFTs as matrix products; returns what changed (``out`` is a plain
    copy when nothing did)."""
    import flatbuffers  # dependency of LiteRT's bindings

    schema = _schema()
    model = schema.ModelT.InitFromPackedBuf(source.read_bytes(), 0)
    done = Rewritten(fold_densify(model, source), _builtin_transpose_convs(schema, model),
                     *_ffts_as_matmuls(schema, model))
    if not done.describe():
        out.write_bytes(source.read_bytes())
        return done
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    out.write_bytes(bytes(builder.Output()))
    return done
